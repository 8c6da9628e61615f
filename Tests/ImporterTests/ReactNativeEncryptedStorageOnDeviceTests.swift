import ApexDumps
import ApexKeychain
import ApexMigration
import ExpoSecureStoreImporter
import Foundation
import ReactNativeEncryptedStorageImporter
import ReactNativeKeychainImporter
import Testing

/// The on-device source (`MigrationSource.database`): the library's items in the very keychain the package uses,
/// read as the library reads them (a generic password by account, with no service), migrated and removed.
@Suite("react-native-encrypted-storage on the device")
struct ReactNativeEncryptedStorageOnDeviceTests {
    @Test("its items become strings under the app's bundle id; another service's item with that account is not read")
    func onDevice() async throws {
        let database = InMemoryKeychainDatabase()
        let device = SimulatedDevice(bundleIdentifier: "com.example.app")
        func add(_ service: String, _ account: String, _ value: String, _ domain: ProtectionDomain = .ak) throws {
            try database.add(
                KeychainItem(
                    attributes: ItemAttributes(
                        service: service, account: account, accessGroup: device.defaultAccessGroup, creator: nil,
                        protectionDomain: domain),
                    value: Data(value.utf8)))
        }
        try add("", "session", "sample-device-0001")
        try add("", "pin", "sample-device-0002", .aku)
        // Another library's item with the same account: the library's getItem (by account only) could return it, the
        // importer takes only the items the library wrote, with no service.
        try add("com.example.other", "session", "sample-device-0003")
        let migration = Migration(
            id: .forTests,
            importers: [
                ExpoSecureStoreImporter(), ReactNativeKeychainImporter(), ReactNativeEncryptedStorageImporter(),
            ],
            source: .database(database, device: device), target: MigrationTarget(database: database, device: device),
            policy: MigrationPolicy(removeSource: true))
        let report = try await migration.run()
        let mine = report.items.filter { $0.source.library == .reactNativeEncryptedStorage }
        #expect(mine.count == 2)
        #expect(mine.allSatisfy { $0.action == .create && $0.result == .verified })
        let keychain = try Keychain(KeychainOptions(service: "com.example.app"), database: database, device: device)
        #expect(try await keychain.getItem("session") == "sample-device-0001")
        #expect(try await keychain.getItem("pin") == "sample-device-0002")
        #expect(report.items.filter { $0.source.library == .reactNativeKeychain }.count == 1)
        let left = try database.attributes(matching: ItemQuery()).filter { !$0.isApexItem && $0.service.isEmpty }
        #expect(left.isEmpty, "the verified source items are removed")
    }
}

import ApexDumps
import ApexKeychain
import ApexKeychainStore
import ApexMigration
import ApexTestSupport
import ExpoSecureStoreImporter
import Foundation
import ReactNativeKeychainImporter
import ReactNativeSensitiveInfoImporter
import Testing

/// react-native-sensitive-info's items in the very keychain the package writes to (the `.database` source): the
/// importers read them as the library's own queries see them (class, service and account; `gena` telling the
/// families apart), and every one moves in place.
@Suite("On-device migration: react-native-sensitive-info")
struct SensitiveInfoOnDeviceTests {
    @Test(
        "the sample's items move in place with the CLI's importers; the 6.x HMAC key is skipped and left alone",
        arguments: DatabaseKind.allCases)
    func sampleInPlace(kind: DatabaseKind) async throws {
        let device = SimulatedDevice(bundleIdentifier: "com.example.rnsiapp", teamIdentifier: "A1B2C3D4E5")
        let (database, _) = try OnDeviceMigrationTests.store([], kind: kind, device: device)
        try OnDeviceMigrationTests.load("react-native-sensitive-info/ios/keychain.plist", into: database)
        let migration = Migration(
            id: .forTests,
            importers: [ExpoSecureStoreImporter(), ReactNativeSensitiveInfoImporter(), ReactNativeKeychainImporter()],
            source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device),
            policy: MigrationPolicy(
                removeSource: true, protectedSourceItems: .readWithPrompt(Prompt(title: "Move your saved sign-in"))))
        let report = try await migration.run()
        #expect(report.items.allSatisfy { $0.source.library == .reactNativeSensitiveInfo })
        #expect(report.items.count == 11)
        let app = try Keychain(KeychainOptions(service: "app"), database: database, device: device)
        #expect(try await app.getItem("refreshToken") == "sample-token-0401")
        let modern = try Keychain(KeychainOptions(service: "default"), database: database, device: device)
        #expect(try await modern.getItem("apiKey") == "sample-api-key-0408")
        let left = try OnDeviceMigrationTests.foreign(database).map { "\($0.service)/\($0.account)" }
        guard kind == .secItem else {
            // The items without access control are turned into the package's in place. Those with access control
            // can't make room without the user: they are conflicts whose reason names the fix, a service of
            // their own, and they stay untouched.
            #expect(report.summary.create == 5 && report.summary.skipped == 1 && report.summary.conflict == 5)
            #expect(report.summary.verified == 5 && report.summary.failed == 0)
            let protected = report.items.filter { $0.action == .conflict }
            #expect(
                protected.allSatisfy { $0.cause == .heldByAnotherLibrary && $0.reason?.contains("serviceMap") == true })
            #expect(left.count == 6 && left.contains("default.rnsi.hmac/metadata"))
            // The fix: another run maps their services elsewhere.
            let moved = Migration(
                id: .forTests,
                importers: [
                    ExpoSecureStoreImporter(), ReactNativeSensitiveInfoImporter(), ReactNativeKeychainImporter(),
                ],
                source: .database(database, device: device),
                target: MigrationTarget(database: database, device: device),
                policy: MigrationPolicy(
                    removeSource: true,
                    importOptions: ImportOptions(
                        serviceMap: ["app": "app.migrated", "default": "default.migrated", "vault": "vault.migrated"]),
                    protectedSourceItems: .readWithPrompt(Prompt(title: "Move your saved sign-in"))))
            let second = try await moved.run()
            #expect(second.summary.verified == 5 && second.summary.failed == 0 && second.summary.conflict == 0)
            #expect(try OnDeviceMigrationTests.foreign(database).map(\.account) == ["metadata"])
            let info = try await Keychain(
                KeychainOptions(service: "default.migrated"), database: database, device: device
            )
            .getItemInfo("sessionKey")
            #expect(info?.accessControl == .biometryCurrentSet)
            return
        }
        // The iOS keychain doesn't disclose another library's access control, and the sample's protected items
        // have several: they stay, pending, and the reason says to name the access control.
        let protected = report.items.filter { $0.state == .pending }
        #expect(protected.count == 5 && protected.allSatisfy { $0.reason?.contains("disclose") == true })
        #expect(report.summary.verified == 5 && report.summary.skipped == 1 && report.summary.failed == 0)
        #expect(left.count == 6 && left.contains("default.rnsi.hmac/metadata"))
    }
}

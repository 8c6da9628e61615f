import ApexKeychain
import ApexMigration
import ExpoSecureStoreImporter
import Foundation
import ReactNativeEncryptedStorageImporter
import ReactNativeKeychainImporter
import ReactNativeSensitiveInfoImporter
import Testing

/// Issue 31, "The start-up path": each importer's `seed(_:into:device:)` puts items into a database exactly as its
/// library writes them on iOS, and the importer's own on-device source reads them back as that library's items:
/// with their key, value and mapped protection.
@Suite("Seeding the old libraries' items")
struct SeedingTests {
    let database = InMemoryKeychainDatabase()
    let device = SimulatedDevice(bundleIdentifier: "com.example.app", teamIdentifier: "ABCDE12345")

    /// One on-device run of `importer` that removes the source items (so that an item whose target is its own
    /// primary key is turned into the package's in place), prompting once for the items with access control; every
    /// item it found must be its library's and verified. The items by target service and key.
    func migrate(
        _ importer: any Importer, _ options: ImportOptions = ImportOptions()
    ) async throws -> [String: MigrationReport.Item] {
        let report = try await Migration(
            id: .forTests, importers: [importer], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device),
            policy: MigrationPolicy(
                removeSource: true, importOptions: options,
                protectedSourceItems: .readWithPrompt(Prompt(title: "Move your sign-in")))
        ).run()
        #expect(report.items.allSatisfy { $0.source.library == importer.library && $0.result == .verified })
        return Dictionary(report.items.compactMap { item in item.target.map { ("\($0.service)/\($0.key)", item) } }) {
            a, _ in a
        }
    }

    func keychain(_ service: String) throws -> Keychain {
        try Keychain(KeychainOptions(service: service), database: database, device: device)
    }

    @Test("react-native-keychain: the bundle id or options.service, internet credentials, pdmn and access control")
    func reactNativeKeychain() async throws {
        try ReactNativeKeychainImporter.seed(
            [
                .init(username: "seed-user-0001", password: "seed-pass-0001"),
                .init(
                    username: "seed-user-0002", password: "seed-pass-0002", service: "com.example.vault",
                    accessible: .aku, accessControl: [.biometryCurrentSet, .or, .devicePasscode]),
                .internetCredentials(
                    server: "api.example.com", username: "seed-user-0003", password: "seed-pass-0003",
                    accessible: .cku),
            ], into: database, device: device)
        let items = try await migrate(ReactNativeKeychainImporter())
        #expect(items.count == 3)
        let plain = try #require(items["com.example.app/credentials"])
        #expect(plain.source.service == "com.example.app" && plain.source.accessGroup == device.defaultAccessGroup)
        #expect(plain.target?.accessible == .afterFirstUnlock && plain.target?.accessControl == AccessControl.none)
        let vault = try #require(items["com.example.vault/credentials"])
        #expect(vault.target?.accessible == .whenUnlockedThisDeviceOnly)
        #expect(vault.target?.accessControl == .biometryCurrentSetOrPasscode)
        let internet = try #require(items["com.example.app/credentials:api.example.com"])
        #expect(internet.source.server == "api.example.com" && internet.source.class == .known(.internetPassword))
        #expect(internet.target?.accessible == .afterFirstUnlockThisDeviceOnly)
        let app = try keychain("com.example.app")
        #expect(
            try await app.getCredentials() == Credentials(username: "seed-user-0001", password: "seed-pass-0001"))
        #expect(
            try await app.getCredentials(CredentialsGetOptions(server: "api.example.com"))
                == Credentials(username: "seed-user-0003", password: "seed-pass-0003"))
        let read = try await keychain("com.example.vault").getCredentials(
            CredentialsGetOptions(prompt: Prompt(title: "Unlock")))
        #expect(read == Credentials(username: "seed-user-0002", password: "seed-pass-0002"))
    }

    @Test("expo-secure-store: ':no-auth' and ':auth', the legacy bare service, the key as data in acct and gena")
    func expoSecureStore() async throws {
        try ExpoSecureStoreImporter.seed(
            [
                .init(key: "session", value: "seed-value-0101"),
                .init(key: "pin", value: "seed-value-0102", keychainAccessible: .akpu, requireAuthentication: true),
                .init(key: "old", value: "seed-value-0103", keychainService: "legacy", legacy: true),
            ], into: database, device: device)
        let services = Set(database.allItems().map(\.attributes.service))
        #expect(services == ["app:no-auth", "app:auth", "legacy"])
        #expect(database.allItems().allSatisfy { $0.attributes.generic == Data($0.attributes.account.utf8) })
        let items = try await migrate(ExpoSecureStoreImporter())
        #expect(items.count == 3)
        let session = try #require(items["app/session"])
        #expect(session.source.service == "app:no-auth")
        #expect(session.target?.accessible == .whenUnlocked && session.target?.accessControl == AccessControl.none)
        let pin = try #require(items["app/pin"])
        #expect(pin.source.service == "app:auth")
        #expect(
            pin.target?.accessible == .whenPasscodeSetThisDeviceOnly && pin.target?.accessControl == .biometryCurrentSet
        )
        #expect(items["legacy/old"]?.source.service == "legacy")
        #expect(try await keychain("app").getItem("session") == "seed-value-0101")
        #expect(
            try await keychain("app").getItem("pin", GetOptions(prompt: Prompt(title: "Unlock"))) == "seed-value-0102")
        #expect(try await keychain("legacy").getItem("old") == "seed-value-0103")
    }

    @Test("react-native-sensitive-info: service 'app', Apple's default 'ak', touchID's akpu and flags")
    func sensitiveInfo() async throws {
        try ReactNativeSensitiveInfoImporter.seed(
            [
                .init(key: "refresh", value: "seed-value-0201"),
                .init(key: "cached", value: "seed-value-0202", accessible: .ck),
                .init(key: "guarded", value: "seed-value-0203", keychainService: "vault", touchID: .userPresence),
            ], into: database, device: device)
        // Another service than `app` is the library's only when the migration says so; an item with access control
        // can't be turned into the package's in place without the user, so it moves to a service of its own.
        let items = try await migrate(
            ReactNativeSensitiveInfoImporter(),
            ImportOptions(serviceMap: ["vault": "vault.migrated"], libraries: [.reactNativeSensitiveInfo]))
        #expect(items.count == 3)
        #expect(items["app/refresh"]?.target?.accessible == .whenUnlocked)
        #expect(items["app/cached"]?.target?.accessible == .afterFirstUnlock)
        let guarded = try #require(items["vault.migrated/guarded"])
        #expect(guarded.source.service == "vault")
        #expect(guarded.target?.accessible == .whenPasscodeSetThisDeviceOnly)
        #expect(guarded.target?.accessControl == .biometryAnyOrPasscode)
        #expect(try await keychain("app").getItem("refresh") == "seed-value-0201")
        #expect(try await keychain("app").getItem("cached") == "seed-value-0202")
        #expect(
            try await keychain("vault.migrated").getItem("guarded", GetOptions(prompt: Prompt(title: "Unlock")))
                == "seed-value-0203")
    }

    @Test("react-native-encrypted-storage: no service, 'ak', nothing else")
    func encryptedStorage() async throws {
        try ReactNativeEncryptedStorageImporter.seed(
            [.init(key: "session", value: "seed-value-0301"), .init(key: "pin", value: "seed-value-0302")],
            into: database, device: device)
        let items = try await migrate(ReactNativeEncryptedStorageImporter())
        #expect(items.count == 2)
        #expect(items.values.allSatisfy { $0.source.service == "" && $0.target?.accessible == .whenUnlocked })
        #expect(items.values.allSatisfy { $0.target?.service == "com.example.app" })
        #expect(try await keychain("com.example.app").getItem("session") == "seed-value-0301")
        #expect(try await keychain("com.example.app").getItem("pin") == "seed-value-0302")
    }

    @Test("a second seed does what the library's second set does")
    func secondWrites() throws {
        // react-native-keychain keeps one credential per service.
        try ReactNativeKeychainImporter.seed(
            [.init(username: "seed-user-a", password: "seed-a"), .init(username: "seed-user-b", password: "seed-b")],
            into: database, device: device)
        #expect(database.allItems().map(\.attributes.account) == ["seed-user-b"])
        // expo-secure-store keeps one spelling of a key; an update keeps the first write's protection.
        try ExpoSecureStoreImporter.seed(
            [
                .init(key: "k", value: "seed-1", requireAuthentication: true),
                .init(key: "k", value: "seed-2"), .init(key: "k", value: "seed-3", keychainAccessible: .cku),
            ], into: database, device: device)
        let expo = database.allItems().filter { $0.attributes.generic != nil }
        #expect(expo.map(\.attributes.service) == ["app:no-auth"] && expo.first?.value == Data("seed-3".utf8))
        #expect(expo.first?.attributes.protectionDomain == .ak)
        // react-native-sensitive-info (5.5.6+) updates the value in place too.
        try ReactNativeSensitiveInfoImporter.seed(
            [.init(key: "s", value: "seed-4", accessible: .aku), .init(key: "s", value: "seed-5")],
            into: database, device: device)
        let rnsi = database.allItems().filter { $0.attributes.service == "app" }
        #expect(rnsi.count == 1 && rnsi.first?.attributes.protectionDomain == .aku)
        #expect(rnsi.first?.value == Data("seed-5".utf8))
        // react-native-encrypted-storage deletes its key in every service first.
        try ReactNativeEncryptedStorageImporter.seed([.init(key: "s", value: "seed-6")], into: database, device: device)
        #expect(database.allItems().filter { $0.attributes.account == "s" }.map(\.attributes.service) == [""])
    }
}

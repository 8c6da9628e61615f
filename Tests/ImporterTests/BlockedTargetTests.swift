import ApexDumps
import ApexKeychain
import ApexMigration
import ApexTestSupport
import ExpoSecureStoreImporter
import Foundation
import ReactNativeEncryptedStorageImporter
import ReactNativeKeychainImporter
import Testing

/// Issue 14, item 2: a `blocked` item keeps the target it was meant for (service, key, kind), with the protection
/// it would have had when that was mapped, and no protection when the source's has no equivalent. Only an item
/// with no target name at all (an unknown default service, a name that is not UTF-8 or that the package can't
/// hold) has none.
@Suite struct BlockedTargetTests {
    static let app = ImportOptions(bundleID: "com.example.app")
    static let prefs = "/data/data/com.example.app/shared_prefs/"

    static func rnk(_ records: [KeychainRecord], _ options: ImportOptions = app) throws -> [SourceItem] {
        try ReactNativeKeychainImporter().importItems(from: [keychainDump(records)], options: options)
    }

    static func reason(_ item: SourceItem) -> String? {
        if case .blocked(let why) = item.verdict { return why }
        return nil
    }

    // MARK: react-native-keychain, iOS

    @Test func iosProtectionWithNoEquivalentKeepsItsTargetWithoutProtection() throws {
        var undecoded = rnkRecord(service: "undecoded", group: "ABCDE12345.com.example.shared")
        undecoded.extra["accc"] = "hex:310d300b"
        let records = [
            undecoded,
            rnkRecord(service: "both", flags: [.biometryAny, .devicePasscode, .and], location: "item 2"),
            rnkRecord(
                "inet", service: nil, server: "https://example.com", flags: [.applicationPassword], location: "item 3"),
        ]
        let items = try Self.rnk(records)
        #expect(items.map { Self.reason($0) != nil } == [true, true, true])
        #expect(
            items.map(\.target) == [
                .unknownProtection(
                    service: "undecoded", key: "credentials", kind: .credentials,
                    accessGroup: "ABCDE12345.com.example.shared"),
                .unknownProtection(service: "both", key: "credentials", kind: .credentials),
                .unknownProtection(
                    service: "com.example.app", key: "credentials:https://example.com", kind: .credentials),
            ])
        #expect(
            items[0].notes.contains(
                "kept in access group 'ABCDE12345.com.example.shared', which is not the app's default group"))
    }

    @Test func iosDamagedValueKeepsItsTargetWithItsProtection() throws {
        var damaged = rnkRecord(service: "damaged", pdmn: "aku")
        damaged.value = .damaged("the data is truncated")
        let item = try #require(try Self.rnk([damaged]).first)
        #expect(Self.reason(item) == "damaged value: the data is truncated")
        #expect(
            item.target
                == TargetItem(
                    service: "damaged", key: "credentials", kind: .credentials,
                    options: SetOptions(
                        accessible: .whenUnlockedThisDeviceOnly, accessControl: AccessControl.none,
                        synchronizable: false)))
    }

    @Test func iosItemsWithNoTargetNameHaveNoTarget() throws {
        var notUTF8 = rnkRecord()
        notUTF8.service = .data(Data([0xC3]))
        let records = [
            notUTF8,
            rnkRecord(service: "", location: "item 2"),
            rnkRecord(service: String(repeating: "s", count: 257), location: "item 3"),
        ]
        // An empty service is react-native-encrypted-storage's layout: react-native-keychain's importer leaves it
        // to that importer (which claims it) instead of blocking it.
        let items = try Self.rnk(records)
        #expect(items.map(\.origin.location) == [notUTF8.location, "item 3"])
        #expect(items.map { Self.reason($0) != nil } == [true, true])
        #expect(items.allSatisfy { $0.target == nil })
        let encryptedStorage = try ReactNativeEncryptedStorageImporter().importItems(
            from: [keychainDump(records)], options: ImportOptions())
        #expect(encryptedStorage.map(\.origin.location) == ["item 2"])
        // No bundle id and no access group to infer it from: internet credentials have no service to go to.
        let inet = try Self.rnk(
            [rnkRecord("inet", service: nil, server: "https://example.com", group: nil)], ImportOptions())
        guard case .needsInput(let missing) = inet[0].verdict else {
            Issue.record("\(inet[0].verdict)")
            return
        }
        #expect(missing.contains("--bundle-id"))
        #expect(inet[0].target == nil)
    }

    // MARK: react-native-keychain, Android

    @Test func androidUnknownCipherKeepsItsTargetWithoutProtection() throws {
        let dump = preferencesDump(
            Self.prefs + "RN_KEYCHAIN.xml",
            [
                ("auth:u", "dXNlcg=="), ("auth:p", "cGFzcw=="), ("auth:c", "KeystoreFuture"),
                (":u", "dXNlcg=="), (":p", "cGFzcw=="), (":c", "KeystoreFuture"),
            ])
        let items = try ReactNativeKeychainImporter().importItems(
            from: [dump], options: ImportOptions(serviceMap: ["auth": "session"]))
        let auth = try #require(items.first { $0.source.service == "auth" })
        #expect(Self.reason(auth) == "unknown cipher 'KeystoreFuture': its protection can't be mapped")
        #expect(auth.target == .unknownProtection(service: "session", key: "credentials", kind: .credentials))
        #expect(auth.notes.contains("service 'auth' is written to 'session', as the service map says"))
        // The default service "" without --bundle-id: no service to go to.
        let unnamed = try #require(items.first { $0.source.service == "" })
        #expect(Self.reason(unnamed) == "unknown cipher 'KeystoreFuture': its protection can't be mapped")
        #expect(unnamed.target == nil)
        // With it, the target is known.
        let named = try ReactNativeKeychainImporter().importItems(from: [dump], options: Self.app)
        #expect(
            named.first { $0.source.service == "" }?.target
                == .unknownProtection(
                    service: "com.example.app", key: "credentials", kind: .credentials))
    }

    // MARK: expo-secure-store

    @Test func expoIOSBlockedItemsKeepTheirTargets() throws {
        var damaged = Expo.item("3", service: "app", key: "damaged", pdmn: "ck")
        damaged.value = .damaged("the data is truncated")
        var damagedLong = Expo.item("4", service: "app", key: String(repeating: "k", count: 257))
        damagedLong.value = .damaged("the data is truncated")
        let items = try Expo.run(
            [
                Expo.keychain([
                    Expo.item("1", service: "app:auth", key: "both", flags: [.biometryAny, .devicePasscode, .and]),
                    Expo.item("2", service: "app", key: "synced", pdmn: "ak", flags: [.biometryAny], sync: true),
                    damaged, damagedLong,
                ])
            ], Expo.app)
        #expect(items.map { Self.reason($0) != nil } == [true, true, true, true])
        #expect(items[0].target == .unknownProtection(service: "app", key: "both", kind: .string))
        // Synchronizable with access control: the package has no such protection.
        #expect(items[1].target == .unknownProtection(service: "app", key: "synced", kind: .string))
        #expect(
            items[2].target
                == TargetItem(
                    service: "app", key: "damaged", kind: .string,
                    options: SetOptions(
                        accessible: .afterFirstUnlock, accessControl: AccessControl.none, synchronizable: false)))
        // A key the package can't hold: no target, even when the item is blocked for its value.
        #expect(items[3].target == nil)
    }

    @Test func expoAndroidUnreadableAuthenticationKeepsItsTargetWithoutProtection() throws {
        let items = try Expo.run([
            Expo.prefs([
                ("key_v1-token", Expo.newEntry(auth: "\"pin\"")),
                ("custom-secret", Expo.newEntry(alias: "custom", auth: "7")),
            ])
        ])
        #expect(items.map { Self.reason($0) != nil } == [true, true])
        #expect(
            items.map(\.target) == [
                .unknownProtection(service: "app", key: "token", kind: .string),
                .unknownProtection(service: "custom", key: "secret", kind: .string),
            ])
    }
}

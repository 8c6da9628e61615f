import ApexDumps
import ApexKeychain
import ApexMigration
import ApexTestSupport
import Foundation
import ReactNativeSensitiveInfoImporter
import Testing

@Suite struct ReactNativeSensitiveInfoAndroidTests {
    let importer = ReactNativeSensitiveInfoImporter()
    static let folder = "react-native-sensitive-info/android/shared_prefs/"

    func rows(_ items: [SourceItem]) -> [String] {
        items.map { item in
            let value: String =
                switch item.value {
                case .value: "value"
                case .sealed: "sealed"
                case .credentials: "credentials"
                }
            return "\(item.source.account ?? "") \(value) → \(RNSI.target(item))"
        }
    }

    @Test("the generated files: plaintext create, touchID / alpha / 5.6.x / 6.x sealed with protection mapped")
    func sampleFiles() throws {
        let names = [
            "shared_preferences.xml", "app.xml", "keystore.xml", "sensitive_info.xml",
            "sensitive_info_37a8eec1ce19687d.xml", "sensitive_info_df384ae97c77ad30.xml",
        ]
        let dumps = try names.map { try RNSI.sample(Self.folder + $0) }
        let items = try importer.importItems(from: dumps, options: ImportOptions())
        #expect(
            rows(items) == [
                "authToken value → app/authToken afterFirstUnlock none",
                "userId value → app/userId afterFirstUnlock none",
                "pin sealed → app/pin whenPasscodeSetThisDeviceOnly biometryCurrentSet",
                "alphaToken sealed → app/alphaToken afterFirstUnlockThisDeviceOnly none",
                "legacyToken value → app/legacyToken afterFirstUnlock none",
                "keystoreToken sealed → app/keystoreToken afterFirstUnlockThisDeviceOnly none",
                "alphaSecret sealed → app/alphaSecret afterFirstUnlockThisDeviceOnly none",
                "authToken sealed → default/authToken whenPasscodeSetThisDeviceOnly biometryCurrentSetOrPasscode",
                "theme sealed → default/theme afterFirstUnlockThisDeviceOnly none",
                "walletSeed sealed → vault/walletSeed whenPasscodeSetThisDeviceOnly passcode",
                "sessionKey sealed → default/sessionKey whenPasscodeSetThisDeviceOnly biometryCurrentSet",
                "apiKey sealed → default/apiKey afterFirstUnlockThisDeviceOnly none",
                "cardToken sealed → -",
            ])
        #expect(items[0].value == .value(Data("sample-token-0500".utf8)))
        #expect(items[2].value.description.contains("MyAesKeyAlias"))
        #expect(items[3].value.description.contains("MySharedPreferenceKeyAlias"))
        #expect(items[5].value.description.contains("SHARED_PREFERENCE_KEY"))
        // 5.6.x: the alias is the first 32 hex digits of SHA-256("default::authToken").
        #expect(items[7].value.description.contains("'159201e464afe90a227c520086d9693b'"))
        #expect(SHA256.hex(Array("default::authToken".utf8)).hasPrefix("159201e464afe90a227c520086d9693b"))
        #expect(items[7].source.service == "default")
        #expect(items.last?.verdict.isNeedsInput == true, "a service only the app can name: --service-map")
        // Naming the service with the map finds the 6.x file of `payments`.
        let mapped = try importer.importItems(
            from: [dumps[5]], options: ImportOptions(serviceMap: ["payments": "pay"]))
        // biometryAny (accessControl), not invalidated by a new enrollment: biometryAny.
        #expect(rows(mapped) == ["cardToken sealed → pay/cardToken whenPasscodeSetThisDeviceOnly biometryAny"])
        // Its requiresAuthentication is false: the note says the stronger reading was taken, not that it asks.
        #expect(mapped[0].notes.contains { $0.hasPrefix("requiresAuthentication false, but accessControl asks") })
        #expect(!mapped[0].notes.contains { $0.hasPrefix("authentication required") })
        #expect(SHA256.hex(Array("payments".utf8)).hasPrefix("df384ae97c77ad30"))
    }

    @Test("recognition: by name and content; plain app.xml and custom names only with --from; never others' files")
    func recognition() {
        func dump(_ name: String, _ entries: [PreferenceEntry]) -> Dump {
            Dump(
                path: "/data/data/app/shared_prefs/\(name)", format: .sharedPreferences, content: .preferences(entries))
        }
        let plain = [PreferenceEntry(name: "token", value: .string("v"))]
        let touchID = [
            PreferenceEntry(name: "token", value: .string("AAECAwQFBgcICQoLDA0ODw==\n]AAECAwQFBgcICQoLDA0ODw==\n    "))
        ]
        let alpha = [PreferenceEntry(name: "token", value: .string("AAECAwQFBgcICQoLDA0ODxAR\n    "))]
        let withBoolean = plain + [PreferenceEntry(name: "flag", value: .boolean(true))]
        let cases: [(Dump, auto: Bool, named: Bool)] = [
            (dump("shared_preferences.xml", plain), true, true),
            (dump("shared_preferences.xml", withBoolean), false, false),
            (dump("app.xml", plain), false, true),
            (dump("app.xml", alpha), true, true),
            (dump("keystore.xml", alpha), true, true),
            (dump("custom.xml", plain), false, true),
            (dump("custom.xml", touchID), true, true),
            // Every value sealed: recognised by content under any name (issue 31).
            (dump("custom.xml", alpha), true, true),
            (dump("com.example.app_preferences.xml", plain), false, false),
            (dump("RN_KEYCHAIN.xml", plain), false, false),
            (dump("SecureStore.xml", plain), false, false),
            (dump("RN_ENCRYPTED_STORAGE_SHARED_PREF.xml", plain), false, false),
            (dump("backup.xml", [PreferenceEntry(name: "auth:u", value: .string("x"))]), false, false),
            (
                dump(
                    "esp.xml",
                    [
                        PreferenceEntry(
                            name: "__androidx_security_crypto_encrypted_prefs_key_keyset__", value: .string("x"))
                    ]
                ), false, false
            ),
            (dump("sensitive_info.xml", plain), true, true),
            (dump("sensitive_info_0123456789abcdef.xml", plain), true, true),
            (dump("sensitive_info_0123456789ABCDEF.xml", plain), false, true),
            (dump("rnsi.key_versions.xml", [PreferenceEntry(name: "default", value: .int(2))]), true, true),
        ]
        for (dump, auto, named) in cases {
            #expect(ReactNativeSensitiveInfoImporter.recognises(dump) == auto, "\(dump.fileName) auto")
            #expect(
                ReactNativeSensitiveInfoImporter.recognises(dump, library: .reactNativeSensitiveInfo) == named,
                "\(dump.fileName) --from")
        }
        let ios = keychainDump([RNSI.record()])
        #expect(!ReactNativeSensitiveInfoImporter.recognises(ios, library: .reactNativeSensitiveInfo))
    }

    @Test("a custom-named file is claimed only with --from, and says so")
    func customFileNeedsFrom() throws {
        let dump = preferencesDump("/data/data/app/shared_prefs/secure.xml", [("token", "rnsi-plain-1")])
        #expect(try importer.importItems(from: [dump], options: ImportOptions()).isEmpty)
        let items = try importer.importItems(from: [dump], options: RNSI.named)
        #expect(items.count == 1 && items[0].verdict == .migrate)
        #expect(items[0].notes.contains { $0.contains("--from react-native-sensitive-info") })
    }

    @Test("malformed 5.6.x / 6.x entries are skipped with a reason naming no value; key versions name services")
    func malformedEntries() throws {
        let v5 = preferencesDump(
            "/p/shared_prefs/sensitive_info.xml",
            [
                ("default::broken", "{\"ciphertext\": \"rnsi-secret-cut"),
                ("default::notJSON", "rnsi-secret-plain"),
                ("odd", #"{"ciphertext":"AA==","iv":"AA==","version":3,"requiresAuthentication":true}"#),
            ])
        let items = try importer.importItems(from: [v5], options: ImportOptions())
        #expect(items.count == 3)
        #expect(items[0].verdict.isSkipped && items[1].verdict.isSkipped)
        // No `service::key` and no JSON service: taken as the key with an unknown service, which the service
        // map can name → needs input (pending), not blocked for good.
        #expect(items[2].verdict.isNeedsInput)
        expectNoSecrets(items, ["rnsi-secret-cut", "rnsi-secret-plain"])
        // A 6.x file whose service is only in rnsi.key_versions.xml.
        let hash = String(SHA256.hex(Array("wallet".utf8)).prefix(16))
        let v6 = preferencesDump(
            "/p/shared_prefs/sensitive_info_\(hash).xml",
            [("seed", #"{"alias":"a","ciphertext":"AA==","iv":"AA==","requiresAuth":false,"metadata":{}}"#)])
        let versions = Dump(
            path: "/p/shared_prefs/rnsi.key_versions.xml", format: .sharedPreferences,
            content: .preferences([PreferenceEntry(name: "wallet", value: .int(3))]))
        let found = try importer.importItems(from: [v6, versions], options: ImportOptions())
        #expect(found.map { RNSI.target($0) } == ["wallet/seed afterFirstUnlockThisDeviceOnly none", "-"])
        #expect(found[1].verdict.isSkipped)
    }

    @Test("an upgrade's stale copies are shadowed by the file the newer version reads")
    func upgradeCopies() throws {
        let old = preferencesDump("/p/shared_prefs/app.xml", [("token", "rnsi-old"), ("only", "rnsi-only")])
        let classic = preferencesDump("/p/shared_prefs/shared_preferences.xml", [("token", "rnsi-new")])
        let entry = #"{"key":"k","service":"default","ciphertext":"AA==","iv":"AA==","version":3}"#
        let v5 = preferencesDump("/p/shared_prefs/sensitive_info.xml", [("default::k", entry)])
        let v6 = preferencesDump(
            "/p/shared_prefs/sensitive_info_37a8eec1ce19687d.xml",
            [("k", #"{"alias":"a","ciphertext":"AA==","iv":"AA==","requiresAuth":false}"#)])
        let items = try importer.importItems(from: [old, classic, v5, v6], options: RNSI.named)
        #expect(items.map(\.origin.path).count == 5)
        #expect(items[0].verdict.isShadowed && items[1].verdict == .migrate && items[2].verdict == .migrate)
        #expect(items[3].verdict.isShadowed && items[4].verdict == .migrate)
        guard case .shadowed(let reason) = items[3].verdict else { return }
        #expect(reason.contains("sensitive_info_37a8eec1ce19687d.xml entry 1"))
    }
}

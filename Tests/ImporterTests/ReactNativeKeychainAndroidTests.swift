import ApexDumps
import ApexKeychain
import ApexMigration
import ApexTestSupport
import ExpoSecureStoreImporter
import Foundation
import ReactNativeKeychainImporter
import Testing

/// react-native-keychain on Android: the real Conceal fixture, and generated files of every version variant.
@Suite struct ReactNativeKeychainAndroidTests {
    let importer = ReactNativeKeychainImporter()
    static let prefs = "/data/data/com.example.app/shared_prefs/"
    static let datastore = "/data/data/com.example.app/files/datastore/"

    /// The files of a `rnk-generated/<folder>`, as dumps at their device paths.
    static func generated(_ folder: String, _ files: [String]) throws -> [Dump] {
        try files.map { name in
            let fixture = "rnk-generated/\(folder)/\(name)"
            return name.hasSuffix(".preferences_pb")
                ? try ImporterFixtures.dataStore(fixture, as: datastore + name)
                : try ImporterFixtures.sharedPreferences(fixture, as: prefs + name)
        }
    }

    static func item(_ items: [SourceItem], _ service: String, path: String? = nil) throws -> SourceItem {
        try #require(items.first { $0.source.service == service && (path == nil || $0.origin.path.hasSuffix(path!)) })
    }

    static func credentials(_ item: SourceItem) throws -> (username: String, password: String) {
        guard case .credentials(let username, let password) = item.value else {
            Issue.record("expected credentials, found \(item.value)")
            throw CancellationError()
        }
        return (username, password)
    }

    // MARK: - The real fixture

    @Test func realConcealFixtureDecryptsToThePublishedHashes() throws {
        let dumps = [
            try ImporterFixtures.sharedPreferences(
                "rnkeychain-conceal-eclipse7-RN_KEYCHAIN.xml", as: Self.prefs + "RN_KEYCHAIN.xml"),
            try ImporterFixtures.sharedPreferences(
                "rnkeychain-conceal-eclipse7-crypto.KEY_256.xml", as: Self.prefs + "crypto.KEY_256.xml"),
        ]
        let items = try importer.importItems(from: dumps, options: ImportOptions(bundleID: "com.example.app"))
        #expect(items.map(\.source.service) == ["staging", ""])
        let expected: [(String, Int, String, Int, String)] = [
            (
                "", 35, "d345035c8025be1b81acf03c992c0127e41729d443b55e745ad3457fa05e84a9",
                8, "195f62edd40a1d9b0c6407104596d6c29e2b408ecc1cc964e803376917ab1fd0"
            ),
            (
                "staging", 14, "02a2320e115ed345a701f9c7acf83650d5afd11689f46f08c8b2cb84a7ff283f",
                852, "eab3c020ad4111cf8a3352588c4fefd26de1246e9d5f5421591ca7e924cbf1cd"
            ),
        ]
        var secrets: [String] = []
        for (service, userLength, userHash, passLength, passHash) in expected {
            let item = try Self.item(items, service)
            let (username, password) = try Self.credentials(item)
            #expect(username.utf8.count == userLength && SHA256.hex(username.utf8) == userHash)
            #expect(password.utf8.count == passLength && SHA256.hex(password.utf8) == passHash)
            #expect(item.source.account == username)
            #expect(item.source.protection == ["cipher": "FacebookConceal"])
            #expect(item.verdict == .migrate)
            #expect(item.notes.contains { $0.contains("react-native-keychain 10 can no longer read") })
            secrets += [username, password]
        }
        let defaultItem = try Self.item(items, "")
        #expect(
            defaultItem.target
                == TargetItem(
                    service: "com.example.app", key: "credentials", kind: .credentials,
                    options: SetOptions(accessible: .afterFirstUnlock, accessControl: AccessControl.none)))
        #expect(
            defaultItem.origin
                == SourceOrigin(
                    path: Self.prefs + "RN_KEYCHAIN.xml", format: .sharedPreferences,
                    location: #"entries ":u", ":p", ":c""#))
        #expect(try Self.item(items, "staging").target?.service == "staging")
        expectNoSecrets(items, secrets)
    }

    @Test func realFixtureWithoutBundleIDHoldsOnlyTheDefaultService() throws {
        let dumps = [
            try ImporterFixtures.sharedPreferences(
                "rnkeychain-conceal-eclipse7-RN_KEYCHAIN.xml", as: Self.prefs + "RN_KEYCHAIN.xml"),
            try ImporterFixtures.sharedPreferences(
                "rnkeychain-conceal-eclipse7-crypto.KEY_256.xml", as: Self.prefs + "crypto.KEY_256.xml"),
        ]
        let items = try importer.importItems(from: dumps, options: ImportOptions())
        let defaultItem = try Self.item(items, "")
        guard case .needsInput(let reason) = defaultItem.verdict else {
            Issue.record("expected needsInput, found \(defaultItem.verdict)")
            return
        }
        #expect(reason.contains("--bundle-id"))
        #expect(defaultItem.target == nil)
        #expect(try Self.item(items, "staging").verdict == .migrate)
        // --service-map names the default service too.
        let mapped = try importer.importItems(from: dumps, options: ImportOptions(serviceMap: ["": "main"]))
        #expect(try Self.item(mapped, "").target?.service == "main")
    }

    /// Without the key file the value can't be read, but a run given it can: the items wait (`needsInput`,
    /// pending), where before they were sealed for good and the run marked itself complete.
    @Test func concealWithoutTheKeyFileNeedsIt() throws {
        let dumps = [
            try ImporterFixtures.sharedPreferences(
                "rnkeychain-conceal-eclipse7-RN_KEYCHAIN.xml", as: Self.prefs + "RN_KEYCHAIN.xml")
        ]
        let items = try importer.importItems(from: dumps, options: ImportOptions(bundleID: "com.example.app"))
        for item in items {
            #expect(
                item.value
                    == .sealed("decrypting FacebookConceal needs shared_prefs/crypto.KEY_256.xml, which was not given"))
            #expect(item.source.account == nil)
            #expect(item.target?.key == "credentials")
            #expect(
                item.verdict
                    == .needsInput(
                        "decrypting FacebookConceal needs shared_prefs/crypto.KEY_256.xml, which was not given"))
        }
    }

    @Test func concealWithAnotherKeyDoesNotVerify() throws {
        let dumps = [
            try ImporterFixtures.sharedPreferences(
                "rnkeychain-conceal-eclipse7-RN_KEYCHAIN.xml", as: Self.prefs + "RN_KEYCHAIN.xml"),
            try ImporterFixtures.sharedPreferences(
                "rnk-generated/v8-sharedprefs/crypto.KEY_256.xml", as: Self.prefs + "crypto.KEY_256.xml"),
        ]
        let items = try importer.importItems(from: dumps, options: ImportOptions(bundleID: "com.example.app"))
        for item in items {
            guard case .sealed(let reason) = item.value else {
                Issue.record("expected sealed, found \(item.value)")
                continue
            }
            #expect(reason.contains("GCM tag does not verify"))
            #expect(item.verdict == .needsInput(reason), "the right key file would open it")
        }
    }

    /// With the right key file, an entry whose tag fails is damaged: sealed for good, not waiting for a key file
    /// that would never open it (it kept the migration pending on every run).
    @Test func damagedConcealEntryBesideGoodOnesIsSealed() throws {
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples/react-native-keychain/android/shared_prefs")
        let file = try DumpReader.read(path: samples.appendingPathComponent("RN_KEYCHAIN.xml").path)
        let key = try DumpReader.read(path: samples.appendingPathComponent("crypto.KEY_256.xml").path)
        guard case .preferences(let entries) = file.content else {
            Issue.record("not a preferences file")
            return
        }
        // One character of legacy's password changed: its ciphertext no longer matches its tag.
        let damaged: [(String, String)] = entries.compactMap { entry in
            guard case .string(let text) = entry.value else { return nil }
            guard entry.name == "legacy:p" else { return (entry.name, text) }
            var bytes = Array(text.utf8)
            bytes[20] = bytes[20] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            return (entry.name, String(decoding: bytes, as: UTF8.self))
        }
        let items = try importer.importItems(
            from: [preferencesDump(Self.prefs + "RN_KEYCHAIN.xml", damaged), key],
            options: ImportOptions(bundleID: "com.example.app"))
        let legacy = try Self.item(items, "legacy")
        #expect(legacy.verdict == .migrate)
        guard case .sealed(let reason) = legacy.value else {
            Issue.record("expected sealed, found \(legacy.value)")
            return
        }
        #expect(reason.hasSuffix("so this one is damaged"))
        if case .credentials = try Self.item(items, "staging").value {} else { Issue.record("staging still opens") }
    }

    @Test func malformedKeyFileThrows() throws {
        let key = preferencesDump(Self.prefs + "crypto.KEY_256.xml", [("cipher_key", "c2hvcnQ=\n")])
        #expect(throws: ImportError.self) { try importer.importItems(from: [key], options: ImportOptions()) }
    }

    // MARK: - Generated variants

    @Test func v8SharedPreferences() throws {
        let dumps = try Self.generated("v8-sharedprefs", ["RN_KEYCHAIN.xml", "crypto.KEY_256.xml"])
        let items = try importer.importItems(from: dumps, options: ImportOptions(bundleID: "com.example.app"))
        #expect(
            items.map(\.source.service) == [
                "", "https://api.example.com:8443", "legacy", "aes", "bio", "incomplete", "future",
            ])

        let first = try Self.item(items, "")
        #expect(try Self.credentials(first) == ("rnkgen-default-user", "rnkgen-default-pass-0001"))
        #expect(first.target?.service == "com.example.app")

        // A service containing ':' (the last two characters are stripped), and Base64 wrapped over lines.
        let api = try Self.item(items, "https://api.example.com:8443")
        #expect(
            try Self.credentials(api) == (
                "rnkgen-api-user", "rnkgen-long-password-" + String(repeating: "0123456789abcdef", count: 5)
            ))
        #expect(api.target?.service == "https://api.example.com:8443")
        #expect(
            api.origin.location
                == #"entries "https://api.example.com:8443:u", "https://api.example.com:8443:p", "https://api.example.com:8443:c""#
        )
        #expect(api.notes.contains { $0.contains("setInternetCredentials") })

        // v1.x: no ':c', read as Conceal.
        let legacy = try Self.item(items, "legacy")
        #expect(try Self.credentials(legacy) == ("rnkgen-legacy-user", "rnkgen-legacy-pass-0002"))
        #expect(legacy.source.protection == [:])
        #expect(legacy.notes.contains { $0.contains("no 'legacy:c' entry") })

        let aes = try Self.item(items, "aes")
        #expect(aes.value == .sealed("Android Keystore key: the value can only be read on the device"))
        #expect(aes.verdict == .migrate)
        #expect(aes.source.account == nil)
        #expect(
            aes.target?.options
                == SetOptions(
                    accessible: .afterFirstUnlock, accessControl: AccessControl.none,
                    android: AndroidOptions(keyStorage: .strongbox)))

        let bio = try Self.item(items, "bio")
        #expect(
            bio.target?.options
                == SetOptions(
                    accessible: .afterFirstUnlock, accessControl: .biometryAny, authValidity: 5,
                    android: AndroidOptions(keyStorage: .strongbox)))
        #expect(bio.notes.contains { $0.contains("--android-biometry-accepts-passcode") })

        let incomplete = try Self.item(items, "incomplete")
        #expect(incomplete.target == nil)
        guard case .skipped(let reason) = incomplete.verdict else {
            Issue.record("\(incomplete.verdict)")
            return
        }
        #expect(reason.contains("'incomplete:p'"))

        let future = try Self.item(items, "future")
        #expect(future.verdict == .blocked("unknown cipher 'KeystoreFuture': its protection can't be mapped"))
        // Its intended target, with no protection (issue 14, item 2).
        #expect(future.target == .unknownProtection(service: "future", key: "credentials", kind: .credentials))
        expectNoSecrets(items, Self.generatedSecrets)
    }

    @Test func v9SpacedConcealEntity() throws {
        let dumps = try Self.generated("v9.0-sharedprefs-spaced-entity", ["RN_KEYCHAIN.xml", "crypto.KEY_256.xml"])
        let items = try importer.importItems(from: dumps, options: ImportOptions(bundleID: "com.example.app"))
        #expect(try Self.credentials(Self.item(items, "")) == ("rnkgen-spaced-user", "rnkgen-spaced-pass-0006"))
        let session = try Self.item(items, "session:v2")
        #expect(try Self.credentials(session) == ("rnkgen-session-user", "rnkgen-session-pass-0007"))
        #expect(session.target?.service == "session:v2")
        for item in items {
            #expect(item.notes.contains { $0.contains("9.0.0 to 9.2.2") })
        }
        // The plain spelling gets no such note.
        let plain = try importer.importItems(
            from: try Self.generated("v8-sharedprefs", ["RN_KEYCHAIN.xml", "crypto.KEY_256.xml"]),
            options: ImportOptions(bundleID: "com.example.app"))
        #expect(!plain.contains { $0.notes.contains { $0.contains("9.0.0 to 9.2.2") } })
        expectNoSecrets(items, Self.generatedSecrets)
    }

    @Test func dataStoreWinsOverSharedPreferencesKeyByKey() throws {
        let dumps = try Self.generated(
            "v9.2-datastore-and-sharedprefs", ["RN_KEYCHAIN.xml", "RN_KEYCHAIN.preferences_pb", "crypto.KEY_256.xml"])
        let items = try importer.importItems(from: dumps, options: ImportOptions(bundleID: "com.example.app"))
        #expect(
            items.map(\.origin.format) == [
                .sharedPreferences, .sharedPreferences, .sharedPreferences, .dataStore, .dataStore, .dataStore,
            ])

        let oldAuth = try Self.item(items, "auth", path: "RN_KEYCHAIN.xml")
        guard case .shadowed(let reason) = oldAuth.verdict else {
            Issue.record("\(oldAuth.verdict)")
            return
        }
        #expect(reason.contains(Self.datastore + "RN_KEYCHAIN.preferences_pb"))
        #expect(oldAuth.source.protection == ["cipher": "KeystoreAESCBC"])
        let newAuth = try Self.item(items, "auth", path: "RN_KEYCHAIN.preferences_pb")
        #expect(newAuth.verdict == .migrate)
        #expect(newAuth.source.protection == ["cipher": "KeystoreAESGCM_NoAuth"])

        // Only in the XML: migrated from there.
        let concealOnly = try Self.item(items, "conceal-only")
        #expect(concealOnly.verdict == .migrate)
        #expect(try Self.credentials(concealOnly) == ("rnkgen-conceal-user", "rnkgen-conceal-pass-0009"))

        // ':c' in the DataStore, ':u' and ':p' only in the XML: the DataStore item takes them, the XML copy is shadowed.
        let partial = try Self.item(items, "partial", path: "RN_KEYCHAIN.preferences_pb")
        #expect(partial.verdict == .migrate)
        #expect(partial.origin.location == #"entries "partial:u", "partial:p", "partial:c""#)
        #expect(partial.notes.filter { $0.contains("is taken from \(Self.prefs)RN_KEYCHAIN.xml") }.count == 2)
        guard case .shadowed = try Self.item(items, "partial", path: "RN_KEYCHAIN.xml").verdict else {
            Issue.record("the XML copy of 'partial' should be shadowed")
            return
        }

        let bio = try Self.item(items, "bio")
        #expect(bio.target?.options.accessControl == .biometryAny)
        #expect(bio.target?.options.authValidity == 5)
        expectNoSecrets(items, Self.generatedSecrets)
    }

    @Test func v10DataStoreOnly() throws {
        let dumps = try Self.generated("v10-datastore", ["RN_KEYCHAIN.preferences_pb"])
        let options = ImportOptions(bundleID: "com.example.app", androidBiometryAcceptsPasscode: true)
        let items = try importer.importItems(from: dumps, options: options)
        #expect(items.map(\.source.service) == ["", "http://100.120.189.27:8065"])
        let first = try Self.item(items, "")
        #expect(first.target?.service == "com.example.app")
        #expect(first.target?.options.accessControl == AccessControl.none)
        let server = try Self.item(items, "http://100.120.189.27:8065")
        #expect(server.target?.service == "http://100.120.189.27:8065")
        #expect(server.target?.options.accessControl == .biometryAnyOrPasscode)
        #expect(server.notes.contains { $0.contains("as you said react-native-keychain 10 did") })
        #expect(
            items.allSatisfy { $0.value == .sealed("Android Keystore key: the value can only be read on the device") })
    }

    @Test func includeAndExcludeServices() throws {
        let dumps = try Self.generated("v8-sharedprefs", ["RN_KEYCHAIN.xml", "crypto.KEY_256.xml"])
        let included = try importer.importItems(
            from: dumps, options: ImportOptions(bundleID: "com.example.app", includeServices: ["aes", ""]))
        for item in included {
            let kept = ["aes", ""].contains(item.source.service ?? "?")
            if kept {
                #expect(item.verdict == .migrate)
            } else if item.source.service != "incomplete" {
                #expect(
                    item.verdict
                        == .skipped(
                            "filtered by the user: service \(item.source.service.map { "'\($0)'" } ?? "") is not among the included services"
                        ))
            }
        }
        // A filtered item keeps its target for the report.
        #expect(try Self.item(included, "legacy").target?.service == "legacy")
        let excluded = try importer.importItems(
            from: dumps, options: ImportOptions(bundleID: "com.example.app", excludeServices: ["bio"]))
        #expect(try Self.item(excluded, "bio").verdict == .skipped("filtered by the user: service 'bio' is excluded"))
        #expect(try Self.item(excluded, "aes").verdict == .migrate)
    }

    @Test func filesOfOtherNamesAreReadByTheirEntriesAndOtherValuesIgnored() throws {
        let renamed = preferencesDump(
            Self.prefs + "device1.xml",
            [("x:u", "AAAA"), ("x:p", "AAAA"), ("x:c", "KeystoreAESCBC"), ("theme", "dark")])
        // The 1.x layout (no :c) counts only in a file that holds nothing else.
        let old = preferencesDump(Self.prefs + "backup-RN_KEYCHAIN.xml", [("y:u", "AAAA"), ("y:p", "AAAA")])
        let unrelated = [
            preferencesDump(Self.prefs + "settings.xml", [("theme:c", "dark"), ("count:u", "3")]),
            preferencesDump(Self.prefs + "mixed.xml", [("y:u", "AAAA"), ("y:p", "AAAA"), ("theme", "dark")]),
            preferencesDump(Self.prefs + "cipher.xml", [("x:c", "AES/GCM/NoPadding")]),
        ]
        let rnk = Dump(
            path: Self.prefs + "RN_KEYCHAIN.xml", format: .sharedPreferences,
            content: .preferences([
                PreferenceEntry(name: "flag:c", value: .boolean(true)),
                PreferenceEntry(name: "unrelated", value: .string("x")),
            ]))
        let items = try importer.importItems(from: [renamed, old] + unrelated + [rnk], options: ImportOptions())
        #expect(items.map(\.origin.path) == [renamed.path, old.path])
        #expect(
            items[0].notes.first
                == "the file is named 'device1.xml', not RN_KEYCHAIN.xml: recognised as react-native-keychain's by its <service>:u, :p and :c entries"
        )
        #expect(
            items[1].notes.first
                == "the file is named 'backup-RN_KEYCHAIN.xml', not RN_KEYCHAIN.xml: recognised as react-native-keychain's by its <service>:u, :p and :c entries"
        )
        #expect(ReactNativeKeychainImporter.recognises(renamed) && ReactNativeKeychainImporter.recognises(old))
        #expect(ReactNativeKeychainImporter.recognises(rnk), "by its name, even without entries")
        for dump in unrelated { #expect(!ReactNativeKeychainImporter.recognises(dump), "\(dump.fileName)") }
    }

    @Test func aConcealKeyFileOfAnotherNameIsRecognisedByItsKey() throws {
        let dumps = [
            try ImporterFixtures.sharedPreferences(
                "rnkeychain-conceal-eclipse7-RN_KEYCHAIN.xml", as: Self.prefs + "device1.xml"),
            try ImporterFixtures.sharedPreferences(
                "rnkeychain-conceal-eclipse7-crypto.KEY_256.xml", as: Self.prefs + "conceal-key.xml"),
        ]
        #expect(ReactNativeKeychainImporter.recognises(dumps[1]))
        let items = try importer.importItems(from: dumps, options: ImportOptions(bundleID: "com.example.app"))
        #expect(items.count == 2)
        for item in items {
            guard case .credentials = item.value else {
                Issue.record("\(item.value)")
                continue
            }
            #expect(item.verdict == .migrate)
        }
        // Not a key: a short cipher_key, or other entries beside it, make an ordinary preferences file.
        let short = preferencesDump(Self.prefs + "short.xml", [("cipher_key", "c2hvcnQ=\n")])
        let more = preferencesDump(
            Self.prefs + "more.xml",
            [("cipher_key", "98JTa0nu3uOGjBxOCuHaQ1yRXCKpQzmccHQR+kkfHks="), ("theme", "dark")])
        #expect(!ReactNativeKeychainImporter.recognises(short) && !ReactNativeKeychainImporter.recognises(more))
        #expect(try importer.importItems(from: [short], options: ImportOptions()).isEmpty, "ignored, not thrown")
    }

    @Test("services that differ only in Unicode normalisation are two services, as Android's names compare")
    func servicesCompareByteForByte() throws {
        let rnk = preferencesDump(
            Self.prefs + "RN_KEYCHAIN.xml",
            [
                ("caf\u{E9}:u", "AAAA"), ("caf\u{E9}:p", "AAAA"), ("caf\u{E9}:c", "KeystoreAESCBC"),
                ("cafe\u{301}:u", "AAAA"), ("cafe\u{301}:p", "AAAA"), ("cafe\u{301}:c", "KeystoreAESCBC"),
            ])
        let items = try importer.importItems(from: [rnk], options: ImportOptions())
        #expect(items.count == 2)
        #expect(
            items.map { Array(($0.source.service ?? "").utf8) } == [Array("caf\u{E9}".utf8), Array("cafe\u{301}".utf8)])
        for (item, service) in zip(items, ["caf\u{E9}", "cafe\u{301}"]) {
            let expected = "entries \"\(service):u\", \"\(service):p\", \"\(service):c\""
            #expect(Array(item.origin.location.utf8) == Array(expected.utf8), "each item holds its own entries")
        }
    }

    @Test(
        "entry names that joined into one location (a:u, a:p and one entry named a:u/a:p) give two origins; both importers keep both items"
    )
    func locationsAreUnambiguous() throws {
        let rnk = preferencesDump(
            Self.prefs + "RN_KEYCHAIN.xml",
            [("a:u", "AAAA"), ("a:p", "AAAA"), ("a:u/a:p", "AAAA")])
        let items = try importer.importItems(from: [rnk], options: ImportOptions(bundleID: "com.example.app"))
        // Joined raw, both were `entries a:u/a:p`.
        #expect(items.map(\.origin.location) == [#"entries "a:u", "a:p""#, #"entries "a:u/a:p""#])
        #expect(Set(items.map(\.origin)).count == 2)
        // With both importers each record is claimed once, and neither item is dropped as already claimed.
        let (collected, _) = try Migration.collect(
            importers: [ExpoSecureStoreImporter(), importer], dumps: [rnk, rnk],
            options: ImportOptions(bundleID: "com.example.app"))
        #expect(collected.filter { $0.library == .reactNativeKeychain }.count == 2)
    }

    @Test("the service map and the service filters name services byte for byte: café in NFC is not café in NFD")
    func serviceOptionsCompareBytes() throws {
        let rnk = preferencesDump(
            Self.prefs + "RN_KEYCHAIN.xml",
            [
                ("caf\u{E9}:u", "AAAA"), ("caf\u{E9}:p", "AAAA"), ("caf\u{E9}:c", "KeystoreAESCBC"),
                ("cafe\u{301}:u", "AAAA"), ("cafe\u{301}:p", "AAAA"), ("cafe\u{301}:c", "KeystoreAESCBC"),
            ])
        let mapped = try importer.importItems(from: [rnk], options: ImportOptions(serviceMap: ["caf\u{E9}": "mapped"]))
        #expect(
            mapped.map { $0.target.map { Array($0.service.utf8) } } == [
                Array("mapped".utf8), Array("cafe\u{301}".utf8),
            ])
        let excluded = try importer.importItems(from: [rnk], options: ImportOptions(excludeServices: ["cafe\u{301}"]))
        #expect(excluded.map { $0.verdict == .migrate } == [true, false])
        let included = try importer.importItems(from: [rnk], options: ImportOptions(includeServices: ["caf\u{E9}"]))
        #expect(included.map { $0.verdict == .migrate } == [true, false])
    }

    @Test("origins compare byte for byte: a location in NFC and in NFD are two origins")
    func originsCompareBytes() {
        let nfc = SourceOrigin(path: "p.xml", format: .sharedPreferences, location: #"entries "caf\#u{E9}:u""#)
        let nfd = SourceOrigin(path: "p.xml", format: .sharedPreferences, location: #"entries "cafe\#u{301}:u""#)
        #expect(nfc != nfd)
        #expect(Set([nfc, nfd]).count == 2)
        #expect(SourceOrigin.quoted(#"a"b\c"#) == #""a\"b\\c""#)
    }

    /// Every made-up username and password of `rnk-generated` (README.md there).
    static let generatedSecrets = [
        "rnkgen-default-user", "rnkgen-default-pass-0001", "rnkgen-api-user", "rnkgen-long-password-",
        "rnkgen-legacy-user", "rnkgen-legacy-pass-0002", "rnkgen-aes-user", "rnkgen-aes-pass-0003", "rnkgen-bio-user",
        "rnkgen-bio-pass-0004", "rnkgen-future-user", "rnkgen-future-pass-0005", "rnkgen-spaced-user",
        "rnkgen-spaced-pass-0006", "rnkgen-session-user", "rnkgen-session-pass-0007", "rnkgen-auth-user",
        "rnkgen-auth-pass-old-0008", "rnkgen-conceal-user", "rnkgen-conceal-pass-0009", "rnkgen-partial-user",
        "rnkgen-partial-pass-0010", "rnkgen-auth-pass-0011", "rnkgen-bio2-user", "rnkgen-bio2-pass-0012",
        "rnkgen-v10-user", "rnkgen-v10-pass-0013", "rnkgen-mm-user", "rnkgen-mm-pass-0014", "rnkgen-x",
    ]
}

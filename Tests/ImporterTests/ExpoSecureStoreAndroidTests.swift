import ApexDumps
import ApexKeychain
import ApexMigration
import ExpoSecureStoreImporter
import Foundation
import Testing

@Suite("expo-secure-store importer: Android")
struct ExpoSecureStoreAndroidTests {
    static let expoGoPath =
        "/data/data/host.exp.exponent/shared_prefs/%40anonymous%2Fmobile-storage-whit-rooting-c28f9c3e-fea5-44d6-8902-dc1a9ac7a7d4-SecureStore.xml"

    @Test("real fixture (MetoCare, SDK 57): three key_v1 entries with \\/ in Base64, all sealed, no authentication")
    func metocare() throws {
        let items = try Expo.run([try Expo.prefs("expo-securestore-metocare-SecureStore.xml")])
        #expect(items.map(\.source.account) == ["meto_install_id", "meto_refresh", "meto_access"])
        #expect(items.map(\.origin.location) == ["entry 1", "entry 2", "entry 3"])
        for item in items {
            #expect(item.platform == .android)
            #expect(item.verdict == .migrate)
            #expect(item.source.service == "key_v1")
            #expect(
                item.source.protection == [
                    "scheme": "aes", "tlen": "128", "keystoreAlias": "key_v1", "usesKeystoreSuffix": "true",
                    "requireAuthentication": "false",
                ])
            guard case .sealed(let why) = item.value else {
                Issue.record("not sealed")
                continue
            }
            #expect(why.contains("AES/GCM/NoPadding:key_v1:keystoreUnauthenticated"))
            #expect(item.target?.service == "app")
            #expect(item.target?.kind == .string)
            #expect(item.target?.options.accessControl == AccessControl.none)
            #expect(item.target?.options.accessible == .afterFirstUnlockThisDeviceOnly)
            #expect(Expo.notes(item, contain: "afterFirstUnlockThisDeviceOnly"))
        }
    }

    @Test("real fixture (Expo Go): a scoped <experience>-SecureStore.xml, noted with its experience")
    func expoGoScoped() throws {
        let items = try Expo.run([
            try Expo.prefs("expo-securestore-expogo-scoped-key_v1-SecureStore.xml", as: Self.expoGoPath)
        ])
        let item = try #require(items.first)
        #expect(items.count == 1)
        #expect(item.source.account == "accessSecureToken")
        #expect(item.verdict == .migrate)
        #expect(item.target?.key == "accessSecureToken")
        #expect(Expo.notes(item, contain: "@anonymous/mobile-storage-whit-rooting-c28f9c3e"))
    }

    @Test(
        "in a file of another name, an entry is claimed by expo's JSON layout, after white space or a byte order mark too, and other values are left alone"
    )
    func otherFileClaims() throws {
        let path = "/data/data/com.example.app/shared_prefs/Other.xml"
        let items = try Expo.run([
            Expo.prefs(
                [
                    ("key_v1-plain", Expo.newEntry()), ("key_v1-spaced", " \n\t" + Expo.newEntry()),
                    ("key_v1-bom", "\u{FEFF}" + Expo.newEntry()), ("base64", "AAECAwQFBgcICQoL"), ("empty", ""),
                    ("array", "[" + Expo.newEntry() + "]"), ("no-signature", "{\"a\":1}"),
                ], path: path)
        ])
        #expect(items.map(\.source.account) == ["plain", "spaced", "bom"])
        #expect(items.map(\.origin.location) == ["entry 1", "entry 2", "entry 3"])
        #expect(items.allSatisfy { $0.verdict == .migrate })
    }

    @Test("a scoped copy is shadowed by SecureStore.xml's copy of the same service and key")
    func scopedShadowed() throws {
        let items = try Expo.run([
            try Expo.prefs("expo-securestore-expogo-scoped-key_v1-SecureStore.xml", as: Self.expoGoPath),
            Expo.prefs([("key_v1-accessSecureToken", Expo.newEntry())]),
        ])
        #expect(items[1].verdict == .migrate)
        guard case .shadowed(let why) = items[0].verdict else {
            Issue.record("scoped copy not shadowed")
            return
        }
        #expect(why.contains("SecureStore.xml entry 1"))
    }

    @Test("12.0–12.4 layout: bare key names; the unreliable flag gets the stronger reading; hybrid's RSA key")
    func legacyLayout() throws {
        let items = try Expo.run([try Expo.prefs("expo-generated/legacy-12.0-SecureStore.xml")])
        #expect(items.map(\.source.account) == ["session", "bio_token", "old.pin"])
        for item in items {
            #expect(item.source.service == nil)
            #expect(item.verdict == .migrate)
            #expect(item.target?.service == "app")
            #expect(item.target?.options.accessControl == .biometryCurrentSet)
            #expect(item.target?.options.accessible == .whenPasscodeSetThisDeviceOnly)
            #expect(Expo.notes(item, contain: "stronger reading"))
            #expect(Expo.notes(item, contain: "no record of its service"))
        }
        #expect(items[0].source.protection["requireAuthentication"] == nil)
        #expect(items[1].source.protection["requireAuthentication"] == "true")
        guard case .sealed(let rsa) = items[2].value else {
            Issue.record("hybrid not sealed")
            return
        }
        #expect(rsa.contains("RSA/None/PKCS1Padding:<keychainService>"))
        #expect(items[2].source.protection["scheme"] == "hybrid")
    }

    @Test("12.5.0+ layout: <keychainService>-<key> with `-` in both, auth keys, and a legacy leftover shadowed")
    func newLayout() throws {
        let items = try Expo.run([try Expo.prefs("expo-generated/new-12.5-SecureStore.xml")])
        let session = try #require(Expo.find(items, key: "session", service: "key_v1"))
        #expect(session.verdict == .migrate)
        #expect(session.target?.options.accessControl == AccessControl.none)

        let bio = try #require(Expo.find(items, key: "bio_token", service: "key_v1"))
        #expect(bio.target?.options.accessControl == .biometryCurrentSet)
        #expect(bio.target?.options.accessible == .whenPasscodeSetThisDeviceOnly)
        #expect(bio.target?.options.authValidity == 0)
        guard case .sealed(let alias) = bio.value else {
            Issue.record("not sealed")
            return
        }
        #expect(alias.contains("AES/GCM/NoPadding:key_v1:keystoreAuthenticated"))

        let custom = try #require(Expo.find(items, key: "api-key", service: "my-service"))
        #expect(custom.target?.service == "my-service")
        #expect(custom.verdict == .migrate)

        let leftover = try #require(Expo.find(items, key: "session", service: nil))
        guard case .shadowed(let why) = leftover.verdict else {
            Issue.record("legacy leftover not shadowed")
            return
        }
        #expect(why.contains("'key_v1'") && why.contains("entry 1"))
    }

    @Test("a legacy entry of an older dump is shadowed by the 12.5.0+ entry of a newer one")
    func legacyAcrossDumps() throws {
        let items = try Expo.run([
            try Expo.prefs("expo-generated/legacy-12.0-SecureStore.xml", as: "old/SecureStore.xml"),
            Expo.prefs([("key_v1-session", Expo.newEntry())], path: "new/SecureStore.xml"),
        ])
        let legacy = try #require(Expo.find(items, key: "session", service: nil))
        guard case .shadowed(let why) = legacy.verdict else {
            Issue.record("legacy copy not shadowed")
            return
        }
        #expect(why.contains("new/SecureStore.xml entry 1") && why.contains("legacy bare key"))
        #expect(Expo.find(items, key: "bio_token", service: nil)?.verdict == .migrate)
    }

    @Test("requireAuthentication as a string (PR #41409): biometry, deviceCredentials, TRUE; unknown kinds blocked")
    func requireAuthenticationStrings() throws {
        let items = try Expo.run([try Expo.prefs("expo-generated/pr41409-SecureStore.xml")])
        #expect(
            items.map(\.target?.options.accessControl) == [
                .biometryCurrentSet, .biometryCurrentSetOrPasscode, .biometryCurrentSet, nil,
            ])
        #expect(Expo.notes(items[1], contain: "deviceCredentials"))
        #expect(items[1].source.protection["requireAuthentication"] == "deviceCredentials")
        guard case .blocked(let why) = items[3].verdict else {
            Issue.record("number flag not blocked")
            return
        }
        #expect(why.contains("requireAuthentication"))
    }

    @Test("entries expo can't read are skipped with the reason; a stray entry of SecureStore.xml too")
    func damaged() throws {
        let items = try Expo.run([try Expo.prefs("expo-generated/damaged-SecureStore.xml")])
        let reasons = items.map { Expo.reason($0.verdict) ?? "" }
        #expect(items.count == 5)
        #expect(items.allSatisfy { if case .skipped = $0.verdict { true } else { false } })
        #expect(reasons[0].contains("tlen 64"))
        #expect(reasons[1].contains("iv is missing"))
        #expect(reasons[2].contains("ct is not Base64"))
        #expect(reasons[3].contains("scheme"))
        #expect(reasons[4].contains("not an expo-secure-store entry"))
    }

    @Test("other files: only entries of expo's layout are claimed, with a note; DataStore files are not read")
    func otherFiles() throws {
        let entries = [("key_v1-token", Expo.newEntry()), (":u", "gKPDOfBDWLMcmSsDqKE9fg=="), ("plain", "{\"a\":1}")]
        let items = try Expo.run([Expo.prefs(entries, path: "/data/data/x/shared_prefs/RN_KEYCHAIN.xml")])
        #expect(items.map(\.source.account) == ["token"])
        #expect(Expo.notes(items.first, contain: "'RN_KEYCHAIN.xml'"))

        let store = Dump(
            path: "SecureStore.preferences_pb", format: .dataStore,
            content: .preferences(entries.map { PreferenceEntry(name: $0.0, value: .string($0.1)) }))
        #expect(try Expo.run([store]).isEmpty)
    }

    @Test("recognises: SecureStore files by name, other SharedPreferences files by an entry of expo's layout")
    func recognises() throws {
        let named = Expo.prefs([("plain", "x")], path: "shared_prefs/SecureStore.xml")
        let scoped = Expo.prefs([], path: "shared_prefs/%40anonymous%2Fapp-SecureStore.xml")
        let renamed = Expo.prefs([("plain", "x"), ("key_v1-token", Expo.newEntry())], path: "backup/device1.xml")
        let unrelated = Expo.prefs([("plain", "{\"ct\": \"x\"}"), ("theme", "dark")], path: "backup/settings.xml")
        let store = Dump(
            path: "SecureStore.preferences_pb", format: .dataStore,
            content: .preferences([PreferenceEntry(name: "key_v1-token", value: .string(Expo.newEntry()))]))
        for dump in [named, scoped, renamed] { #expect(ExpoSecureStoreImporter.recognises(dump), "\(dump.path)") }
        for dump in [unrelated, store] { #expect(!ExpoSecureStoreImporter.recognises(dump), "\(dump.path)") }
    }

    @Test("names that differ only in Unicode normalisation are two entries, as Java compares them")
    func namesCompareByteForByte() throws {
        let items = try Expo.run([
            Expo.prefs([("key_v1-caf\u{E9}", Expo.newEntry()), ("key_v1-cafe\u{301}", Expo.newEntry())])
        ])
        #expect(items.count == 2)
        for item in items {
            if case .shadowed = item.verdict {
                Issue.record("\(item.origin.location) was taken for a copy of the other")
            }
        }
    }

    @Test("a name the file holds twice: the last entry is the one Android keeps")
    func duplicateNames() throws {
        let items = try Expo.run([
            Expo.prefs([("key_v1-a", Expo.newEntry()), ("key_v1-a", Expo.newEntry(auth: "true"))])
        ])
        #expect(items[1].verdict == .migrate)
        guard case .shadowed(let why) = items[0].verdict else {
            Issue.record("first copy not shadowed")
            return
        }
        #expect(why.contains("entry 2"))
    }

    @Test("across files, only a copy its own file lets expo read can win")
    func winnerIsReadable() throws {
        let items = try Expo.run([
            Expo.prefs([("key_v1-a", Expo.newEntry()), ("key_v1-a", Expo.newEntry(auth: "true"))]),
            Expo.prefs(
                [("key_v1-a", Expo.newEntry())], path: "/data/data/host.exp.exponent/shared_prefs/x-SecureStore.xml"),
        ])
        #expect(items.map { $0.verdict == .migrate } == [false, true, false])
        guard case .shadowed(let why) = items[2].verdict else {
            Issue.record("scoped copy not shadowed")
            return
        }
        #expect(why.contains("SecureStore.xml entry 2"))
    }

    @Test("Base64 with line breaks and without padding is read as Android's decoder reads it")
    func tolerantBase64() throws {
        let items = try Expo.run([
            Expo.prefs([
                ("key_v1-wrapped", Expo.newEntry(ct: "AAECAwQFBgcICQoL\\nDA0ODxAREhM=\\n")),
                ("key_v1-unpadded", Expo.newEntry(ct: "AAECAwQFBgcICQoLDA0ODxAREhM")),
            ])
        ])
        #expect(items.map(\.verdict) == [.migrate, .migrate])
    }

    @Test("filters and the service map name the keystoreAlias as found, or the service it maps to")
    func servicesOnAndroid() throws {
        let dump = Expo.prefs([
            ("key_v1-a", Expo.newEntry()), ("other-b", Expo.newEntry(alias: "other")),
            ("c", "{\"ct\":\"AA==\",\"iv\":\"AA==\",\"tlen\":128,\"scheme\":\"aes\"}"),
        ])
        let excluded = try Expo.run([dump], ImportOptions(excludeServices: ["app"]))
        #expect(excluded.map { if case .skipped = $0.verdict { true } else { false } } == [true, false, true])

        let included = try Expo.run([dump], ImportOptions(includeServices: ["other"]))
        #expect(included.map { $0.verdict == .migrate } == [false, true, false])

        let mapped = try Expo.run([dump], ImportOptions(serviceMap: ["key_v1": "com.example.app", "other": "x"]))
        #expect(mapped.map(\.target?.service) == ["com.example.app", "x", "com.example.app"])
    }

    @Test("iOS and Android dumps together: items come back in the order of the dumps")
    func mixedOrder() throws {
        let items = try Expo.run([
            Expo.prefs([("key_v1-a", Expo.newEntry())]), Expo.keychain([Expo.item("item 1")]),
        ])
        #expect(items.map(\.platform) == [.android, .ios])
    }
}

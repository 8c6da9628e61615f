import ApexDumps
import ApexKeychain
import ApexMigration
import ApexTestSupport
import ExpoSecureStoreImporter
import Foundation
import ReactNativeEncryptedStorageImporter
import ReactNativeKeychainImporter
import SampleDumps
import Testing

@Suite("react-native-encrypted-storage on Android")
struct ReactNativeEncryptedStorageAndroidTests {
    static let file = "/data/data/com.example.app/shared_prefs/RN_ENCRYPTED_STORAGE_SHARED_PREF.xml"

    func sample(_ folder: String) throws -> Dump {
        try DumpReader.read(
            path: RNES.samples
                + "/react-native-encrypted-storage/\(folder)/shared_prefs/RN_ENCRYPTED_STORAGE_SHARED_PREF.xml")
    }

    @Test("1.0.0's plain-text entries become strings under the bundle id, afterFirstUnlockThisDeviceOnly")
    func plain() throws {
        let items = try RNES.run([try sample("android-1.0.0")], RNES.app)
        #expect(items.map(\.source.account) == ["user_session", "pinCode"])
        #expect(items.allSatisfy { $0.verdict == .migrate && $0.platform == .android })
        #expect(items[1].value == .value(Data("sample-legacy-0311".utf8)))
        let target = try #require(items[1].target)
        #expect(target.service == "com.example.app" && target.key == "pinCode" && target.kind == .string)
        #expect(target.options.accessible == .afterFirstUnlockThisDeviceOnly)
        let unknown = try RNES.run([try sample("android-1.0.0")])
        #expect(unknown.allSatisfy { RNES.reason($0.verdict)?.contains("pass --bundle-id") == true })
    }

    @Test("EncryptedSharedPreferences entries are sealed, counted, with no key; the keysets are no items")
    func sealed() throws {
        let items = try RNES.run([try sample("android")], RNES.app)
        #expect(items.count == 3)
        for item in items {
            guard case .sealed(let why) = item.value else {
                Issue.record("not sealed: \(item)")
                continue
            }
            #expect(why.contains("one of 3") && why.contains("_androidx_security_master_key_"))
            #expect(item.target == nil && item.source.account == nil)
        }
    }

    @Test("a fallback file mixes both, told apart by content")
    func mixed() throws {
        let items = try RNES.run([try sample("android-fallback")], RNES.app)
        let sealed = items.filter { if case .sealed = $0.value { true } else { false } }
        #expect(sealed.count == 2)
        #expect(items.compactMap(\.target?.key) == ["user_session", "lastSync"])
        #expect(items.last?.notes.contains { $0.contains("beside 2 EncryptedSharedPreferences entries") } == true)
    }

    @Test("cleartext keysets (4.0.x below API 23) are noted as decryptable off the device, and stay sealed")
    func cleartextKeysets() throws {
        let items = try RNES.run([try sample("android-4.0-api21")], RNES.app)
        #expect(items.count == 2)
        #expect(items.allSatisfy { $0.source.protection["keysets"] == "cleartext" && $0.target == nil })
        #expect(items.allSatisfy { $0.notes.contains { $0.contains("decryptable off the device") } })
        let wrapped = try RNES.run([try sample("android")], RNES.app)
        #expect(wrapped.allSatisfy { !$0.notes.contains { $0.contains("decryptable") } })
    }

    /// Issue 28: an entry whose name and value both have Tink's form is ciphertext, whatever its key id: one
    /// whose key id the file's keysets don't hold (written under keysets since made anew, or copied from another
    /// file) is sealed with that reason, never migrated as a string.
    @Test(
        "an entry whose name and value have Tink's form under a key id the file's keysets don't hold is sealed, not a string",
        arguments: ["android", "android-4.0-api21"])
    func unmatchedKeyID(_ folder: String) throws {
        guard case .preferences(var entries) = try sample(folder).content else {
            Issue.record("not preferences")
            return
        }
        let name = "AQAAAAE" + String(repeating: "A", count: 40)
        let value = "AQAAAAI" + String(repeating: "B", count: 60)
        entries.append(PreferenceEntry(name: name, value: .string(value)))
        let items = try RNES.run(
            [Dump(path: Self.file, format: .sharedPreferences, content: .preferences(entries))], RNES.app)
        let item = try #require(items.last)
        guard case .sealed(let why) = item.value else {
            Issue.record("not sealed: \(item)")
            return
        }
        #expect(why.contains("the file's keysets don't hold the key id"))
        #expect(item.target == nil && item.source.account == nil)
        #expect(item.source.protection["keysets"] == "unmatched")
        #expect(!item.notes.contains { $0.contains("decryptable off the device") })
        #expect(!items.contains { $0.value == .value(Data(value.utf8)) })
        // The file's own entries are counted with it.
        #expect(why.contains("one of \(items.count)"))
    }

    /// Issue 31: an app's EncryptedSharedPreferences file holds booleans and numbers too, whose ciphertexts are
    /// shorter than any string's (a boolean's: 38 bytes); under the keysets' key ids they are sealed, never a string.
    @Test("booleans and numbers under the keysets' key ids are sealed, whatever their length")
    func shortCiphertexts() throws {
        let entries = ReactNativeEncryptedStorageSamples.encryptedPreferences(
            [
                ("onboarded", .boolean), ("launches", .int), ("lastSync", .long), ("ratio", .float),
                ("token", .string("t")),
            ], seed: 0x524E_4553_0031)
        let dump = Dump(path: Self.file, format: .sharedPreferences, content: .preferences(entries))
        let items = try RNES.run([dump], RNES.app)
        #expect(items.count == 5)
        for item in items {
            guard case .sealed(let why) = item.value else {
                Issue.record("not sealed: \(item.origin.location) \(item.value)")
                continue
            }
            #expect(why.contains("one of 5"))
            #expect(item.target == nil && item.source.account == nil)
            #expect(item.source.protection["keysets"] == "keystore-wrapped")
        }
    }

    @Test("a short Tink-like entry under key ids the keysets don't hold is no ciphertext of this file")
    func shortUnderOtherKeys() throws {
        var entries = ReactNativeEncryptedStorageSamples.encryptedPreferences(
            [("onboarded", .boolean)], seed: 0x524E_4553_0032)
        // 5 + 16 + 4 bytes of name, 5 + 20 bytes of value: too short for ciphertext, under no keyset's id.
        entries.append(
            PreferenceEntry(
                name: "AQAAAAE" + String(repeating: "A", count: 27),
                value: .string("AQAAAAI" + String(repeating: "B", count: 26))))
        let items = try RNES.run(
            [Dump(path: Self.file, format: .sharedPreferences, content: .preferences(entries))], RNES.app)
        #expect(items.count == 2)
        if case .sealed = items[0].value {} else { Issue.record("the boolean is not sealed") }
        #expect(items[1].target != nil)
    }

    @Test("a name that looks like Tink's beside a value that doesn't is a plain-text entry")
    func lookalikeName() throws {
        guard case .preferences(var entries) = try sample("android").content else { return }
        let lookalike = "AQAAAAE" + String(repeating: "A", count: 40)
        entries.append(PreferenceEntry(name: lookalike, value: .string("plain value")))
        let items = try RNES.run(
            [Dump(path: Self.file, format: .sharedPreferences, content: .preferences(entries))], RNES.app)
        #expect(items.last?.target?.key == lookalike)
        #expect(items.last?.value == .value(Data("plain value".utf8)))
    }

    @Test("a value that is no string is skipped: the library writes strings only")
    func nonString() throws {
        let dump = Dump(
            path: Self.file, format: .sharedPreferences,
            content: .preferences([PreferenceEntry(name: "count", value: .int(3))]))
        let item = try #require(try RNES.run([dump], RNES.app).first)
        #expect(RNES.reason(item.verdict)?.contains("writes strings only") == true)
    }

    @Test(
        "a keyset that is not a Tink keyset in hex is an error naming the file",
        arguments: ["zz", "0a0b", "", "1203aabb"])
    func malformedKeyset(_ text: String) throws {
        let dump = preferencesDump(
            Self.file, [("__androidx_security_crypto_encrypted_prefs_key_keyset__", text), ("k", "v")])
        #expect {
            try RNES.run([dump], RNES.app)
        } throws: { error in
            guard let error = error as? ImportError else { return false }
            return error.path == Self.file && error.message.contains("not a Tink keyset")
        }
    }

    @Test("its file is read by it alone, even when its entries look like react-native-keychain's or expo's")
    func lookalikeEntries() throws {
        let expoJSON = #"{"ct":"AAECAwQFBgcICQoLDA0ODxAREhM=","iv":"AAECAwQFBgcICQoL","tlen":128,"scheme":"aes"}"#
        let dump = preferencesDump(
            Self.file, [("vault:u", "user"), ("vault:p", "pass"), ("vault:c", "KeystoreAESCBC"), ("k", expoJSON)])
        #expect(!ReactNativeKeychainImporter.recognises(dump) && !ExpoSecureStoreImporter.recognises(dump))
        #expect(try ReactNativeKeychainImporter().importItems(from: [dump], options: RNES.app).isEmpty)
        #expect(try ExpoSecureStoreImporter().importItems(from: [dump], options: RNES.app).isEmpty)
        #expect(try RNES.run([dump], RNES.app).map(\.target?.key) == ["vault:u", "vault:p", "vault:c", "k"])
        // The same entries under another name are react-native-keychain's and expo's again.
        let renamed = Dump(path: "/x/shared_prefs/backup.xml", format: dump.format, content: dump.content)
        #expect(ReactNativeKeychainImporter.recognises(renamed) && ExpoSecureStoreImporter.recognises(renamed))
    }

    @Test(
        "its name or its keysets are recognised; a plain file under another name only when the library is named"
    )
    func recognition() throws {
        #expect(ReactNativeEncryptedStorageImporter.recognises(preferencesDump(Self.file, [("k", "v")])))
        let other = preferencesDump("/x/shared_prefs/prefs.xml", [("k", "v")])
        #expect(!ReactNativeEncryptedStorageImporter.recognises(other))
        #expect(ReactNativeEncryptedStorageImporter.recognises(other, library: .reactNativeEncryptedStorage))
        #expect(!ReactNativeEncryptedStorageImporter.recognises(other, library: .reactNativeSensitiveInfo))
        let named = ImportOptions(bundleID: "com.example.app", libraries: [.reactNativeEncryptedStorage])
        let claimed = try RNES.run([other], named)
        #expect(claimed.map(\.target?.key) == ["k"])
        #expect(claimed.first?.notes.first?.contains("--from react-native-encrypted-storage was given") == true)
        // EncryptedSharedPreferences' keysets mark the file whatever its name (stdin has none).
        guard case .preferences(let entries) = try sample("android").content else { return }
        for path in ["(stdin)", "/x/backup.xml"] {
            let renamed = Dump(path: path, format: .sharedPreferences, content: .preferences(entries))
            #expect(ReactNativeEncryptedStorageImporter.recognises(renamed))
            let items = try RNES.run([renamed], RNES.app)
            #expect(items.count == 3)
            #expect(items.allSatisfy { $0.notes.first?.contains("by the EncryptedSharedPreferences keysets") == true })
        }
        #expect(
            !ReactNativeEncryptedStorageImporter.recognises(
                preferencesDump(Self.file, format: .dataStore, [("k", "v")])))
        #expect(try RNES.run([preferencesDump("/x/shared_prefs/other.xml", [("k", "v")])], RNES.app).isEmpty)
    }
}

/// Each library's samples are claimed by its own importer only: no record is claimed by two importers.
@Suite("recognition across the importers' samples")
struct CrossRecognitionTests {
    static let libraries = ["react-native-keychain", "expo-secure-store", "react-native-encrypted-storage"]

    @Test(
        "no sample record is claimed by two importers, and each importer claims only its library's",
        arguments: libraries)
    func claimedOnce(_ library: String) throws {
        let dumps = try RNES.sampleDumps(library)
        #expect(!dumps.isEmpty)
        let importers: [any Importer] = [
            ExpoSecureStoreImporter(), ReactNativeKeychainImporter(), ReactNativeEncryptedStorageImporter(),
        ]
        var claims: [SourceOrigin: SourceLibrary] = [:]
        for importer in importers {
            let items: [SourceItem]
            do {
                items = try importer.importItems(from: dumps, options: RNES.app)
            } catch {
                Issue.record("\(importer.library) failed on \(library)'s samples: \(error)")
                continue
            }
            for item in items {
                if let other = claims[item.origin] {
                    Issue.record("\(item.origin.path) \(item.origin.location): claimed by \(other) and \(item.library)")
                }
                claims[item.origin] = item.library
            }
        }
        for dump in dumps {
            let owners = Set(claims.filter { $0.key.path == dump.path }.values.map(\.rawValue))
            // The encrypted-storage iOS samples hold one react-native-keychain item on purpose (the bundle id).
            let allowed: Set<String> =
                library == "react-native-encrypted-storage" && dump.format.platform == .ios
                ? [library, "react-native-keychain"] : [library]
            #expect(owners.isSubset(of: allowed), "\(dump.path): \(owners)")
            if case .preferences = dump.content {
                let recognisers = [
                    ("react-native-keychain", ReactNativeKeychainImporter.recognises(dump)),
                    ("expo-secure-store", ExpoSecureStoreImporter.recognises(dump)),
                    ("react-native-encrypted-storage", ReactNativeEncryptedStorageImporter.recognises(dump)),
                ].filter(\.1).map(\.0)
                #expect(
                    recognisers.count <= 1 && recognisers.allSatisfy { $0 == library }, "\(dump.path): \(recognisers)")
            }
        }
    }

    @Test("no secret of the encrypted-storage samples shows in any item's texts")
    func secrecy() throws {
        let dumps = try RNES.sampleDumps("react-native-encrypted-storage")
        for options in [ImportOptions(), RNES.app, RNES.named] {
            let items = try RNES.run(dumps, options)
            #expect(items.count > 10)
            expectNoSecrets(items, ReactNativeEncryptedStorageSamples.secrets)
        }
    }
}

import ApexDumps
import ApexKeychain
import ApexMigration
import ApexTestSupport
import Foundation
import ReactNativeKeychainImporter
import Testing

/// No password, username or key shows in an item's description, verdict, notes or origin (the username only in
/// `source.account`).
@Suite struct ReactNativeKeychainSecrecyTests {
    @Test(arguments: [
        ImportOptions(),
        ImportOptions(bundleID: "com.example.app"),
        ImportOptions(
            bundleID: "com.example.app", includeServices: ["auth", ""], androidBiometryAcceptsPasscode: true),
        ImportOptions(excludeServices: ["auth"], serviceMap: ["": "main", "bio": "biometric"]),
    ])
    func noSecretInAnyText(options: ImportOptions) throws {
        var withNul = rnkRecord(
            service: "nul", account: .string("rnk-secret-user-nul"), password: "rnk-secret-pass\u{0}nul",
            location: "item 4")
        withNul.synchronizable = true
        var binary = rnkRecord(service: "binary", account: .string("rnk-secret-user-bin"), location: "item 5")
        binary.value = .data(Data([0xFF]) + Data("rnk-secret-pass-bin".utf8))
        let records = [
            rnkRecord(account: .string("rnk-secret-user-1"), password: "rnk-secret-pass-1", pdmn: "dk"),
            rnkRecord(
                service: "auth", account: .string("rnk-secret-user-2"), password: "rnk-secret-pass-2",
                flags: [.biometryCurrentSet], location: "item 2"),
            rnkRecord(
                "inet", service: nil, server: "https://example.com", account: .string("rnk-secret-user-3"),
                password: "rnk-secret-pass-3", pdmn: "aku", flags: [.biometryAny, .devicePasscode, .and], sync: true,
                location: "item 3"),
            withNul, binary,
            rnkRecord(account: .string("_pfo"), password: "rnk-secret-pass-pfo", location: "item 6"),
            rnkRecord(
                service: "other", account: .string("rnk-secret-user-7"), password: "rnk-secret-pass-7",
                group: "ZZZZZ99999.com.other", location: "item 7"),
            rnkRecord(
                service: "auth", account: .string("rnk-secret-user-8"), password: "rnk-secret-pass-8", pdmn: "zz",
                location: "item 8"),
        ]
        var dumps = [keychainDump(records)]
        dumps += try ReactNativeKeychainAndroidTests.generated(
            "v8-sharedprefs", ["RN_KEYCHAIN.xml", "crypto.KEY_256.xml"])
        dumps += try ReactNativeKeychainAndroidTests.generated(
            "v9.2-datastore-and-sharedprefs", ["RN_KEYCHAIN.xml", "RN_KEYCHAIN.preferences_pb"])
        dumps.append(
            try ImporterFixtures.sharedPreferences(
                "rnkeychain-conceal-eclipse7-RN_KEYCHAIN.xml", as: "other/shared_prefs/RN_KEYCHAIN.xml"))
        let keyDump = try ImporterFixtures.sharedPreferences(
            "rnkeychain-conceal-eclipse7-crypto.KEY_256.xml", as: "other/shared_prefs/crypto.KEY_256.xml")
        dumps.append(keyDump)
        let items = try ReactNativeKeychainImporter().importItems(from: dumps, options: options)
        #expect(items.count == records.count + 7 + 6 + 2)

        var secrets = ReactNativeKeychainAndroidTests.generatedSecrets + ["_pfo"]
        secrets += (1...8).flatMap { ["rnk-secret-user-\($0)", "rnk-secret-pass-\($0)"] }
        secrets += ["rnk-secret-user-nul", "rnk-secret-pass\u{0}nul", "rnk-secret-user-bin", "rnk-secret-pass-bin"]
        // Whatever was decrypted (the real fixture's values among them), and the Conceal keys.
        for item in items {
            if case .credentials(let username, let password) = item.value { secrets += [username, password] }
        }
        guard case .preferences(let keyEntries) = keyDump.content, case .string(let key)? = keyEntries.first?.value
        else {
            Issue.record("the key fixture has no cipher_key")
            return
        }
        secrets += [
            key.trimmingCharacters(in: .whitespacesAndNewlines), "ed65fca77d903b55",
            "7WX8p32QO1W64/E3x037LR6/sNH6jU+dw4nYsnOodm0=",
        ]
        expectNoSecrets(items, secrets)
        // The username is reported only as the account.
        #expect(items.contains { $0.source.account == "rnk-secret-user-1" })
        #expect(items.contains { $0.source.account == "rnkgen-default-user" })
    }
}

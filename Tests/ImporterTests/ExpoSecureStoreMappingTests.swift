import ApexDumps
import ApexKeychain
import ApexMigration
import ExpoSecureStoreImporter
import Foundation
import Testing

@Suite("expo-secure-store importer: protection mapping and secrecy")
struct ExpoSecureStoreMappingTests {
    /// pdmn → the target class, and whether the step is noted.
    static let classes: [(pdmn: String, accessible: Accessible?, noted: Bool)] = [
        ("ak", .whenUnlocked, false), ("ck", .afterFirstUnlock, false), ("aku", .whenUnlockedThisDeviceOnly, false),
        ("cku", .afterFirstUnlockThisDeviceOnly, false), ("akpu", .whenPasscodeSetThisDeviceOnly, true),
        ("dk", .afterFirstUnlock, true), ("dku", .afterFirstUnlockThisDeviceOnly, true), ("f", nil, false),
        ("xyz", nil, false),
    ]

    /// Access-control flags → the target access control (nil: blocked).
    static let controls: [(flags: AccessControlFlags, control: AccessControl?)] = [
        ([], AccessControl.none),
        (.userPresence, .biometryAnyOrPasscode),
        ([.biometryAny, .devicePasscode, .or], .biometryAnyOrPasscode),
        (.biometryAny, .biometryAny),
        (.biometryCurrentSet, .biometryCurrentSet),
        (.devicePasscode, .passcode),
        ([.biometryCurrentSet, .devicePasscode, .or], .biometryCurrentSetOrPasscode),
        ([.biometryAny, .devicePasscode, .and], nil),
        ([.biometryCurrentSet, .devicePasscode, .and], nil),
        ([.biometryCurrentSet, .devicePasscode], nil),
        ([.biometryAny, .biometryCurrentSet, .or], nil),
        ([.userPresence, .applicationPassword], nil),
        (.applicationPassword, nil),
        ([.biometryCurrentSet, .applicationPassword], nil),
        (.watch, nil),
        ([.biometryAny, .watch, .or], nil),
        (.privateKeyUsage, nil),
    ]

    @Test("every pdmn × access control of an iOS item maps as the table says, never weaker")
    func iosTable() throws {
        var records: [KeychainRecord] = []
        var expected: [(Accessible?, AccessControl?, Bool)] = []
        for (i, row) in Self.classes.enumerated() {
            for (j, column) in Self.controls.enumerated() {
                records.append(
                    Expo.item(
                        "\(i).\(j)", service: "app", key: "k\(i)_\(j)", pdmn: row.pdmn,
                        flags: column.flags.isEmpty ? nil : column.flags))
                expected.append((row.accessible, column.control, row.noted))
            }
        }
        let items = try Expo.run([Expo.keychain(records)], Expo.app)
        #expect(items.count == records.count)
        for (item, (accessible, control, noted)) in zip(items, expected) {
            let context = Comment(rawValue: "\(item.origin.location) \(item.source.protection)")
            if let accessible, let control {
                #expect(item.verdict == .migrate, context)
                #expect(item.target?.options.accessible == accessible, context)
                #expect(item.target?.options.accessControl == control, context)
                #expect(item.target?.options.authValidity == (control == .none ? nil : 0), context)
                #expect(item.target?.options.synchronizable == false, context)
                #expect(!item.notes.isEmpty == noted, context)
                if let pdmn = ProtectionDomain(rawValue: item.source.protection["pdmn"] ?? "") {
                    // Never weaker: the target is readable in no state the source wasn't.
                    #expect(accessible.isThisDeviceOnly == pdmn.rawValue.hasSuffix("u"), context)
                    #expect(
                        !(pdmn.accessible?.requiresUnlockedDevice ?? false) || accessible.requiresUnlockedDevice,
                        context)
                }
            } else {
                guard case .blocked(let why) = item.verdict else {
                    Issue.record("not blocked: \(context.rawValue)")
                    continue
                }
                #expect(!why.isEmpty, context)
                // The intended target, with no protection (issue 14, item 2).
                #expect(
                    item.target == .unknownProtection(service: "app", key: item.source.account ?? "", kind: .string),
                    context)
            }
        }
    }

    /// Android: (legacy layout, requireAuthentication JSON) → (access control, class); nil: blocked.
    static let android: [(legacy: Bool, flag: String?, control: AccessControl?, accessible: Accessible?)] = [
        (false, "false", AccessControl.none, .afterFirstUnlockThisDeviceOnly),
        (false, nil, AccessControl.none, .afterFirstUnlockThisDeviceOnly),
        (false, "true", .biometryCurrentSet, .whenPasscodeSetThisDeviceOnly),
        (false, "\"biometry\"", .biometryCurrentSet, .whenPasscodeSetThisDeviceOnly),
        (false, "\"deviceCredentials\"", .biometryCurrentSetOrPasscode, .whenPasscodeSetThisDeviceOnly),
        (false, "\"True\"", .biometryCurrentSet, .whenPasscodeSetThisDeviceOnly),
        (false, "\"false\"", AccessControl.none, .afterFirstUnlockThisDeviceOnly),
        (false, "\"pin\"", nil, nil),
        (false, "0", nil, nil),
        (true, nil, .biometryCurrentSet, .whenPasscodeSetThisDeviceOnly),
        (true, "true", .biometryCurrentSet, .whenPasscodeSetThisDeviceOnly),
        (true, "false", .biometryCurrentSet, .whenPasscodeSetThisDeviceOnly),
        (true, "\"pin\"", .biometryCurrentSet, .whenPasscodeSetThisDeviceOnly),
    ]

    @Test("every Android layout × requireAuthentication maps as the table says")
    func androidTable() throws {
        let entries = Self.android.enumerated().map { index, row in
            var fields = [("ct", "\"AAAA\""), ("iv", "\"AAAAAAAAAAAAAAAA\""), ("tlen", "128"), ("scheme", "\"aes\"")]
            if !row.legacy { fields += [("usesKeystoreSuffix", "true"), ("keystoreAlias", "\"key_v1\"")] }
            if let flag = row.flag { fields.append(("requireAuthentication", flag)) }
            return (row.legacy ? "k\(index)" : "key_v1-k\(index)", Expo.json(fields))
        }
        let items = try Expo.run([Expo.prefs(entries)])
        #expect(items.count == Self.android.count)
        for (index, (item, row)) in zip(items, Self.android).enumerated() {
            let context = Comment(rawValue: "legacy \(row.legacy), requireAuthentication \(row.flag ?? "absent")")
            #expect(item.source.account == "k\(index)", context)
            if let control = row.control {
                #expect(item.verdict == .migrate, context)
                #expect(item.target?.options.accessControl == control, context)
                #expect(item.target?.options.accessible == row.accessible, context)
                #expect(item.target?.options.synchronizable == false, context)
                #expect(!item.notes.isEmpty, context)
            } else {
                guard case .blocked = item.verdict else {
                    Issue.record("not blocked: \(context.rawValue)")
                    continue
                }
                // The intended target, with no protection (issue 14, item 2).
                #expect(item.target == .unknownProtection(service: "app", key: "k\(index)", kind: .string), context)
            }
            guard case .sealed = item.value else {
                Issue.record("not sealed: \(context.rawValue)")
                continue
            }
        }
    }

    @Test("no description, verdict reason or note holds a secret value of the inputs")
    func noSecretsInReports() throws {
        let secrets = [
            "hunter2-SECRET", "s3cr3t-refresh-token", "NUL-secret", "biometric-secret", "synced-secret", "dup-secret",
        ]
        var notUTF8 = Expo.item("bad", key: "bad")
        notUTF8.value = .data(Data("bad-UTF8-secret".utf8) + Data([0xFF]))
        let records = [
            Expo.item("1", service: "app:no-auth", key: "a", value: secrets[0]),
            Expo.item("2", service: "app", key: "a", value: secrets[1]),
            Expo.item("3", service: "app", key: "b", value: "\(secrets[2])\u{0}x"),
            Expo.item(
                "4", service: "app:auth", key: "c", value: secrets[3], flags: [.biometryAny, .devicePasscode, .and]),
            Expo.item("5", service: "app", key: "d", value: secrets[4], pdmn: "aku", sync: true),
            Expo.item("6", service: "app", key: "e", value: secrets[5], pdmn: "dk"),
            notUTF8,
        ]
        var dumps = [
            Expo.keychain(records),
            Expo.keychain([Expo.item("1", service: "app:no-auth", key: "a", value: secrets[5])], path: "second.plist"),
            try Expo.iosPlist("expo-generated/ios-keychain.plist"),
        ]
        let plistSecrets = (1...9).map { "made-up-value-\($0)" }
        var androidSecrets: [String] = []
        for fixture in [
            "expo-securestore-metocare-SecureStore.xml", "expo-securestore-expogo-scoped-key_v1-SecureStore.xml",
            "expo-generated/legacy-12.0-SecureStore.xml", "expo-generated/new-12.5-SecureStore.xml",
            "expo-generated/pr41409-SecureStore.xml", "expo-generated/damaged-SecureStore.xml",
        ] {
            let dump = try Expo.prefs(fixture)
            dumps.append(dump)
            guard case .preferences(let entries) = dump.content else { continue }
            for entry in entries {
                guard case .string(let text) = entry.value else { continue }
                let fields = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
                for field in ["ct", "iv", "esk"] {
                    if let value = fields?[field] as? String, value.count >= 8 { androidSecrets.append(value) }
                }
                if fields == nil { androidSecrets.append(text) }
            }
        }
        let items = try Expo.run(dumps)
        #expect(items.count == records.count + 1 + 8 + 3 + 1 + 3 + 4 + 4 + 5)
        #expect(androidSecrets.count > 20)
        for item in items {
            for text in Expo.texts(item) {
                for secret in secrets + ["bad-UTF8-secret"] + plistSecrets + androidSecrets {
                    #expect(!text.contains(secret), "a secret leaked into \(item.origin.path) \(item.origin.location)")
                }
            }
        }
    }
}

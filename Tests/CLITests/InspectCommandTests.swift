import Foundation
import Testing

/// The repository's `samples/` folder, found from this file's path.
let samplesFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("samples")

/// The path of a bundled sample dump.
func sample(_ path: String) -> String { samplesFolder.appendingPathComponent(path).path }

/// Secret values of the react-native-keychain iOS sample (see Sources/dump-samples): none may be printed.
let sampleSecrets = [
    "sample-password-0001", "sample-password-0002", "sample-password-0003", "sample-token-0001", "sample-token-0002",
]

/// The JSON object on stdout.
func jsonObject(_ result: CLIResult) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
}

/// `apex-keychain inspect`: what dumps hold, without values.
@Suite("inspect")
struct InspectCommandTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    @Test("--format json lists the sample's items with their source only, and no value or username")
    func json() async throws {
        let plist = sample("react-native-keychain/ios/keychain.plist")
        let result = try await sandbox.run(["inspect", plist, "--format", "json"])
        #expect(result.status == 0)
        #expect(result.messages == "")
        #expect(result.out.hasSuffix("}\n"))
        let report = try jsonObject(result)
        #expect(report["formatVersion"] as? Int == 1)
        let sources = try #require(report["sources"] as? [[String: Any]])
        #expect(sources.count == 1)
        #expect(sources.first?["path"] as? String == plist)
        #expect(sources.first?["format"] as? String == "ios-plist")
        #expect(sources.first?["library"] as? String == "react-native-keychain")
        #expect(sources.first?["platform"] as? String == "ios")
        let items = try #require(report["items"] as? [[String: Any]])
        #expect(items.count == 11)
        for item in items {
            #expect(Set(item.keys) == ["source", "notes"])
            let source = try #require(item["source"] as? [String: Any])
            #expect(source["library"] as? String == "react-native-keychain")
            #expect(source["path"] as? String == plist)
            #expect(source["account"] is NSNull)
        }
        let services = items.compactMap { ($0["source"] as? [String: Any])?["service"] as? String }
        #expect(services.contains("auth"))
        #expect(services.contains("vault"))
        #expect((report["summary"] as? [String: Any])?["found"] as? Int == 11)
        for secret in sampleSecrets + ["sample-user"] { #expect(!result.out.contains(secret)) }
    }

    @Test("--include-labels shows usernames, never values")
    func includeLabels() async throws {
        let result = try await sandbox.run(
            ["inspect", sample("react-native-keychain/ios/keychain.plist"), "--format", "json", "--include-labels"])
        #expect(result.status == 0)
        #expect(result.out.contains("\"account\" : \"sample-user@example.com\""))
        for secret in sampleSecrets { #expect(!result.out.contains(secret)) }
    }

    @Test("text lists the sources, a table and the count")
    func text() async throws {
        let plist = sample("react-native-keychain/ios/keychain.plist")
        let result = try await sandbox.run(["inspect", plist])
        #expect(result.status == 0)
        #expect(result.messages == "")
        #expect(
            result.out.hasPrefix(
                "source: \(plist) (ios-plist, react-native-keychain, ios)\n\nreact-native-keychain ios: \(plist), 11 items\n"
                    + "  ITEM                          CLASS  PROTECTION\n"))
        #expect(result.out.hasSuffix("\nfound 11 item(s)\n"))
        for secret in sampleSecrets { #expect(!result.out.contains(secret)) }
    }

    @Test("a folder is searched for the dumps the importers know")
    func folder() async throws {
        let result = try await sandbox.run(["inspect", sample("react-native-keychain/android"), "--format", "json"])
        #expect(result.status == 0)
        let sources = try #require(try jsonObject(result)["sources"] as? [[String: Any]])
        let paths = sources.compactMap { $0["path"] as? String }
        #expect(paths.contains { $0.hasSuffix("shared_prefs/RN_KEYCHAIN.xml") })
        #expect(paths.contains { $0.hasSuffix("files/datastore/RN_KEYCHAIN.preferences_pb") })
        #expect(!paths.contains { $0.hasSuffix("com.example.sampleapp_preferences.xml") })
        #expect(sources.allSatisfy { $0["platform"] as? String == "android" })
    }

    @Test("a missing path exits 66, naming it")
    func missing() async throws {
        let result = try await sandbox.run(["inspect", "nope.plist"])
        #expect(result.status == 66)
        #expect(result.out == "")
        #expect(result.messages.hasPrefix("apex-keychain: nope.plist: "))
    }

    @Test("a file of unknown format exits 65, naming it")
    func malformed() async throws {
        let bad = try sandbox.write("bad.plist", "not a dump\n")
        let result = try await sandbox.run(["inspect", bad])
        #expect(result.status == 65)
        #expect(result.out == "")
        #expect(result.messages.hasPrefix("apex-keychain: \(bad): unknown format: "))
    }

    @Test("no path is a usage error")
    func noPath() async throws {
        let result = try await sandbox.run(["inspect"])
        #expect(result.status == 64)
        #expect(
            result.messages == """
                apex-keychain: missing expected argument '<path> ...'
                Run 'apex-keychain inspect --help' for usage.

                """)
    }
}

/// Review (command line, item 8): lines up to 269 columns wide. With `COLUMNS=80`, no line of `migrate` or
/// `inspect` text is wider than 80 (but a line holding one token longer than that), on every bundled sample;
/// without it (a pipe), rows are not wrapped.
@Suite("text output fits the terminal")
struct TerminalWidthTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let samples = [
        "react-native-keychain/ios/keychain.plist", "react-native-keychain/ios/objection-dump.json",
        "react-native-keychain/android", "expo-secure-store/ios", "expo-secure-store/android",
        "react-native-sensitive-info/ios", "react-native-sensitive-info/android",
        "react-native-encrypted-storage/ios/keychain-with-another-sdk.plist",
        "react-native-encrypted-storage/android-fallback",
    ]

    @Test("with COLUMNS=80, no line is wider than 80 but a single long token", arguments: samples)
    func fits(sample name: String) async throws {
        for command in [["inspect"], ["migrate", "--bundle-id", "com.example.sampleapp"]] {
            let result = try await sandbox.run(command + [sample(name)], environment: ["COLUMNS": "80"])
            #expect(result.status == 0 || result.status == 1)
            // A token longer than the line (a long path) goes on a line of its own, whole, and is the one exception.
            let wide: [String] = result.out.split(separator: "\n").map(String.init).filter {
                $0.count > 80 && $0.split(separator: " ").count > 1
            }
            #expect(wide.isEmpty, "\(command[0]) \(name): \(wide.first ?? "")")
            #expect(!result.out.isEmpty)
        }
    }

    @Test("without COLUMNS and a terminal, rows are one line each")
    func unlimited() async throws {
        let result = try await sandbox.run([
            "migrate", sample("react-native-keychain/ios/keychain.plist"), "--bundle-id", "com.example.sampleapp",
        ])
        #expect(result.out.split(separator: "\n").contains { $0.count > 80 })
        #expect(
            result.out.contains(
                "  https://api.example.com:8443 [ak, userPresence]  com.example.sampleapp/credentials:https://api.example.com:8443 [credentials, whenUnlocked, biometryAnyOrPasscode]  create"
            ))
    }

    /// Issue 31: "never weaker" could not be seen in migrate's text, which showed the target's protection only.
    @Test("migrate's rows show the protection as found beside the target's")
    func sourceProtectionBesideTarget() async throws {
        let result = try await sandbox.run([
            "migrate", sample("react-native-keychain/ios/keychain.plist"), "--bundle-id", "com.example.sampleapp",
        ])
        let rows = result.out.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        for row in [
            "auth [aku] auth/credentials [credentials, whenUnlockedThisDeviceOnly, none] create",
            "vault [aku, biometryCurrentSet] vault/credentials [credentials, whenUnlockedThisDeviceOnly, biometryCurrentSet] create",
            "passcode-only [akpu, devicePasscode] passcode-only/credentials [credentials, whenPasscodeSetThisDeviceOnly, passcode] create",
            "cloud [ck, synchronizable] cloud/credentials [credentials, afterFirstUnlock, none] create",
        ] {
            #expect(rows.contains(row), "\(row)")
        }
        let android = try await sandbox.run(["migrate", sample("react-native-keychain/android"), "--bundle-id", "x"])
        #expect(android.out.contains("  auth [KeystoreAESGCM] "), "the cipher, for an Android item")
    }
}

/// Review (command line, item 9): `inspect` repeated library and platform on every row, showed the raw DER
/// before the flags decoded from it, counted "items share this service" across files, and showed Android's
/// default service as nothing.
@Suite("inspect shows each file's items legibly")
struct InspectLegibilityTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    @Test("four exports of one keychain: a group per file, and no 'share this service' note counted across them")
    func groupsPerFile() async throws {
        let result = try await sandbox.run(["inspect", sample("react-native-keychain/ios")])
        #expect(result.status == 0)
        let headings = result.out.split(separator: "\n").filter { $0.hasPrefix("react-native-keychain ios: ") }
        #expect(headings.count == 4, "\(headings)")
        #expect(!result.out.contains("share this service"))
        #expect(!result.out.contains("\nreact-native-keychain  ios"))
    }

    @Test(
        "decoded access-control flags, the raw DER after them only with --verbose; an empty service is (default) on Android, (no service) on iOS"
    )
    func protectionAndDefault() async throws {
        let path = sample("react-native-keychain/ios/keychain.plist")
        let ios = try await sandbox.run(["inspect", path])
        let vault = try #require(ios.out.split(separator: "\n").first { $0.hasPrefix("  vault ") })
        #expect(vault.hasSuffix("accessControl=biometryCurrentSet, pdmn=aku, synchronizable=false"), "\(vault)")
        #expect(!ios.out.contains("der:"))
        let verbose = try await sandbox.run(["inspect", "--verbose", path])
        let full = try #require(verbose.out.split(separator: "\n").first { $0.hasPrefix("  vault ") })
        let flags = try #require(full.firstRange(of: "accessControlFlags=biometryCurrentSet"))
        let der = try #require(full.firstRange(of: "accessControl=der:"))
        #expect(flags.lowerBound < der.lowerBound)
        let android = try await sandbox.run(["inspect", sample("react-native-keychain/android")])
        #expect(android.out.contains("\n  (default) "))
        // Markdown names it too (its cell was the library and platform and nothing after them).
        let markdown = try await sandbox.run(
            ["migrate", sample("react-native-keychain/android"), "--format", "markdown"])
        #expect(markdown.out.contains("| `react-native-keychain android (default)` |"), "\(markdown.out)")
        // react-native-encrypted-storage's iOS items have no service.
        let noService = try await sandbox.run(["inspect", sample("react-native-encrypted-storage/ios/keychain.plist")])
        #expect(noService.out.contains("\n  (no service) / user_session "), "\(noService.out)")
        #expect(noService.out.contains("\n  (no service) / persist:root "), "absent, not empty: \(noService.out)")
    }

    @Test("a folder of real-world dumps is read: the device-keys plist in it is skipped as not a keychain dump")
    func realWorldFolder() async throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("ApexDumpsTests/Fixtures/real-world/ios-device-keys-keybag-passcode0000.plist")
        let copy = sandbox.path("dumps")
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: folder.path, toPath: copy + "/keys.plist")
        try FileManager.default.copyItem(
            atPath: sample("react-native-keychain/ios/keychain.plist"), toPath: copy + "/keychain.plist")
        let result = try await sandbox.run(["inspect", copy])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("skipped \(copy)/keys.plist: not a keychain dump"), "\(result.err)")
        let named = try await sandbox.run(["inspect", copy + "/keys.plist"])
        #expect(named.status == 65)
        #expect(named.err.contains("device-keys plist"))
    }
}

import Foundation
import Testing

/// react-native-sensitive-info through the binary: `--from`, discovery of its files in an app data folder, the
/// `app` service shared with expo-secure-store, malformed input, and no value in any output.
@Suite("react-native-sensitive-info")
struct SensitiveInfoCLITests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let ios = sample("react-native-sensitive-info/ios")
    static let android = sample("react-native-sensitive-info/android")
    static let prefs = "react-native-sensitive-info/android/shared_prefs/"
    /// Every value of the two samples (see Sources/SampleDumps/ReactNativeSensitiveInfoSamples.swift).
    static let secrets = [
        "sample-token-0400", "sample-token-0401", "sample-pin-0402", "sample-secret-0403", "sample-token-0404",
        "sample-token-0405", "sample-setting-0406", "sample-session-0407", "sample-api-key-0408", "sample-seed-0409",
        "sample-token-0500", "sample-user-0501", "sample-token-0502",
    ]

    func items(_ result: CLIResult) throws -> [[String: Any]] {
        try #require(try jsonObject(result)["items"] as? [[String: Any]])
    }

    @Test("no value shows in inspect or migrate output, in any format, nor in a report file")
    func secrecy() async throws {
        let store = try await sandbox.initStore(device: "ios")
        for arguments in [
            ["inspect", Self.ios], ["inspect", Self.android, "--format", "json"],
            ["migrate", Self.ios, "--format", "markdown"], ["migrate", Self.android, "--format", "json"],
            ["migrate", Self.android, "--from", "react-native-sensitive-info", "--include-labels"],
            ["migrate", Self.ios, "--store", store, "--format", "json", "--report", sandbox.path("report.txt")],
        ] {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 0 || result.status == 1, "\(arguments): \(result.err)")
            let report = (try? String(contentsOfFile: sandbox.path("report.txt"), encoding: .utf8)) ?? ""
            for secret in Self.secrets {
                #expect(
                    ![result.out, result.err, report].contains { $0.contains(secret) },
                    "\(arguments): \(secret) is shown")
            }
        }
        let get = try await sandbox.run(["store", "get", "--store", store, "--service", "vault", "walletSeed"])
        #expect(get.out == "sample-seed-0409")
    }

    @Test("discovery: the app data folder's library files are found, the app's own preferences skipped")
    func discovery() async throws {
        let result = try await sandbox.run(["inspect", Self.android, "--format", "json"])
        #expect(result.status == 0)
        #expect(
            result.err
                == "skipped \(sample(Self.prefs + "com.example.rnsiapp_preferences.xml")): not a keychain dump\n")
        let sources = try #require(try jsonObject(result)["sources"] as? [[String: Any]])
        #expect(sources.count == 6)
        #expect(sources.allSatisfy { $0["library"] as? String == "react-native-sensitive-info" })
        #expect(try items(result).count == 13)
    }

    @Test("a plain file under a custom name is only read with --from react-native-sensitive-info")
    func customNameNeedsFrom() async throws {
        let file = try sandbox.write(
            "secure_prefs.xml",
            "<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map>\n    <string name=\"token\">sample-plain-0600</string>\n</map>\n"
        )
        let auto = try await sandbox.run(["migrate", file])
        #expect(auto.status == 65)
        #expect(auto.err.contains("secure_prefs.xml: not a keychain dump"))
        let named = try await sandbox.run([
            "migrate", file, "--from", "react-native-sensitive-info", "--format", "json",
        ])
        #expect(named.status == 0, "\(named.err)")
        let item = try #require(try items(named).first)
        #expect((item["action"] as? String) == "create")
        #expect((item["notes"] as? [String])?.contains { $0.contains("--from react-native-sensitive-info") } == true)
        #expect(!named.out.contains("sample-plain-0600"))
        // The app's own preferences stay out, named or not.
        let own = try await sandbox.run([
            "migrate", sample(Self.prefs + "com.example.rnsiapp_preferences.xml"), "--from",
            "react-native-sensitive-info",
        ])
        #expect(own.status == 65)
    }

    @Test("expo-secure-store's and react-native-sensitive-info's `app` items each go to their own library")
    func sharedAppService() async throws {
        let result = try await sandbox.run([
            "migrate", sample("expo-secure-store/ios"), Self.ios, "--format", "json", "--device", "ios",
        ])
        #expect(result.status == 0 || result.status == 1, "\(result.err)")
        var byLibrary: [String: Int] = [:]
        var origins = Set<String>()
        for item in try items(result) {
            let source = try #require(item["source"] as? [String: Any])
            byLibrary[source["library"] as? String ?? "", default: 0] += 1
            #expect(
                origins.insert("\(source["path"] ?? "") \(source["location"] ?? "")").inserted, "an item claimed twice")
        }
        #expect(byLibrary == ["expo-secure-store": 7, "react-native-sensitive-info": 11])
    }

    @Test("a damaged file is an error naming it; a damaged entry is skipped with a reason")
    func malformed() async throws {
        let cut = try sandbox.write(
            "sensitive_info.xml", "<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map>\n    <string name=\""
        )
        let result = try await sandbox.run(["migrate", cut, "--from", "react-native-sensitive-info"])
        #expect(result.status == 65)
        #expect(result.err.hasPrefix("apex-keychain: \(cut): "))
        try FileManager.default.createDirectory(
            at: sandbox.url.appendingPathComponent("shared_prefs"), withIntermediateDirectories: true)
        let entry = try sandbox.write(
            "shared_prefs/sensitive_info.xml",
            "<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map>\n    <string name=\"default::k\">{&quot;ciphertext&quot;: sample-cut-0601</string>\n</map>\n"
        )
        let skipped = try await sandbox.run(["migrate", entry, "--format", "json"])
        #expect(skipped.status == 0, "\(skipped.err)")
        let item = try #require(try items(skipped).first)
        #expect(item["action"] as? String == "skipped")
        #expect((item["reason"] as? String)?.contains("not a react-native-sensitive-info entry") == true)
        #expect(!skipped.out.contains("sample-cut-0601"))
    }
}

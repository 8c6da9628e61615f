import Foundation
import Testing

/// `apex-keychain migrate`: plans (dry runs), runs into a store, conflicts and exit codes.
@Suite("migrate")
struct MigrateCommandTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let actions: Set<String> = ["create", "exists", "conflict", "blocked", "sealed", "shadowed", "skipped"]
    static let plist = sample("react-native-keychain/ios/keychain.plist")

    /// The items' actions of a JSON report.
    func actions(_ report: [String: Any]) throws -> [String] {
        let items = try #require(report["items"] as? [[String: Any]])
        return items.compactMap { $0["action"] as? String }
    }

    /// The summary of a JSON report.
    func summary(_ report: [String: Any]) throws -> [String: Int] {
        try #require(report["summary"] as? [String: Int])
    }

    /// `store list --all-services`.
    func list(_ store: String) async throws -> String {
        let result = try await sandbox.run(["store", "list", "--store", store, "--all-services"])
        try #require(result.status == 0, "store list failed: \(result.err)")
        return result.out
    }

    @Test("without --store it is a dry run: exit 0, the plan in JSON, no secret anywhere")
    func dryRun() async throws {
        let result = try await sandbox.run(
            ["migrate", Self.plist, "--bundle-id", "com.example.sampleapp", "--format", "json"])
        #expect(result.status == 0)
        #expect(result.messages == "")
        let report = try jsonObject(result)
        #expect(report["formatVersion"] as? Int == 1)
        #expect(report["dryRun"] as? Bool == true)
        #expect(report["device"] as? String == "ios")
        let actions = try actions(report)
        let summary = try summary(report)
        #expect(actions.count == 11)
        #expect(summary["found"] == actions.count)
        #expect(Set(actions).isSubset(of: Self.actions))
        for action in Self.actions { #expect(summary[action] == actions.filter { $0 == action }.count) }
        #expect(summary["written"] == 0)
        #expect(summary["create"] == 10)
        #expect(summary["skipped"] == 1)
        let items = try #require(report["items"] as? [[String: Any]])
        for item in items {
            #expect(item["target"] != nil)
            #expect((item["source"] as? [String: Any])?["account"] is NSNull)
        }
        for secret in sampleSecrets + ["sample-user"] {
            #expect(!result.out.contains(secret))
            #expect(!result.err.contains(secret))
        }
    }

    @Test("text and markdown show the same plan")
    func textAndMarkdown() async throws {
        let text = try await sandbox.run(["migrate", Self.plist, "--bundle-id", "com.example.sampleapp"])
        #expect(text.status == 0)
        #expect(text.out.hasPrefix("Dry run for device ios: nothing was written.\n"))
        #expect(
            text.out.hasSuffix(
                "\nsummary: found 11, create 10, exists 0, conflict 0, blocked 0, sealed 0, shadowed 0, skipped 1\n"))
        let markdown = try await sandbox.run(
            ["migrate", Self.plist, "--bundle-id", "com.example.sampleapp", "--format", "markdown"])
        #expect(markdown.status == 0)
        #expect(markdown.out.hasPrefix("## Keychain migration (dry run)\n\nDevice: `ios`\n"))
        for secret in sampleSecrets { #expect(!text.out.contains(secret) && !markdown.out.contains(secret)) }
    }

    @Test("--device plans for another profile; an Android folder defaults to android")
    func device() async throws {
        let noBiometrics = try await sandbox.run(
            ["migrate", Self.plist, "--device", "ios-no-biometrics", "--format", "json"])
        #expect(noBiometrics.status == 0)
        let report = try jsonObject(noBiometrics)
        #expect(report["device"] as? String == "ios-no-biometrics")
        #expect(try summary(report)["blocked", default: 0] > 0)
        let android = try await sandbox.run(["migrate", sample("react-native-keychain/android"), "--format", "json"])
        #expect(android.status == 0)
        #expect(try jsonObject(android)["device"] as? String == "android")
    }

    @Test("--report writes the report to a file as well")
    func reportFile() async throws {
        let file = sandbox.path("report.md")
        let result = try await sandbox.run(
            ["migrate", Self.plist, "--bundle-id", "com.example.sampleapp", "--format", "markdown", "--report", file])
        #expect(result.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == result.stdout)
    }

    @Test("a run writes into the store; a second run finds everything 'exists' and writes nothing")
    func runTwice() async throws {
        let store = try await sandbox.initStore(device: "ios")
        let first = try await sandbox.run(
            ["migrate", Self.plist, "--store", store, "--bundle-id", "com.example.sampleapp", "--format", "json"])
        let report = try jsonObject(first)
        let summary = try summary(report)
        let problems = summary["conflict", default: 0] + summary["blocked", default: 0] + summary["failed", default: 0]
        #expect(first.status == (problems > 0 ? 1 : 0))
        if first.status == 0 { #expect(first.messages == "") }
        #expect(report["dryRun"] as? Bool == false)
        #expect(report["device"] as? String == "ios")
        #expect(summary["written"] == summary["create"])
        #expect(summary["verified"] == summary["create"])
        for secret in sampleSecrets { #expect(!first.out.contains(secret) && !first.err.contains(secret)) }
        let firstActions = try actions(report)
        let listed = try await list(store)
        #expect(listed.contains("auth\tcredentials\n"))
        #expect(listed.contains("com.example.sampleapp\tcredentials:https://example.com\n"))

        let get = try await sandbox.run(["store", "get", "--store", store, "--service", "auth", "credentials"])
        #expect(get.out == "sample-token-0001")

        let second = try await sandbox.run(
            ["migrate", Self.plist, "--store", store, "--bundle-id", "com.example.sampleapp", "--format", "json"])
        #expect(second.status == first.status)
        let again = try jsonObject(second)
        let secondActions = try actions(again)
        #expect(secondActions.count == firstActions.count)
        for (before, after) in zip(firstActions, secondActions) {
            #expect(after == (before == "create" ? "exists" : before))
        }
        #expect(try self.summary(again)["written"] == 0)
        #expect(try await list(store) == listed)
    }

    @Test("--include-labels shows usernames in a run's report")
    func runIncludeLabels() async throws {
        let store = try await sandbox.initStore(device: "ios")
        let result = try await sandbox.run(
            [
                "migrate", Self.plist, "--store", store, "--bundle-id", "com.example.sampleapp", "--format", "json",
                "--include-labels",
            ])
        #expect(result.out.contains("\"account\" : \"sample-user@example.com\""))
        for secret in sampleSecrets { #expect(!result.out.contains(secret)) }
    }

    @Test("--quiet leaves stderr empty on success")
    func quiet() async throws {
        let store = try await sandbox.initStore(device: "ios")
        let result = try await sandbox.run(
            ["migrate", Self.plist, "--store", store, "--bundle-id", "com.example.sampleapp", "--quiet"])
        #expect(result.status == 0)
        #expect(result.messages == "")
        #expect(result.out.hasPrefix("Migration on device ios.\n"))
    }

    @Test("--dry-run with a store plans against it and writes nothing")
    func dryRunWithStore() async throws {
        let store = try await sandbox.initStore(device: "ios")
        let result = try await sandbox.run(
            [
                "migrate", Self.plist, "--store", store, "--dry-run", "--bundle-id", "com.example.sampleapp",
                "--format", "json",
            ])
        #expect(result.status == 0)
        #expect(try jsonObject(result)["dryRun"] as? Bool == true)
        #expect(try await list(store) == "")
    }

    @Test("--on-conflict fail with a conflicting item exits 1 and writes nothing")
    func conflictFail() async throws {
        let store = try await sandbox.initStore(device: "ios")
        try await sandbox.set(store, "credentials", "another-password", ["--service", "auth", "--username", "someone"])
        let result = try await sandbox.run(
            [
                "migrate", Self.plist, "--store", store, "--bundle-id", "com.example.sampleapp", "--on-conflict",
                "fail",
                "--format", "json",
            ])
        #expect(result.status == 1)
        #expect(
            result.err
                == "apex-keychain: \(store): 1 item(s) conflict with what the target holds; nothing was written\n")
        let report = try jsonObject(result)
        #expect(report["dryRun"] as? Bool == true)
        #expect(try summary(report)["conflict"] == 1)
        #expect(try await list(store) == "auth\tcredentials\n")
        let skip = try await sandbox.run(
            ["migrate", Self.plist, "--store", store, "--bundle-id", "com.example.sampleapp", "--format", "json"])
        #expect(skip.status == 1)
        #expect(
            skip.err == "apex-keychain: \(store): 9 items migrated; not migrated: 1 conflict\n",
            "JSON: no verdict on stderr")
        #expect(try summary(try jsonObject(skip))["conflict"] == 1)
    }

    @Test("--remove-source is gone (dump files are never modified): an old command line gets the unknown-option error")
    func removeSourceIsUnknown() async throws {
        let result = try await sandbox.run(["migrate", Self.plist, "--remove-source"])
        #expect(result.status == 64)
        #expect(result.out == "")
        #expect(
            result.messages == """
                apex-keychain: unknown option '--remove-source'
                Run 'apex-keychain migrate --help' for usage.

                """)
        let store = try await sandbox.initStore(device: "ios")
        let withStore = try await sandbox.run(
            ["migrate", Self.plist, "--store", store, "--bundle-id", "com.example.sampleapp", "--remove-source"])
        #expect(withStore.status == 64)
        #expect(withStore.messages.hasPrefix("apex-keychain: unknown option '--remove-source'\n"))
        #expect(try await list(store) == "", "nothing was migrated")
        let help = try await sandbox.run(["migrate", "--help"])
        #expect(!help.out.contains("remove-source"))
    }

    @Test("a missing path exits 66")
    func missing() async throws {
        let result = try await sandbox.run(["migrate", "nope.plist"])
        #expect(result.status == 66)
        #expect(result.out == "")
        #expect(result.messages.hasPrefix("apex-keychain: nope.plist: "))
    }

    @Test("a malformed dump exits 65 and writes nothing")
    func malformed() async throws {
        let store = try await sandbox.initStore(device: "ios")
        let bad = try sandbox.write("bad.plist", "<?xml version=\"1.0\"?><plist><array><dict><key>x")
        let result = try await sandbox.run(["migrate", Self.plist, bad, "--store", store])
        #expect(result.status == 65)
        #expect(result.out == "")
        #expect(result.messages.hasPrefix("apex-keychain: \(bad): "))
        #expect(try await list(store) == "")
    }

    @Test("usage errors exit 64")
    func usageErrors() async throws {
        let unknown = try await sandbox.run(["migrate", Self.plist, "--frobnicate"])
        #expect(unknown.status == 64)
        #expect(
            unknown.messages == """
                apex-keychain: unknown option '--frobnicate'
                Run 'apex-keychain migrate --help' for usage.

                """)
        let map = try await sandbox.run(["migrate", Self.plist, "--service-map", "auth"])
        #expect(map.status == 64)
        #expect(
            map.messages.hasPrefix(
                "apex-keychain: invalid value 'auth' for '--service-map <from=to>'; expected FROM=TO\n"))
        let keyFile = try await sandbox.run(["migrate", Self.plist, "--key-file", "k"])
        #expect(keyFile.status == 64)
        #expect(keyFile.messages.hasPrefix("apex-keychain: '--key-file' unlocks a store: it needs '--store'\n"))
        let store = try await sandbox.initStore(device: "ios")
        let device = try await sandbox.run(["migrate", Self.plist, "--store", store, "--device", "android"])
        #expect(device.status == 64)
        #expect(
            device.messages.hasPrefix("apex-keychain: '--device android' differs from the device of \(store) ('ios')"))
        let from = try await sandbox.run(["migrate", Self.plist, "--from", "keychain"])
        #expect(from.status == 64)
    }

    @Test("--service-map moves a service; --from selects a library")
    func serviceMapAndFrom() async throws {
        let result = try await sandbox.run(
            [
                "migrate", Self.plist, "--bundle-id", "com.example.sampleapp", "--service-map", "auth=login",
                "--format", "json",
            ])
        #expect(result.status == 0)
        let targets = try #require(try jsonObject(result)["items"] as? [[String: Any]])
            .compactMap { ($0["target"] as? [String: Any])?["service"] as? String }
        #expect(targets.contains("login"))
        #expect(!targets.contains("auth"))
        // `=TO` names react-native-keychain's Android default service "", as its blocked reason says to.
        let android = sample("react-native-keychain/android")
        let unmapped = try await sandbox.run(["migrate", android, "--format", "json"])
        let blocked = try #require(try jsonObject(unmapped)["items"] as? [[String: Any]]).first {
            ($0["source"] as? [String: Any])?["service"] as? String == ""
        }
        #expect((blocked?["reason"] as? String)?.contains("name a service for \"\" with --service-map") == true)
        let mapped = try await sandbox.run([
            "migrate", android, "--service-map", "=com.example.app", "--format", "json",
        ])
        #expect(mapped.status == 0, "\(mapped.err)")
        let defaultItem = try #require(try jsonObject(mapped)["items"] as? [[String: Any]]).first {
            ($0["source"] as? [String: Any])?["service"] as? String == "" && $0["action"] as? String != "shadowed"
        }
        #expect((defaultItem?["target"] as? [String: Any])?["service"] as? String == "com.example.app")
        #expect(defaultItem?["action"] as? String != "blocked")
        let empty = try await sandbox.run(["migrate", android, "--service-map", "vault="])
        #expect(empty.status == 64)

        let expo = try await sandbox.run(["migrate", Self.plist, "--from", "expo-secure-store", "--format", "json"])
        #expect(expo.status == 0)
        // The react-native-keychain items are found and listed as skipped, not hidden.
        let found = try summary(try jsonObject(expo))
        #expect(found["found"] == 11 && found["skipped"] == 11 && found["create"] == 0)
    }

    @Test("--help shows the usage with repeated arguments")
    func help() async throws {
        let result = try await sandbox.run(["migrate", "--help"])
        #expect(result.status == 0)
        #expect(result.messages == "")
        #expect(result.out.hasPrefix("OVERVIEW: Plan the migration of keychain dumps, or run it.\n"))
        #expect(result.out.contains("[--service-map <from=to> ...]"))
        #expect(result.out.contains("<path> ...\n"))
    }

    @Test("--help is the golden text: every option (no --remove-source) and the exit codes")
    func goldenHelp() async throws {
        let result = try await sandbox.run(["migrate", "--help"])
        #expect(result.status == 0)
        #expect(result.messages == "")
        try expectGolden(result.out, "migrate-help.txt")
    }
}

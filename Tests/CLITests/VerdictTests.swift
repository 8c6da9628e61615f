import ApexTestSupport
import Foundation
import Testing

/// Issue 31: a run of the react-native-keychain Android sample exited 0 with `sealed 4` and said nothing about the
/// 5 of its 8 secrets that stay behind. Every `inspect` and `migrate` ends with a verdict: on stderr after a text
/// report, and as the JSON report's `verdict`.
@Suite("the verdict: what happens to the secrets found")
struct VerdictTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let android = sample("react-native-keychain/android")
    static let plist = sample("react-native-keychain/ios/keychain.plist")

    static func object(_ result: CLIResult) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.err)")
    }

    @Test("a plan's JSON verdict counts the secrets, and groups those left behind by what they need")
    func planJSON() async throws {
        let result = try await sandbox.run(["migrate", Self.android, "--format", "json"])
        #expect(result.status == 0)
        #expect(result.verdict == nil, "JSON: the verdict is in the report, not on stderr")
        let report = try Self.object(result)
        let verdict = try #require(report["verdict"] as? [String: Any])
        #expect(verdict["kind"] as? String == "plan")
        #expect(verdict["secrets"] as? Int == 8)
        #expect(verdict["migrated"] as? Int == 3)
        #expect(verdict["alreadyThere"] as? Int == 0)
        #expect(verdict["leftBehind"] as? Int == 5)
        #expect(verdict["olderCopies"] as? Int == 2)
        #expect(verdict["leftOut"] as? Int == 0)
        let groups = try #require(verdict["groups"] as? [[String: Any]])
        #expect(groups.map { $0["needs"] as? String } == ["device", "developer"])
        #expect(groups.map { $0["reasonCode"] as? String } == ["sealed", "needsInput"])
        #expect(groups.map { $0["state"] as? String } == ["final", "pending"])
        #expect(groups.map { $0["count"] as? Int } == [4, 1])
        let summary = try #require(report["summary"] as? [String: Int])
        #expect(summary["pending"] == 1 && summary["givenUp"] == 0, "the needsInput item; the plan's creates aren't")
    }

    @Test("after a text report the verdict is on stderr, fitted to the width; --quiet leaves it out")
    func planText() async throws {
        let result = try await sandbox.run(["migrate", Self.android], environment: ["COLUMNS": "80"])
        #expect(result.status == 0)
        let verdict = try #require(result.verdict, "\(result.err)")
        #expect(
            verdict == """
                verdict: 8 secrets found: 3 would be migrated, 5 would be left behind (not
                  counted: 2 shadowed copies)
                  4 need the device (sealed): their value is locked in the Android Keystore;
                      migrate them in the app, on the device (ApexMigration's start-up
                      migration)
                  1 needs you (needsInput, pending): input the run was not given (a flag such as
                      --bundle-id or --service-map, or a key file); each item's reason names it

                """)
        #expect(verdict.split(separator: "\n").allSatisfy { $0.count <= 80 })
        let quiet = try await sandbox.run(["migrate", Self.android, "--quiet"])
        #expect(quiet.err == "")
    }

    @Test("a run's verdict counts what was migrated and what was already there")
    func run() async throws {
        let store = try await sandbox.initStore(device: "ios")
        let migrate = ["migrate", Self.plist, "--bundle-id", "com.example.sampleapp", "--store", store]
        let first = try await sandbox.run(migrate)
        #expect(first.status == 0, "\(first.err)")
        #expect(
            first.verdict
                == "verdict: 10 secrets found: 10 migrated, nothing left behind (not counted: 1 left out on purpose)\n")
        let second = try await sandbox.run(migrate + ["--format", "json"])
        let verdict = try #require(try Self.object(second)["verdict"] as? [String: Any])
        #expect(verdict["kind"] as? String == "run")
        #expect(verdict["migrated"] as? Int == 0 && verdict["alreadyThere"] as? Int == 10)
        #expect(verdict["leftBehind"] as? Int == 0)
    }

    @Test("inspect ends with an inventory's verdict: what these files let be migrated, and what not")
    func inspect() async throws {
        let text = try await sandbox.run(["inspect", Self.android])
        #expect(text.status == 0)
        #expect(
            text.verdict?.hasPrefix(
                "verdict: 8 secrets found: 3 readable from these files, 5 not (not counted: 2 shadowed")
                == true, "\(text.err)")
        let json = try await sandbox.run(["inspect", Self.android, "--format", "json"])
        #expect(json.verdict == nil)
        let verdict = try #require(try Self.object(json)["verdict"] as? [String: Any])
        #expect(verdict["kind"] as? String == "inventory")
        #expect(verdict["secrets"] as? Int == 8 && verdict["migrated"] as? Int == 3)
    }
}

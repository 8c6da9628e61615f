import Foundation
import Testing

/// Review (command line, item 10): one run could not give both the table on screen and the JSON in a file, and
/// the JSON did not say which tool, when, or which store. `--report FILE` takes its format from the extension
/// (or `--report-format`), and the JSON has `toolVersion`, `timestamp` and `store`.
@Suite("migrate --report formats and the report's stamp")
struct ReportFormatTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let plist = sample("react-native-keychain/ios/keychain.plist")
    static let bundle = ["--bundle-id", "com.example.sampleapp"]

    func json(_ data: Data) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("the screen shows the table, and the file holds the format its extension names")
    func formatFromExtension() async throws {
        for (name, check) in [
            ("report.json", { (data: Data) in #expect((try? JSONSerialization.jsonObject(with: data)) != nil) }),
            (
                "report.md",
                { (data: Data) in
                    #expect(String(decoding: data, as: UTF8.self).hasPrefix("## Keychain migration (dry run)"))
                }
            ),
            (
                "report.MARKDOWN",
                { (data: Data) in #expect(String(decoding: data, as: UTF8.self).hasPrefix("## Keychain migration")) }
            ),
            (
                "report.txt",
                { (data: Data) in #expect(String(decoding: data, as: UTF8.self).hasPrefix("Dry run for device ios")) }
            ),
            (
                "report",
                { (data: Data) in #expect(String(decoding: data, as: UTF8.self).hasPrefix("Dry run for device ios")) }
            ),
        ] as [(String, (Data) -> Void)] {
            let result = try await sandbox.run(["migrate", Self.plist, "--report", name] + Self.bundle)
            #expect(result.status == 0, "\(name): \(result.err)")
            #expect(result.out.hasPrefix("Dry run for device ios: nothing was written."), "\(name)")
            check(try Data(contentsOf: URL(fileURLWithPath: sandbox.path(name))))
        }
    }

    @Test("--report-format overrides the extension, and needs --report")
    func explicitFormat() async throws {
        let result = try await sandbox.run(
            ["migrate", Self.plist, "--format", "markdown", "--report", "out.txt", "--report-format", "json"]
                + Self.bundle)
        #expect(result.status == 0)
        #expect(result.out.hasPrefix("## Keychain migration"))
        #expect(try json(Data(contentsOf: URL(fileURLWithPath: sandbox.path("out.txt"))))["formatVersion"] as? Int == 1)
        let alone = try await sandbox.run(["migrate", Self.plist, "--report-format", "json"] + Self.bundle)
        #expect(alone.status == 64)
        #expect(alone.err.contains("'--report-format'"))
        let bad = try await sandbox.run(
            ["migrate", Self.plist, "--report", "r", "--report-format", "yaml"] + Self.bundle)
        #expect(bad.status == 64)
    }

    @Test("the JSON names the tool's version, the time it was made and the store (null without one)")
    func stamp() async throws {
        let version = try await sandbox.run(["--version"]).out.split(separator: " ").last.map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let before = Date().addingTimeInterval(-1)
        let plan = try json(try await sandbox.run(["migrate", Self.plist, "--format", "json"] + Self.bundle).stdout)
        #expect(plan["toolVersion"] as? String == version)
        #expect(plan["store"] is NSNull)
        let stamped = try #require((plan["timestamp"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) })
        #expect(stamped >= before.addingTimeInterval(-1) && stamped <= Date().addingTimeInterval(1))

        let store = try await sandbox.initStore(device: "ios")
        for extra in [["--dry-run"], []] {
            let run = try json(
                try await sandbox.run(
                    ["migrate", Self.plist, "--store", store, "--format", "json"] + extra + Self.bundle
                ).stdout)
            #expect(run["store"] as? String == store, "\(extra)")
            #expect(run["toolVersion"] as? String == version)
        }
    }
}

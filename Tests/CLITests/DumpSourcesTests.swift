import Foundation
import Testing

/// Where `inspect` and `migrate` take their dumps from, on the built binary: what objection's JSON holds of an
/// internet password.
///
/// Dump paths are relative to the sandbox (the tool's working folder), so reports and stderr are the same on
/// every machine.
@Suite("dump sources")
struct DumpSourcesTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// Copies a bundled sample into the sandbox under `name` and returns `name`.
    @discardableResult
    func copySample(_ path: String, as name: String) throws -> String {
        let url = sandbox.url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: sample(path), toPath: url.path)
        return name
    }

    /// The items of a JSON report.
    func items(_ result: CLIResult) throws -> [[String: Any]] {
        try #require(try jsonObject(result)["items"] as? [[String: Any]])
    }

    /// The target keys of a report's internet passwords, by server as found.
    func internetKeys(_ result: CLIResult) throws -> [String] {
        try items(result).filter { ($0["source"] as? [String: Any])?["class"] as? String == "inet" }
            .compactMap { ($0["target"] as? [String: Any])?["key"] as? String }
    }

    static let bundleID = ["--bundle-id", "com.example.sampleapp"]

    // MARK: 1. objection's internet passwords

    @Test("objection's JSON has no server: its internet passwords are blocked with that reason, never a conflict")
    func objectionWithoutServer() async throws {
        let dump = try copySample("react-native-keychain/ios/objection-dump.json", as: "objection-dump.json")
        let text = try await sandbox.run(["migrate", dump] + Self.bundleID)
        #expect(text.status == 0)
        #expect(text.err == "")
        try expectGolden(text.out, "migrate-objection.txt")

        let result = try await sandbox.run(["migrate", dump, "--format", "json"] + Self.bundleID)
        let internet = try items(result).filter { ($0["source"] as? [String: Any])?["class"] as? String == "inet" }
        #expect(internet.count == 2)
        for item in internet {
            #expect(item["action"] as? String == "blocked")
            #expect((item["reason"] as? String)?.hasPrefix("the server, which names the target key (credentials:<server>), is unknown: objection's JSON has no server field") == true)
        }
        let summary = try #require(try jsonObject(result)["summary"] as? [String: Int])
        #expect(summary["conflict"] == 0 && summary["blocked"] == 2)
    }

    @Test("an objection JSON that holds the server maps its internet passwords as the plist and SQLite exports do")
    func objectionWithServer() async throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: sample("react-native-keychain/ios/objection-dump.json")))
        var items = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: String]])
        let internet = items.indices.filter { items[$0]["item_class"] == "kSecClassInternetPassword" }
        try #require(internet.count == 2)
        for (index, server) in zip(internet, ["https://example.com", "https://api.example.com:8443"]) {
            items[index]["server"] = server
            items[index]["port"] = "0"
        }
        try sandbox.write("objection-server.json", try JSONSerialization.data(withJSONObject: items, options: .prettyPrinted))
        let objection = try await sandbox.run(["migrate", "objection-server.json", "--format", "json"] + Self.bundleID)
        #expect(objection.status == 0)
        let expected = ["credentials:https://example.com", "credentials:https://api.example.com:8443"]
        #expect(try internetKeys(objection) == expected)
        for export in ["keychain.plist", "keychain-export.sqlite"] {
            let result = try await sandbox.run(
                ["migrate", sample("react-native-keychain/ios/" + export), "--format", "json"] + Self.bundleID)
            #expect(try internetKeys(result) == expected, "\(export)")
        }
        let actions = try self.items(objection).compactMap { $0["action"] as? String }
        #expect(!actions.contains("conflict") && !actions.contains("blocked"))
    }
}

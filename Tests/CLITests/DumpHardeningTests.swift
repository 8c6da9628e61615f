import Foundation
import Testing

/// What the tool writes from damaged dumps (security review, issue 16).
@Suite("dump hardening")
struct DumpHardeningTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    @Test("a damaged Base64 value is sealed as a damaged value and never written; the other items are")
    func damagedBase64IsNeverWritten() async throws {
        let sampleText = try String(contentsOfFile: sample("react-native-keychain/ios/keychain.plist"), encoding: .utf8)
        // The `auth` item's value, "sample-token-0001", cut short: a lenient decoder read "sample-token-0000", a
        // password that then migrated and verified.
        let good = "<data>c2FtcGxlLXRva2VuLTAwMDE=</data>"
        try #require(sampleText.components(separatedBy: good).count == 2)
        let damaged = try sandbox.write(
            "keychain.plist", sampleText.replacingOccurrences(of: good, with: "<data>c2FtcGxlLXRva2VuLTAwMD</data>"))
        let store = try await sandbox.initStore(device: "ios")
        let result = try await sandbox.run(
            ["migrate", damaged, "--store", store, "--bundle-id", "com.example.sampleapp", "--format", "json"])
        let report = try jsonObject(result)
        let items = try #require(report["items"] as? [[String: Any]])
        let auth = try #require(
            items.first { (($0["source"] as? [String: Any])?["service"] as? String) == "auth" }, "the auth item is reported")
        #expect(auth["action"] as? String == "sealed")
        let reason = try #require(auth["reason"] as? String)
        #expect(
            reason.contains("damaged value: v_Data is <data> that is not valid Base64 (a last group shorter than four characters, without its padding)"),
            "\(reason)")
        let summary = try #require(report["summary"] as? [String: Int])
        #expect(summary["sealed"] == 1)
        #expect(summary["written"] == summary["create"])
        #expect((summary["create"] ?? 0) > 0, "the other items are still written")

        let get = try await sandbox.run(["store", "get", "--store", store, "--service", "auth", "credentials"])
        #expect(get.status != 0, "the damaged item was written: \(get.out.count) bytes")
        for secret in sampleSecrets { #expect(!result.out.contains(secret) && !result.err.contains(secret)) }
        #expect(!result.out.contains("c2FtcGxlLXRva2VuLTAwMD") && !result.err.contains("c2FtcGxlLXRva2VuLTAwMD"))
        #expect(!result.out.contains("sample-token-0000"))
    }
}

import ApexTestSupport
import Foundation
import Testing

/// Issue 31: four copies of the same 11 items (a keychain read as a plist, a binary plist, an SQLite export and
/// objection's JSON) took 333 lines of text. The text shows each item once, with its copies counted on its row;
/// the JSON report keeps every copy.
@Suite("text: copies of an item are counted on its row")
struct CopiesTextTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let folder = sample("react-native-keychain/ios")

    @Test("each item read from four dumps is one row with '+3 copies (shadowed)'; the JSON lists all 44")
    func copiesFold() async throws {
        let migrate = ["migrate", Self.folder, "--bundle-id", "com.example.sampleapp"]
        let text = try await sandbox.run(migrate, environment: ["COLUMNS": "200"])
        #expect(text.status == 0, "\(text.err)")
        let rows = text.out.split(separator: "\n").filter { $0.hasPrefix("  auth ") }
        #expect(rows.count == 1, "\(rows)")
        #expect(rows.first?.hasSuffix("+3 copies (shadowed)") == true, "\(rows)")
        #expect(!text.out.contains("read from another dump"), "no copy has a row of its own")
        #expect(text.out.contains("objection-dump.json, 11 items, 10 copies of items shown above (shadowed)"))
        #expect(text.out.contains("keychain-export.sqlite, 11 items, 10 copies of items shown above (shadowed)"))
        let json = try await sandbox.run(migrate + ["--format", "json"])
        let items = try #require(try jsonObject(json)["items"] as? [[String: Any]])
        #expect(items.count == 44)
        #expect(items.filter { $0["action"] as? String == "shadowed" }.count == 30)
    }
}

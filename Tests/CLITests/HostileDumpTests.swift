import Foundation
import Testing

/// Dumps made to hurt the tool rather than to be migrated: each attack of the security review that a dump can
/// carry, run through the built binary.
@Suite("hostile dumps")
struct HostileDumpTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// A binary plist of react-native-keychain generic passwords, all in one service: every one maps to
    /// `<service>/credentials`.
    func oneServiceDump(items: Int) throws -> String {
        let genp: [[String: Any]] = (0..<items).map { index in
            [
                "acct": "user\(index)@example.com", "agrp": "A1B2C3D4E5.com.example.app", "pdmn": "ck",
                "svce": "vault", "sync": 0, "v_Data": Data("pw-\(index)".utf8),
            ]
        }
        let data = try PropertyListSerialization.data(fromPropertyList: ["genp": genp], format: .binary, options: 0)
        return try sandbox.write("one-service.plist", data)
    }

    /// Review, "Quadratic reports": N items that map to one target key each got a conflict reason listing the
    /// other N-1 items (5,000 items printed 671 MB; 20,000 reached the OOM killer). A reason now names at most
    /// three others and counts a larger group, so the report is linear in the items.
    @Test("20,000 items mapping to one key: every conflict reason is short, and the report stays under 10 MB")
    func conflictReportsAreLinear() async throws {
        let dump = try oneServiceDump(items: 20_000)
        let text = try await sandbox.run(["migrate", dump, "--dry-run", "--bundle-id", "com.example.app"])
        #expect(text.status == 0)
        #expect(text.stdout.count < 10_000_000, "\(text.stdout.count) bytes")
        #expect(text.out.contains("summary: found 20000, create 0, exists 0, conflict 20000"))
        let longest = text.out.split(separator: "\n").map(\.utf8.count).max() ?? 0
        #expect(longest < 400, "longest line: \(longest) bytes")

        let json = try await sandbox.run(
            ["migrate", dump, "--dry-run", "--bundle-id", "com.example.app", "--format", "json"])
        let report = try jsonObject(json)
        let items = try #require(report["items"] as? [[String: Any]])
        #expect(items.count == 20_000)
        let reasons = items.compactMap { $0["reason"] as? String }
        #expect(reasons.count == 20_000)
        #expect(reasons.allSatisfy { $0.contains("one of 20000 source items") && $0.utf8.count < 200 })
    }

    @Test("a small group still names the other items of the conflict")
    func smallGroupsNameTheOthers() async throws {
        let dump = try oneServiceDump(items: 3)
        let json = try await sandbox.run(
            ["migrate", dump, "--dry-run", "--bundle-id", "com.example.app", "--format", "json"])
        let items = try #require(try jsonObject(json)["items"] as? [[String: Any]])
        let reasons = items.compactMap { $0["reason"] as? String }
        #expect(reasons.count == 3)
        #expect(reasons.first?.hasSuffix("2 other source items map to the same target key: \(dump) genp item 2, \(dump) genp item 3") == true)
    }
}

import ApexDumps
import ApexKeychain
import ApexMigration
import Foundation
import Testing

/// The report: the CLI contract's JSON keys and vocabulary, the same content as text and Markdown, and never a
/// secret value; usernames only when asked.
@Suite("Report")
struct ReportTests {
    static let secret = "sample-canary-secret-7f3a"

    static func plan(account: String = "token", kind: TargetKind = .string) -> MigrationPlan {
        let item = SourceItem(
            library: kind == .credentials ? .reactNativeKeychain : .expoSecureStore, platform: .ios,
            origin: SourceOrigin(path: "dump.plist", format: .iosPlist, location: "item 1"),
            source: SourceDescription(itemClass: "genp", service: "app", account: account, protection: ["pdmn": "ck"]),
            value: kind == .credentials
                ? .credentials(username: account, password: secret) : .value(Data(secret.utf8)),
            target: TargetItem(
                service: "app", key: kind == .credentials ? "credentials" : account, kind: kind,
                options: SetOptions(accessible: .afterFirstUnlock)),
            notes: ["default service taken from --bundle-id"])
        return MigrationPlan(
            actions: [PlannedAction(item: item, action: .create)],
            dumps: [DumpSummary(path: "dump.plist", format: .iosPlist, library: item.library, platform: .ios)])
    }

    @Test("the JSON report has the contract's keys, null where a value is absent, and the summary counts")
    func jsonShape() throws {
        let report = MigrationReport(plan: Self.plan(), device: "ios", includeLabels: false)
        let object = try #require(JSONSerialization.jsonObject(with: report.json()) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "formatVersion", "dryRun", "device", "sources", "items", "summary", "toolVersion", "timestamp", "store",
                "verdict",
            ])
        // A library call's report is not stamped: the three are null, never left out.
        #expect(object["toolVersion"] is NSNull && object["timestamp"] is NSNull && object["store"] is NSNull)
        #expect(object["formatVersion"] as? Int == 1)
        #expect(object["dryRun"] as? Bool == true)
        let item = try #require((object["items"] as? [[String: Any]])?.first)
        #expect(item["action"] as? String == "create")
        #expect(item["reason"] is NSNull)
        let source = try #require(item["source"] as? [String: Any])
        #expect(source["server"] is NSNull)
        #expect(
            Set(source.keys).isSuperset(of: [
                "library", "platform", "path", "class", "service", "account", "server", "accessGroup", "protection",
            ]))
        let target = try #require(item["target"] as? [String: Any])
        #expect(
            Set(target.keys) == [
                "service", "key", "kind", "accessible", "accessControl", "synchronizable", "accessGroup",
            ])
        let summary = try #require(object["summary"] as? [String: Int])
        #expect(
            Set(summary.keys) == [
                "found", "create", "exists", "conflict", "blocked", "sealed", "shadowed", "skipped", "written",
                "verified", "failed", "pending", "givenUp",
            ])
        #expect(summary["found"] == 1 && summary["create"] == 1)
    }

    @Test("no rendering holds a secret value", arguments: [TargetKind.string, .credentials])
    func noSecret(kind: TargetKind) {
        let report = MigrationReport(plan: Self.plan(kind: kind), device: "ios", includeLabels: true)
        for text in [String(decoding: report.json(), as: UTF8.self), report.text(), report.markdown()] {
            #expect(!text.contains(Self.secret))
        }
    }

    @Test("a username shows only with includeLabels")
    func usernamesOnlyWhenAsked() {
        let hidden = MigrationReport(
            plan: Self.plan(account: "person@example.com", kind: .credentials), device: "ios", includeLabels: false)
        let shown = MigrationReport(
            plan: Self.plan(account: "person@example.com", kind: .credentials), device: "ios", includeLabels: true)
        for text in [String(decoding: hidden.json(), as: UTF8.self), hidden.text(), hidden.markdown()] {
            #expect(!text.contains("person@example.com"))
        }
        #expect(String(decoding: shown.json(), as: UTF8.self).contains("person@example.com"))
    }

    @Test("text and Markdown show each item's target, action and notes, and the summary")
    func textAndMarkdown() {
        let report = MigrationReport(plan: Self.plan(), device: "ios", includeLabels: false)
        for text in [report.text(), report.markdown()] {
            #expect(text.contains("app/token"))
            #expect(text.contains("create"))
            #expect(text.contains("default service taken from --bundle-id"))
            #expect(text.contains("found 1, create 1"))
        }
        #expect(report.markdown().contains("| Item | Target | Action | Reason | Notes |"))
        // The Markdown file ends with the verdict, as the tool prints it after a text report (issue 31).
        #expect(
            report.markdown().hasSuffix("\n**Verdict:** 1 secret found: 1 would be migrated, nothing left behind\n"))
    }

    @Test("a blocked item's target with no protection: JSON null for its protection, text and Markdown say so")
    func targetWithoutProtection() throws {
        var plan = Self.plan()
        plan.actions[0].item.target = .unknownProtection(service: "app", key: "token", kind: .string)
        plan.actions[0].action = .blocked
        plan.actions[0].cause = .noEquivalent
        plan.actions[0].reason = "an and-combination"
        let report = MigrationReport(plan: plan, device: "ios", includeLabels: false)
        let object = try #require(JSONSerialization.jsonObject(with: report.json()) as? [String: Any])
        let item = try #require((object["items"] as? [[String: Any]])?.first)
        let target = try #require(item["target"] as? [String: Any])
        #expect(
            Set(target.keys) == [
                "service", "key", "kind", "accessible", "accessControl", "synchronizable", "accessGroup",
            ])
        #expect(
            target["service"] as? String == "app" && target["key"] as? String == "token"
                && target["kind"] as? String == "string")
        #expect(
            target["accessible"] is NSNull && target["accessControl"] is NSNull && target["synchronizable"] is NSNull)
        for text in [report.text(), report.markdown()] {
            #expect(text.contains("app/token [string, no equivalent protection]"))
        }
        let decoded = try JSONDecoder().decode(MigrationReport.self, from: report.json())
        #expect(decoded == report)
    }
}

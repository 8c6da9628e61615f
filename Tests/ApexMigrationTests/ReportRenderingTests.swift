import ApexDumps
import ApexKeychain
import ApexMigration
import Foundation
import Testing

/// The report's renderings are written straight into bytes. JSON must be what `JSONEncoder` writes for the
/// report, byte for byte; text and Markdown must lay out every cell as a simple `String` rendering does, with
/// widths in characters, whatever the names hold.
@Suite("Report rendering")
struct ReportRenderingTests {
    /// Names that stress escaping, character counting and trimming.
    static let awkward = [
        "plain", "a|b", "line\nbreak", "cr\r\nlf", "lone\rcr", "tab\tend\t", "trailing ", " leading",
        "\u{3000}ideographic\u{3000}", "cafe\u{301}", "caf\u{E9}", "👩‍👩‍👧 family", "quote\"back\\slash",
        "\u{0}\u{1}\u{8}\u{c}\u{1f}\u{7f}", "/a/b/", "\u{2028}\u{2029}\u{FEFF}", String(repeating: "long-", count: 16),
        "", "\u{301}starts with a mark", "zero-width space\u{200B}", "a|\u{301}b",
    ]

    static func item(_ index: Int, _ name: String, kind: TargetKind = .string, target: Bool = true) -> SourceItem {
        SourceItem(
            library: index % 2 == 0 ? .expoSecureStore : .reactNativeKeychain, platform: index % 3 == 0 ? .android : .ios,
            origin: SourceOrigin(path: "dumps/\(name).plist", format: .iosPlist, location: "item \(index) \(name)"),
            source: SourceDescription(
                itemClass: index % 4 == 0 ? nil : "genp", service: name, account: index % 5 == 0 ? nil : "acct-\(name)",
                server: index % 3 == 1 ? "https://\(name)" : nil, accessGroup: index % 2 == 1 ? "group.\(name)" : nil,
                protection: index % 6 == 0 ? [:] : ["pdmn": "ak", "sync": "0", name: name, "Z": "z", "é": "e", "a10": "", "a9": ""]),
            value: .value(Data("secret-\(index)".utf8)),
            target: target
                ? TargetItem(
                    service: "svc \(name)", key: "key \(name)", kind: kind,
                    options: SetOptions(
                        accessible: .whenUnlockedThisDeviceOnly, accessControl: index % 2 == 0 ? .biometryAny : nil,
                        synchronizable: index % 7 == 0 ? true : nil),
                    accessGroup: index % 2 == 0 ? "team.\(name)" : nil)
                : nil,
            notes: index % 3 == 0 ? [] : ["note for \(name)", "second | note \(name)"])
    }

    static func plan() -> MigrationPlan {
        let actions = awkward.enumerated().map { index, name in
            let action = MigrationAction.allCases[index % MigrationAction.allCases.count]
            return PlannedAction(
                item: item(index, name, target: action != .blocked), action: action,
                reason: action == .create ? nil : "reason: \(name)")
        }
        return MigrationPlan(
            actions: actions,
            dumps: [
                DumpSummary(path: "dumps/a b|c.plist", format: .iosPlist, library: .reactNativeKeychain, platform: .ios),
                DumpSummary(path: "prefs\n.xml", format: .sharedPreferences, library: nil, platform: .android),
            ])
    }

    static var reports: [(String, MigrationReport)] {
        let plan = plan()
        var results: [Int: ItemOutcome] = [:]
        for (index, planned) in plan.actions.enumerated() where planned.action == .create {
            results[index] = [
                ItemOutcome(.verified), ItemOutcome(.failed, reason: "INTERNAL: \(awkward[index])"),
                ItemOutcome(.unverified, reason: "read back differs"),
            ][index % 3]
        }
        return [
            ("dry run", MigrationReport(plan: plan, device: "ios", includeLabels: false)),
            ("dry run with labels", MigrationReport(plan: plan, device: "android", includeLabels: true)),
            ("run", MigrationReport(plan: plan, results: results, device: "ios", includeLabels: true)),
            ("inventory", MigrationReport(
                inventory: plan.actions.map(\.item),
                dumps: [DumpSummary(path: "x", format: .objectionJSON, library: .expoSecureStore, platform: .ios)],
                includeLabels: true)),
            ("empty", MigrationReport(plan: MigrationPlan(actions: [], dumps: []), device: "ios", includeLabels: false)),
            // Enough items to be written in several chunks.
            ("many", MigrationReport(
                plan: MigrationPlan(actions: Array(repeating: plan.actions, count: 200).flatMap { $0 }, dumps: plan.dumps),
                results: results, device: "ios", includeLabels: true)),
        ]
    }

    @Test("the JSON report is byte for byte what JSONEncoder writes for it", arguments: reports.map(\.0))
    func jsonMatchesJSONEncoder(name: String) throws {
        let report = try #require(Self.reports.first { $0.0 == name }?.1)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var expected = try encoder.encode(report)
        expected.append(UInt8(ascii: "\n"))
        let written = report.json()
        #expect(written == expected)
        if written != expected {
            let at = zip(written, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(written.count, expected.count)
            Issue.record("first difference at byte \(at): …\(String(decoding: written.dropFirst(max(0, at - 60)).prefix(120), as: UTF8.self))…")
        }
        #expect(try JSONDecoder().decode(MigrationReport.self, from: written) == report)
    }

    /// The text table as a plain `String` rendering lays it out: widths in characters, at most 60, two spaces
    /// between columns, whitespace trimmed from each line.
    static func referenceText(_ report: MigrationReport) -> [String] {
        let rows: [[String]] = report.items.map { item in
            let source = [item.source.service, item.source.server, item.source.account].compactMap { $0 }.joined(separator: " / ")
            var action = item.action ?? "-"
            if let result = item.result { action += " (\(result))" }
            return [
                "\(item.source.library) \(item.source.platform) \(source.isEmpty ? item.source.location : source)",
                item.target.map { "\($0.service)/\($0.key) [\($0.kind), \($0.accessible), \($0.accessControl)]" } ?? "-",
                action, [item.reason, item.resultReason].compactMap { $0 }.joined(separator: "; "),
            ]
        }
        let table = [["ITEM", "TARGET", "ACTION", "REASON"]] + rows
        let widths = (0..<3).map { column in min(60, table.map { $0[column].count }.max() ?? 0) }
        var lines: [String] = []
        for (index, row) in table.enumerated() {
            let padded = (0..<3).map { row[$0] + String(repeating: " ", count: max(0, widths[$0] - row[$0].count)) + "  " }
            lines.append((padded.joined() + row[3]).trimmingCharacters(in: .whitespaces))
            if index > 0 { lines += report.items[index - 1].notes.map { "    note: \($0)" } }
        }
        return lines
    }

    @Test("the text table pads by characters, caps columns at 60, trims each line and keeps notes under their item")
    func textLayout() throws {
        for (name, report) in Self.reports {
            let text = report.text()
            let header = text.components(separatedBy: "\n\n")[0]
            let body = String(text.dropFirst(header.count + 2))
            let expected = Self.referenceText(report).joined(separator: "\n") + "\n\nsummary: "
            #expect(body.hasPrefix(expected), "\(name)")
        }
    }

    /// The cells of a Markdown row `| a | b |`, byte by byte: separated by ` | `, with `\|` read as `|` (also
    /// before a combining mark, which `String` would join to the `|`).
    static func cells(_ row: Substring) -> [String] {
        let bytes = Array(row.utf8.dropFirst(2).dropLast(2))
        var cells: [[UInt8]] = [[]]
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "|") {
                cells[cells.count - 1].append(UInt8(ascii: "|"))
                index += 2
            } else if bytes[index...].starts(with: Array(" | ".utf8)) {
                cells.append([])
                index += 3
            } else {
                cells[cells.count - 1].append(bytes[index])
                index += 1
            }
        }
        return cells.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("a Markdown row stays one line: `|` is escaped and CR LF, CR and LF each become one space", arguments: ["run", "many"])
    func markdownCells(name: String) throws {
        let report = try #require(Self.reports.first { $0.0 == name }?.1)
        let markdown = report.markdown()
        let rows = markdown.split(separator: "\n", omittingEmptySubsequences: false).filter { $0.hasPrefix("| ") && !$0.hasPrefix("| Item |") }
        #expect(rows.count == report.items.count)
        #expect(!markdown.contains("\r"))
        for (row, item) in zip(rows, report.items) {
            let cells = Self.cells(row)
            #expect(cells.count == 5)
            func flat(_ text: String) -> String {
                text.replacingOccurrences(of: "\r\n", with: " ").replacingOccurrences(of: "\r", with: " ")
                    .replacingOccurrences(of: "\n", with: " ")
            }
            #expect(cells[4] == flat(item.notes.joined(separator: "; ")), "\(cells[4].debugDescription)")
            if let reason = item.reason { #expect(cells[3].hasPrefix(flat(reason)), "\(cells[3].debugDescription)") }
        }
        #expect(markdown.contains("cr lf") && markdown.contains("lone cr") && markdown.contains("line break"))
        #expect(markdown.contains("a\\|b"))
    }
}

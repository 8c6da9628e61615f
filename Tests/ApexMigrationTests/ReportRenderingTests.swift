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

    /// An item; `target` false: none; `protectionKnown` false: a target with no protection (a blocked item's).
    static func item(
        _ index: Int, _ name: String, kind: TargetKind = .string, target: Bool = true, protectionKnown: Bool = true
    ) -> SourceItem {
        SourceItem(
            library: index % 2 == 0 ? .expoSecureStore : .reactNativeKeychain,
            platform: index % 3 == 0 ? .android : .ios,
            origin: SourceOrigin(path: "dumps/\(name).plist", format: .iosPlist, location: "item \(index) \(name)"),
            source: SourceDescription(
                itemClass: index % 4 == 0 ? nil : "genp", service: name, account: index % 5 == 0 ? nil : "acct-\(name)",
                server: index % 3 == 1 ? "https://\(name)" : nil, accessGroup: index % 2 == 1 ? "group.\(name)" : nil,
                protection: index % 6 == 0
                    ? [:] : ["pdmn": "ak", "sync": "0", name: name, "Z": "z", "é": "e", "a10": "", "a9": ""]),
            value: .value(Data("secret-\(index)".utf8)),
            target: !target
                ? nil
                : !protectionKnown
                    ? .unknownProtection(
                        service: "svc \(name)", key: "key \(name)", kind: kind,
                        accessGroup: index % 4 == 0 ? "team.\(name)" : nil)
                    : TargetItem(
                        service: "svc \(name)", key: "key \(name)", kind: kind,
                        options: SetOptions(
                            accessible: .whenUnlockedThisDeviceOnly, accessControl: index % 2 == 0 ? .biometryAny : nil,
                            synchronizable: index % 7 == 0 ? true : nil),
                        accessGroup: index % 2 == 0 ? "team.\(name)" : nil),
            notes: index % 3 == 0 ? [] : ["note for \(name)", "second | note \(name)"])
    }

    static func plan() -> MigrationPlan {
        let actions = awkward.enumerated().map { index, name in
            let action = MigrationAction.allCases[index % MigrationAction.allCases.count]
            return PlannedAction(
                // Blocked items: some with their intended target and no protection, some with no target.
                item: item(
                    index, name, target: action != .blocked || index % 2 == 0, protectionKnown: action != .blocked),
                action: action,
                reason: action == .create ? nil : "reason: \(name)")
        }
        return MigrationPlan(
            actions: actions,
            dumps: [
                DumpSummary(
                    path: "dumps/a b|c.plist", format: .iosPlist, library: .reactNativeKeychain, platform: .ios),
                DumpSummary(path: "prefs\n.xml", format: .sharedPreferences, library: nil, platform: .android),
            ])
    }

    static var reports: [(String, MigrationReport)] {
        let plan = plan()
        var results: [Int: ItemOutcome] = [:]
        for (index, planned) in plan.actions.enumerated() where planned.action == .create {
            results[index] =
                [
                    ItemOutcome(.verified), ItemOutcome(.failed, reason: "INTERNAL: \(awkward[index])"),
                    ItemOutcome(.unverified, reason: "read back differs"),
                ][index % 3]
        }
        return [
            ("dry run", MigrationReport(plan: plan, device: "ios", includeLabels: false)),
            ("dry run with labels", MigrationReport(plan: plan, device: "android", includeLabels: true)),
            ("run", MigrationReport(plan: plan, results: results, device: "ios", includeLabels: true)),
            (
                "inventory",
                MigrationReport(
                    inventory: plan.actions.map(\.item),
                    dumps: [DumpSummary(path: "x", format: .objectionJSON, library: .expoSecureStore, platform: .ios)],
                    includeLabels: true)
            ),
            (
                "empty",
                MigrationReport(plan: MigrationPlan(actions: [], dumps: []), device: "ios", includeLabels: false)
            ),
            // Enough items to be written in several chunks.
            (
                "many",
                MigrationReport(
                    plan: MigrationPlan(
                        actions: Array(repeating: plan.actions, count: 200).flatMap { $0 }, dumps: plan.dumps),
                    results: results, device: "ios", includeLabels: true)
            ),
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
            let at =
                zip(written, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(written.count, expected.count)
            Issue.record(
                "first difference at byte \(at): …\(String(decoding: written.dropFirst(max(0, at - 60)).prefix(120), as: UTF8.self))…"
            )
        }
        #expect(try JSONDecoder().decode(MigrationReport.self, from: written) == report)
    }

    /// Whether a scalar must never reach a terminal or a Markdown reader raw: one that shows nothing or breaks the
    /// line (a control, a format character such as a bidi control or a zero-width one, a line or paragraph
    /// separator, a space other than U+0020, an unassigned code point or noncharacter, a default-ignorable one).
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned: true
        case .spaceSeparator: scalar != " "
        default: scalar.properties.isDefaultIgnorableCodePoint
        }
    }

    /// A target as the text and Markdown tables show it, before names are made safe.
    /// A plan's item cell: the names (or the location), then the protection as found in brackets.
    static func itemCell(_ item: MigrationReport.Item) -> String {
        let names = referenceNames(item)
        let found = names.isEmpty ? item.source.location : names.joined(separator: " / ")
        let protection = MigrationReport.rowProtection(item.source.protection)
        return protection.isEmpty ? found : "\(found) [\(protection)]"
    }

    static func targetCell(_ target: MigrationReport.ItemTarget?) -> String {
        guard let target else { return "-" }
        guard let accessible = target.accessible, let control = target.accessControl else {
            return "\(target.service)/\(target.key) [\(target.kind.rawValue), no equivalent protection]"
        }
        return "\(target.service)/\(target.key) [\(target.kind.rawValue), \(accessible.rawValue), \(control.rawValue)]"
    }

    /// A name as the reports show it: unsafe scalars written as `\u{HEX}`, the backslash as `\\`.
    static func shown(_ text: String) -> String {
        text.unicodeScalars.map {
            $0 == "\\"
                ? "\\\\" : isUnsafe($0) ? "\\u{\(String($0.value, radix: 16, uppercase: true))}" : String($0)
        }
        .joined()
    }

    /// An item's service, server and account as the text and Markdown reports name them: an empty service is
    /// `(default)` on Android and `(no service)` on iOS, and a generic password with no service at all gets
    /// `(no service)` first.
    static func referenceNames(_ item: MigrationReport.Item) -> [String] {
        var names = [item.source.service, item.source.server, item.source.account].compactMap { $0 }
        if names.first == "" {
            names[0] = item.source.platform == .android ? "(default)" : "(no service)"
        } else if item.source.service == nil, item.source.server == nil, item.source.account != nil,
            item.source.class?.code == "genp"
        {
            names.insert("(no service)", at: 0)
        }
        return names
    }

    /// The text report as a plain `String` rendering lays it out without a width: the sources, then each run of
    /// items from one dump and library under its heading, with the notes all of them have once under it, a table
    /// padded by characters (item and target at most 60), trailing spaces trimmed, names shown safely.
    static func referenceText(_ report: MigrationReport) -> String {
        func cells(_ item: MigrationReport.Item) -> [String] {
            var action = item.action?.rawValue ?? "-"
            if let result = item.result { action += " (\(result.rawValue))" }
            if item.state == .pending, !(report.dryRun && item.action == .create) { action += ", pending" }
            if item.state == .givenUp { action += ", given up" }
            return [
                shown(itemCell(item)),
                shown(targetCell(item.target)),
                action, shown([item.reason, item.resultReason].compactMap { $0 }.joined(separator: "; ")),
            ]
        }
        // An inventory (no actions) shows the class and the protection as found, decoded values before raw ones.
        let inventory = !report.items.isEmpty && report.items.allSatisfy { $0.action == nil }
        func inventoryCells(_ item: MigrationReport.Item) -> [String] {
            let raw = { (value: String) in value.hasPrefix("der:") || value.hasPrefix("hex:") }
            let protection =
                item.source.protection.filter { !raw($0.value) }.sorted { $0.key < $1.key }
                + item.source.protection.filter { raw($0.value) }.sorted { $0.key < $1.key }
            return [
                shown(
                    referenceNames(item).isEmpty ? item.source.location : referenceNames(item).joined(separator: " / ")),
                shown(item.source.class?.code ?? "-"),
                shown(protection.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")),
            ]
        }
        let table =
            inventory
            ? [["ITEM", "CLASS", "PROTECTION"]] + report.items.map(inventoryCells)
            : [["ITEM", "TARGET", "ACTION", "REASON"]] + report.items.map(cells)
        let fixed = table[0].count - 1
        let widths = (0..<fixed).map { column in
            let widest = table.map { $0[column].count }.max() ?? 0
            return column < fixed - 1 ? min(60, widest) : widest
        }
        func line(_ row: [String]) -> String {
            var text =
                "  "
                + (0..<fixed).map { row[$0] + String(repeating: " ", count: max(0, widths[$0] - row[$0].count)) + "  " }
                .joined() + row[fixed]
            while text.hasSuffix(" ") || text.hasSuffix("\t") { text.removeLast() }
            return text
        }
        var out =
            report.targetDevice.isEmpty
            ? ""
            : report.dryRun
                ? "Dry run for device \(report.targetDevice): nothing was written.\n"
                : "Migration on device \(report.targetDevice).\n"
        for source in report.sources {
            out +=
                "source: \(shown(source.path)) (\(source.format.rawValue), \(source.library?.rawValue ?? "no library recognised"), \(source.platform.rawValue))\n"
        }
        var start = 0
        while start < report.items.count {
            let first = report.items[start].source
            var end = start + 1
            while end < report.items.count, report.items[end].source.path == first.path,
                report.items[end].source.library == first.library, report.items[end].source.platform == first.platform
            {
                end += 1
            }
            let group = report.items[start..<end]
            let common =
                group.count > 1
                ? group.first!.notes.filter { note in group.allSatisfy { $0.notes.contains(note) } } : []
            out +=
                "\n\(first.library.rawValue) \(first.platform.rawValue): \(shown(first.path)), \(group.count == 1 ? "1 item" : "\(group.count) items")\n"
            for note in common { out += "  note (every item): \(shown(note))\n" }
            out += line(table[0]) + "\n"
            for item in group {
                out += line(inventory ? inventoryCells(item) : cells(item)) + "\n"
                for note in item.notes where !common.contains(note) { out += "      note: \(shown(note))\n" }
            }
            start = end
        }
        return out + (inventory ? "\nfound " : "\nsummary: ")
    }

    @Test(
        "without a width, the text is grouped by dump and library, pads by characters, caps columns at 60 and keeps notes under their item"
    )
    func textLayout() throws {
        for (name, report) in Self.reports {
            let text = report.text()
            let expected = Self.referenceText(report)
            #expect(text.hasPrefix(expected), "\(name)")
            #expect(!text.unicodeScalars.contains { $0 != "\n" && Self.isUnsafe($0) }, "\(name)")
        }
    }

    /// The contents of the code spans of a Markdown cell, in order (`` `a` ``, ``` `` a`b `` ```, `` ` `x` ``).
    static func codeSpans(_ cell: String) -> [String] {
        var spans: [String] = []
        var rest = Substring(cell)
        while !rest.isEmpty {
            let fence = rest.prefix { $0 == "`" }
            guard !fence.isEmpty else {
                Issue.record("text outside a code span: \(rest.debugDescription)")
                return spans
            }
            rest = rest.dropFirst(fence.count)
            // The closing fence: a run of exactly as many backticks.
            var end = rest.startIndex
            while end < rest.endIndex {
                let run = rest[end...].prefix { $0 == "`" }
                if run.count == fence.count { break }
                end = rest.index(end, offsetBy: max(1, run.count))
            }
            var content = rest[..<end]
            if content.count >= 2, content.first == " ", content.last == " ", content.contains(where: { $0 != " " }) {
                content = content.dropFirst().dropLast()
            }
            spans.append(String(content))
            rest =
                rest[
                    min(
                        rest.endIndex, rest.index(end, offsetBy: fence.count, limitedBy: rest.endIndex) ?? rest.endIndex
                    )...]
            if rest.first == " " { rest = rest.dropFirst() }
        }
        return spans
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

    @Test(
        "a Markdown row stays one line: names are code spans, `|` is escaped, line breaks and controls are shown as escapes",
        arguments: ["run", "many"])
    func markdownCells(name: String) throws {
        let report = try #require(Self.reports.first { $0.0 == name }?.1)
        let markdown = report.markdown()
        let rows = markdown.split(separator: "\n", omittingEmptySubsequences: false).filter {
            $0.hasPrefix("| ") && !$0.hasPrefix("| Item |")
        }
        #expect(rows.count == report.items.count)
        #expect(!markdown.unicodeScalars.contains { $0 != "\n" && Self.isUnsafe($0) })
        for (row, item) in zip(rows, report.items) {
            let cells = Self.cells(row)
            #expect(cells.count == 5)
            #expect(Self.codeSpans(cells[4]) == item.notes.map(Self.shown), "\(cells[4].debugDescription)")
            if let reason = item.reason {
                #expect(
                    Self.codeSpans(cells[3]).first?.hasPrefix(Self.shown(reason)) == true,
                    "\(cells[3].debugDescription)")
            }
            let names = Self.referenceNames(item).joined(separator: " / ")
            let found =
                "\(item.source.library.rawValue) \(item.source.platform.rawValue) \(names.isEmpty ? item.source.location : names)"
            #expect(Self.codeSpans(cells[0]).joined() == Self.shown(found), "\(cells[0].debugDescription)")
        }
        #expect(
            markdown.contains("cr\\u{D}\\u{A}lf") && markdown.contains("lone\\u{D}cr")
                && markdown.contains("line\\u{A}break"))
        #expect(markdown.contains("a\\|b"))
    }
}

/// Review (scale, item 3): a 100k-item JSON report was joined in memory (99 MB at once). Written to a sink, it
/// comes out in pieces, batch by batch, and the pieces are exactly the bytes of `json()`.
@Suite("JSON report written piece by piece")
struct StreamedJSONTests {
    @Test("the pieces, whatever the batch, are json() byte for byte", arguments: [1, 7, 8192])
    func piecesMatch(batch: Int) throws {
        for (name, report) in ReportRenderingTests.reports {
            var pieces: [Data] = []
            try report.writeJSON(batch: batch) { pieces.append($0) }
            #expect(pieces.reduce(Data(), +) == report.json(), "\(name)")
            // One piece per batch of items at least: never the whole report at once when there are several.
            if report.items.count > batch { #expect(pieces.count > report.items.count / batch, "\(name)") }
        }
    }

    @Test("the first error of the sink stops the writing and is thrown")
    func errorStops() throws {
        struct Full: Error {}
        let report = try #require(ReportRenderingTests.reports.first { $0.0 == "many" }?.1)
        var calls = 0
        #expect(throws: Full.self) {
            try report.writeJSON(batch: 10) { _ in
                calls += 1
                throw Full()
            }
        }
        #expect(calls == 1)
    }
}

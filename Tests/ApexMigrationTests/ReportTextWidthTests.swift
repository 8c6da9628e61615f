import ApexDumps
import ApexKeychain
import ApexMigration
import Foundation
import Testing

/// Review (command line, item 8): 21 of the 24 lines of the Quick start's table were wider than 80 columns, and every
/// row repeated its library and platform. Given a width, the text fits it: long cells wrap inside their column,
/// the ACTION column stays aligned, and nothing of a cell is lost.
@Suite("Report text fitted to a width")
struct ReportTextWidthTests {
    static let widths = [80, 100, 132]

    /// The rendering tests' reports (but the large one, which repeats the others and would only slow these checks),
    /// without the name that starts with a combining mark: in a line it joins the space before it into one
    /// character, so columns can't be counted in characters there (a terminal draws it over that space too).
    static let reports: [(String, MigrationReport)] =
        ReportRenderingTests.reports.filter { $0.0 != "many" }.map { name, report in
            var report = report
            report.items.removeAll {
                $0.source.service?.unicodeScalars.first?.properties.generalCategory == .nonspacingMark
            }
            return (name, report)
        }

    /// The text's lines, each as characters.
    static func lines(_ text: String) -> [[Character]] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map(Array.init)
    }

    /// Whether a line holds one token and nothing else (a token too long for its room goes on a line of its own).
    static func isOneToken(_ line: [Character]) -> Bool {
        let token = line.drop { $0 == " " }
        return !token.isEmpty && !token.contains(" ")
    }

    @Test("no line is wider than the width but one that holds a single token", arguments: widths)
    func fits(width: Int) {
        for (name, report) in Self.reports {
            let wide = Self.lines(report.text(width: width)).filter { $0.count > width && !Self.isOneToken($0) }
            #expect(
                wide.isEmpty,
                "\(name): \(wide.count) lines wider than \(width), first: \(wide.first.map { String($0) } ?? "")")
        }
    }

    @Test("every row's action starts in the ACTION column, in item order", arguments: widths)
    func actionsAligned(width: Int) throws {
        for (name, report) in Self.reports where report.items.first?.action != nil {
            var actions: [String] = []
            var column: Int?
            for line in Self.lines(report.text(width: width)) {
                let text = String(line)
                // A group's heading (and its wrapped lines, up to the column headers) is not a row.
                if !text.hasPrefix(" ") { column = nil }
                if text.hasPrefix("  ITEM ") {
                    let header = try #require(text.firstRange(of: "ACTION"))
                    column = text.distance(from: text.startIndex, to: header.lowerBound)
                    continue
                }
                guard let column, line.count > column, line[column] != " ", text.hasPrefix("  ") else { continue }
                // A token too wide for its column, on its own line, is no action.
                if Self.isOneToken(line), line.prefix(column).contains(where: { $0 != " " }) { continue }
                // A row's first line: the action, then (when it fits) the reason.
                guard !text.hasPrefix("      note: "), !text.hasPrefix("      reason: ") else { continue }
                actions.append(String(line[column...]))
            }
            #expect(actions.count == report.items.count, "\(name): \(actions)")
            for (found, item) in zip(actions, report.items) {
                #expect(found.hasPrefix(try #require(item.action).rawValue), "\(name): \(found)")
            }
        }
    }

    /// The item and target cells of every row, read back column by column from the wrapped lines.
    static func cells(_ text: String) -> [(item: String, target: String)] {
        var cells: [(item: String, target: String)] = []
        var columns: [Int]?
        var annotation = false
        for line in lines(text) {
            let text = String(line)
            if !text.hasPrefix(" ") { columns = nil }
            if text.hasPrefix("  ITEM ") {
                columns = ["TARGET", "ACTION"].compactMap { name in
                    text.firstRange(of: name).map { text.distance(from: text.startIndex, to: $0.lowerBound) }
                }
                continue
            }
            // A note or reason and its wrapped lines follow the row's own lines, up to the next row.
            if text.hasPrefix("      note: ") || text.hasPrefix("      reason: ") {
                annotation = true
                continue
            }
            if annotation, text.hasPrefix(String(repeating: " ", count: 12)) { continue }
            annotation = false
            guard let columns, text.hasPrefix("  ") else { continue }
            func part(_ range: Range<Int>) -> String {
                String(line[min(range.lowerBound, line.count)..<min(range.upperBound, line.count)])
            }
            var item = part(2..<columns[0])
            var target = part(columns[0]..<columns[1])
            let start = line.prefix { $0 == " " }.count
            if isOneToken(line), start < columns[1] {
                // A token too wide for its column, on its own line after the row's line: the column it starts in.
                (item, target) = start < columns[0] ? (String(line[start...]), "") : ("", String(line[start...]))
                cells[cells.count - 1].item += item
                cells[cells.count - 1].target += target
            } else if line.count > columns[1], line[columns[1]] != " " {
                cells.append((item, target))
            } else if !cells.isEmpty {
                cells[cells.count - 1].item += item
                cells[cells.count - 1].target += target
            }
        }
        return cells
    }

    @Test("wrapping loses nothing: each column, read back line by line, holds its whole cell", arguments: widths)
    func nothingLost(width: Int) throws {
        func squeezed(_ text: String) -> String { String(text.filter { !$0.isWhitespace }) }
        for (name, report) in Self.reports where report.items.first?.action != nil {
            let text = report.text(width: width)
            let cells = Self.cells(text)
            #expect(cells.count == report.items.count, "\(name)")
            for (cell, item) in zip(cells, report.items) {
                let found = ReportRenderingTests.itemCell(item)
                let target = ReportRenderingTests.targetCell(item.target)
                #expect(
                    squeezed(cell.item) == squeezed(ReportRenderingTests.shown(found)),
                    "\(name): \(found.debugDescription)")
                #expect(
                    squeezed(cell.target) == squeezed(ReportRenderingTests.shown(target)),
                    "\(name): \(target.debugDescription)")
            }
            let all = squeezed(text)
            for note in report.items.flatMap(\.notes) {
                #expect(all.contains(squeezed(ReportRenderingTests.shown(note))), "\(name): \(note.debugDescription)")
            }
        }
    }

    @Test(
        "items are grouped by dump and library, and a note every item of a group has is printed once under its heading")
    func groups() throws {
        func item(_ index: Int, path: String, notes: [String]) -> PlannedAction {
            PlannedAction(
                item: SourceItem(
                    library: .reactNativeKeychain, platform: .android,
                    origin: SourceOrigin(path: path, format: .sharedPreferences, location: "entry \(index)"),
                    source: SourceDescription(
                        itemClass: nil, service: index == 0 ? "" : "svc\(index)", account: nil, server: nil,
                        accessGroup: nil, protection: [:]),
                    value: .sealed("Android Keystore key"),
                    target: TargetItem(
                        service: "app", key: "k\(index)", kind: .credentials, options: SetOptions(), accessGroup: nil),
                    notes: notes),
                action: .sealed, reason: "Android Keystore key")
        }
        let plan = MigrationPlan(
            actions: [
                item(0, path: "a.xml", notes: ["shared note", "own note 0"]),
                item(1, path: "a.xml", notes: ["shared note"]),
                item(2, path: "a.xml", notes: ["own note 2", "shared note"]),
                item(3, path: "b.xml", notes: ["shared note"]),
            ],
            dumps: [
                DumpSummary(
                    path: "a.xml", format: .sharedPreferences, library: .reactNativeKeychain, platform: .android),
                DumpSummary(
                    path: "b.xml", format: .sharedPreferences, library: .reactNativeKeychain, platform: .android),
            ])
        let report = MigrationReport(plan: plan, device: "android", includeLabels: false)
        for width in [nil, 80] as [Int?] {
            let lines = report.text(width: width).split(separator: "\n").map(String.init)
            #expect(
                lines.filter { $0.hasPrefix("react-native-keychain android: ") } == [
                    "react-native-keychain android: a.xml, 3 items", "react-native-keychain android: b.xml, 1 item",
                ])
            // Once for the group of three; the lone item of b.xml keeps it as its own note.
            #expect(lines.filter { $0 == "  note (every item): shared note" }.count == 1)
            #expect(lines.filter { $0 == "      note: shared note" }.count == 1)
            #expect(lines.filter { $0.hasPrefix("      note: own note") }.count == 2)
            // No row repeats the library and platform; the default Android service is named.
            #expect(!lines.contains { $0.hasPrefix("  react-native-keychain") })
            #expect(lines.contains { $0.hasPrefix("  (default) ") })
        }
    }
}

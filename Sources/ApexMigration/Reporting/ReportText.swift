import ApexDumpModel
import ApexKeychain
import Foundation

/// The report as text for a terminal: the sources, then the items grouped by the dump and library they came
/// from, each group a table (item, target, action, reason) with its notes, then the summary.
///
/// Given a width (`$COLUMNS` or the terminal's), no line is wider but one that holds a single token longer than
/// its room: text wraps at spaces only, never inside a token. Long cells wrap inside their column, so the ACTION
/// column stays aligned (a token wider than its column goes on a line of its own, whole), and when the reason has
/// no room beside the action it goes on its own line under the row. A note every item of a group has is printed once, under the group's heading. Without a width, rows
/// are one line each, and the item and target columns are at most 60 characters wide.
extension MigrationReport {
    /// A readable table and summary, at most `width` characters wide (nil: no limit).
    public func text(width: Int? = nil) -> String { text(TextStyle(width: width)) }

    /// A readable table and summary, laid out as `style` says.
    public func text(_ style: TextStyle) -> String { renderedText(style).string }

    /// ``text(width:)`` as UTF-8 bytes, for writing out without a `String` in between.
    public func textData(width: Int? = nil) -> Data { textData(TextStyle(width: width)) }

    /// ``text(_:)`` as UTF-8 bytes, for writing out without a `String` in between.
    public func textData(_ style: TextStyle) -> Data { Data(renderedText(style).bytes) }

    /// How the text is laid out.
    public struct TextStyle: Sendable, Equatable {
        /// The widest a line may be (nil: no limit).
        public var width: Int?
        /// Whether a protection's raw encodings (an access control's DER, data as hex) are shown beside what was
        /// decoded from them; without it, only the decoded flags, and a raw value's size.
        public var verbose: Bool
        /// Whether actions and states are coloured with ANSI escapes (green for what is or will be migrated, red for
        /// what needs fixing, yellow for what waits, dim for copies and items left out): for a terminal only.
        public var color: Bool

        /// A style: no limit, not verbose and no colour by default.
        public init(width: Int? = nil, verbose: Bool = false, color: Bool = false) {
            self.width = width
            self.verbose = verbose
            self.color = color
        }
    }

    /// The narrowest width the text is fitted to: below it, lines may be wider than asked.
    public static let narrowestTextWidth = 40

    /// The columns of a plan's or a run's table.
    static let planHeader = ReportRow(cells: ["ITEM", "TARGET", "ACTION"], reason: "REASON")
    /// The columns of an inventory's (`inspect`).
    static let inventoryHeader = ReportRow(cells: ["ITEM", "CLASS"], reason: "PROTECTION")

    /// Whether this is an inventory: items as found, with no plan.
    var isInventory: Bool { !items.isEmpty && items.allSatisfy { $0.action == nil } }

    /// The cells of every row, with the dump's names made safe to show (``DisplayText``). Fields are read in
    /// place (a copy of each item would retain every string it holds).
    private func textRows(verbose: Bool) -> [ReportRow] {
        let inventory = isInventory
        var counted: [Int: Int] = [:]
        for item in items { if let standing = item.copyOf { counted[standing, default: 0] += 1 } }
        let copyCounts = counted
        return concurrentMap(count: items.count) { index in
            let source = items[index].source
            let found = DisplayText.escaped(source.shownName(namingDefaultService: true))
            if inventory {
                return ReportRow(
                    cells: [found, DisplayText.escaped(source.class?.code ?? "-")],
                    reason: DisplayText.escaped(Self.protectionText(source.protection, verbose: verbose)))
            }
            let target = items[index].target?.text
            // The protection as found beside the target's, so that "never weaker" can be seen on the row.
            let protection = Self.rowProtection(source.protection)
            let item = protection.isEmpty ? found : found + " [" + DisplayText.escaped(protection) + "]"
            let action = actionText(index)
            let tone = ReportRow.Tone(items[index])
            let copies = copyCounts[index].map { $0 == 1 ? "+1 copy (shadowed)" : "+\($0) copies (shadowed)" }
            let reason = [copies, items[index].reason, items[index].resultReason].compactMap { $0 }.joined(
                separator: "; ")
            return ReportRow(
                cells: [item, DisplayText.escaped(target ?? "-"), action], reason: DisplayText.escaped(reason),
                tone: tone)
        }
    }

    /// An item's action as the text and Markdown show it: with a run's result, and whether a later run can still
    /// change it (a dry run's writes to come are not repeated as pending).
    func actionText(_ index: Int) -> String {
        var action = items[index].action?.rawValue ?? "-"
        if let result = items[index].result { action += " (\(result.rawValue))" }
        switch items[index].state {
        case .pending where !(dryRun && items[index].action == .create): action += ", pending"
        case .givenUp: action += ", given up"
        default: break
        }
        return action
    }

    /// An item's protection as found, short, for its row beside the target's: the class, the access control's
    /// flags, the cipher or storage and the security level by their values (`aku, biometryCurrentSet`), and the
    /// switches that are on (`synchronizable`, `requiresAuthentication`); `inspect` shows every attribute.
    package static func rowProtection(_ protection: [String: String]) -> String {
        func isRaw(_ value: String) -> Bool { value.hasPrefix("der:") || value.hasPrefix("hex:") }
        var parts: [String] = []
        if let pdmn = protection["pdmn"] { parts.append(pdmn) }
        if let flags = protection["accessControlFlags"] ?? protection["accessControl"], !isRaw(flags),
            flags.lowercased() != "none"
        {
            parts.append(flags)
        }
        for key in ["cipher", "storage", "securityLevel"] { if let value = protection[key] { parts.append(value) } }
        if protection["synchronizable"] == "true" || protection["sync"] == "1" { parts.append("synchronizable") }
        for key in ["requireAuthentication", "requiresAuthentication", "invalidateOnEnrollment"] {
            switch protection[key] {
            case "true": parts.append(key)
            case let value? where value != "false": parts.append("\(key)=\(value)")
            default: break
            }
        }
        return parts.joined(separator: ", ")
    }

    /// An item's protection as found, `name=value` by name, with raw encodings (`der:`, `hex:`) after what was
    /// decoded from them. Unless `verbose`, a decoded access control is its flags alone (`accessControl=
    /// biometryCurrentSet`, the class inside it only when it differs from `pdmn`), and a raw encoding is shown by
    /// its size (`hex, 13 bytes`).
    static func protectionText(_ protection: [String: String], verbose: Bool) -> String {
        func isRaw(_ value: String) -> Bool { value.hasPrefix("der:") || value.hasPrefix("hex:") }
        var shown = protection
        if !verbose {
            if let flags = shown.removeValue(forKey: "accessControlFlags") { shown["accessControl"] = flags }
            if shown["accessControlProtection"] == shown["pdmn"] { shown["accessControlProtection"] = nil }
            for (key, value) in shown where isRaw(value) {
                shown[key] = "\(value.prefix(3)), \((value.utf8.count - 4) / 2) bytes"
            }
        }
        return shown.sorted { first, second in
            let (a, b) = (isRaw(shown[first.key] ?? ""), isRaw(shown[second.key] ?? ""))
            return a != b ? !a : first.key < second.key
        }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
    }

    /// Runs of consecutive items from one dump and library.
    private var textGroups: [ReportGroup] {
        var groups: [ReportGroup] = []
        for index in items.indices {
            let source = items[index].source
            if let last = groups.last, last.path == source.path, last.library == source.library,
                last.platform == source.platform
            {
                groups[groups.count - 1].range = last.range.lowerBound..<index + 1
            } else {
                groups.append(
                    ReportGroup(
                        path: source.path, library: source.library, platform: source.platform, range: index..<index + 1)
                )
            }
        }
        // A note that every item of a group has (more than one item) is said once, under its heading.
        for number in groups.indices where groups[number].range.count > 1 {
            let range = groups[number].range
            groups[number].commonNotes = items[range.lowerBound].notes.filter { note in
                items[range].allSatisfy { $0.notes.contains(note) }
            }
        }
        return groups
    }

    private func renderedText(_ style: TextStyle) -> RenderedText {
        let width = style.width.map { max($0, Self.narrowestTextWidth) }
        var out = RenderedText(capacity: 256 + items.count * 200)
        // An inventory (`inspect`) has no device and no heading.
        if !targetDevice.isEmpty {
            let heading =
                dryRun
                ? "\(Self.Opening.textDryRun)\(targetDevice): nothing was written."
                : "\(Self.Opening.textRun)\(targetDevice)."
            out.appendWrapped(heading, width: width, indent: 0)
        }
        for source in sources {
            out.appendWrapped(
                "source: \(DisplayText.escaped(source.path)) (\(source.format.rawValue), "
                    + "\(source.library?.rawValue ?? "no library recognised"), \(source.platform.rawValue))",
                width: width, indent: 2)
            for note in source.notes {
                out.appendWrapped("  note: \(DisplayText.escaped(note))", width: width, indent: 8)
            }
        }
        let rows = textRows(verbose: style.verbose)
        let layout = ReportTableLayout(
            header: isInventory ? Self.inventoryHeader : Self.planHeader, rows: rows, width: width, color: style.color)
        let groups = textGroups
        let items = items
        for group in groups {
            out.append("\n")
            // Copies of items read from another dump are counted on the row of the item that stands for them.
            let shown = group.range.filter { items[$0].copyOf == nil }
            var count = group.range.count == 1 ? "1 item" : "\(group.range.count) items"
            let copies = group.range.count - shown.count
            if copies > 0 {
                count += shown.isEmpty ? ", all" : ", \(copies)"
                count += " copies of items shown above (shadowed)"
            }
            out.appendWrapped(
                "\(group.library.rawValue) \(group.platform.rawValue): \(DisplayText.escaped(group.path)), \(count)",
                width: width,
                indent: 2)
            guard !shown.isEmpty else { continue }
            for note in group.commonNotes {
                out.appendWrapped("  note (every item): \(DisplayText.escaped(note))", width: width, indent: 4)
            }
            layout.appendHeader(to: &out)
            let common = group.commonNotes
            out.appendChunks(shown.count) { chunk in
                var part = RenderedText(capacity: chunk.count * 200)
                for index in shown[chunk] {
                    layout.append(rows[index], to: &part)
                    for note in items[index].notes where !common.contains(note) {
                        part.appendWrapped("      note: \(DisplayText.escaped(note))", width: width, indent: 12)
                    }
                }
                return part
            }
        }
        out.append("\n")
        if isInventory || (items.isEmpty && targetDevice.isEmpty) {
            out.append("found \(summary.found) item(s)\n")
        } else {
            out.appendWrapped("summary: \(summaryLine)", width: width, indent: 2)
        }
        return out
    }

    var summaryLine: String {
        let s = summary
        var parts = [
            "found \(s.found)", "create \(s.create)", "exists \(s.exists)", "conflict \(s.conflict)",
            "blocked \(s.blocked)", "sealed \(s.sealed)", "shadowed \(s.shadowed)", "skipped \(s.skipped)",
        ]
        if !dryRun { parts += ["written \(s.written)", "verified \(s.verified)", "failed \(s.failed)"] }
        return parts.joined(separator: ", ")
    }
}

/// One row of the text table: its cells (item, target, action; or item, class) and its last column (the reason;
/// or the protection).
struct ReportRow: Sendable {
    var cells: [String]
    var reason: String
    /// The colour of the action's cell, when the text is coloured.
    var tone: Tone = .plain

    /// What an action's colour says.
    enum Tone: Sendable {
        case plain, migrated, waiting, problem, aside

        init(_ item: MigrationReport.Item) {
            switch item.action {
            case nil: self = .plain
            case .create, .exists:
                self = item.result == nil || item.result == .verified ? .migrated : .problem
            case .conflict: self = .problem
            case .blocked: self = item.state == .final ? .problem : .waiting
            case .sealed: self = .waiting
            case .shadowed, .skipped: self = .aside
            }
            if item.state == .givenUp { self = .problem }
        }

        /// The SGR escape that starts the colour (nil: none).
        var escape: String? {
            switch self {
            case .plain: nil
            case .migrated: "\u{1B}[32m"
            case .waiting: "\u{1B}[33m"
            case .problem: "\u{1B}[31m"
            case .aside: "\u{1B}[2m"
            }
        }
    }
}

/// Consecutive items of one dump and library, and the notes all of them have.
struct ReportGroup: Sendable {
    var path: String
    var library: SourceLibrary
    var platform: DumpPlatform
    var range: Range<Int>
    var commonNotes: [String] = []
}

/// The column widths of the text table, and whether its last column (a reason, a protection) fits beside the
/// others. The columns before the last fixed one wrap; the last fixed one (the action) never does, so it stays
/// aligned.
struct ReportTableLayout: Sendable {
    /// The column names, and the last column's (also its label when it goes under the row).
    let header: ReportRow
    /// Where each row starts.
    static let indent = 2
    /// Between columns.
    static let gap = 2
    /// The narrowest last column beside the others; below it, it goes under the row.
    static let narrowestLast = 24
    /// Without a width, the widest wrapping column.
    static let widestUnlimited = 60

    /// The widths of the fixed columns.
    let widths: [Int]
    /// The last column's width beside the others, nil when it goes on its own lines; with no limit, `Int.max`.
    let lastWidth: Int?
    let width: Int?
    /// Whether the action's cell is coloured (``ReportRow/tone``).
    let color: Bool

    init(header: ReportRow, rows: [ReportRow], width: Int?, color: Bool = false) {
        self.header = header
        self.width = width
        self.color = color
        let columns = header.cells.count
        let counts = ([header] + rows).concurrentMap { row in
            row.cells.map(RenderedText.characterCount) + [RenderedText.characterCount(row.reason)]
        }
        let natural = counts.reduce([Int](repeating: 0, count: columns + 1)) { zip($0, $1).map { max($0, $1) } }
        let fixed = natural[columns - 1]
        guard let width else {
            widths = natural[..<(columns - 1)].map { min($0, Self.widestUnlimited) } + [fixed]
            lastWidth = Int.max
            return
        }
        let cells = width - Self.indent - (columns - 1) * Self.gap
        let inline = cells - natural[..<columns].reduce(0, +) - Self.gap
        if inline >= min(natural[columns], Self.narrowestLast) {
            widths = Array(natural[..<columns])
            lastWidth = inline
            return
        }
        // The last column goes under the row; the wrapping columns share what the fixed one leaves, each at least
        // 10, the first at most two fifths when both need more.
        let shared = max(10 * (columns - 1), cells - fixed)
        if columns == 2 {
            widths = [shared, fixed]
        } else {
            var first = natural[0]
            if natural[0] + natural[1] > shared { first = min(natural[0], max(10, shared * 2 / 5)) }
            widths = [first, max(10, shared - first), fixed]
        }
        lastWidth = nil
    }

    func appendHeader(to out: inout RenderedText) {
        append(header, to: &out)
    }

    /// The row's lines: its cells wrapped inside their columns, then, when it has no room beside the others, its
    /// last column on lines of its own. A token wider than its column (a name without spaces) is never cut: it
    /// goes on a line of its own, whole, from its column's start, after the row's line it belongs to, so the
    /// other columns stay aligned.
    func append(_ row: ReportRow, to out: inout RenderedText) {
        let limited = width != nil
        let fixed = widths.count - 1
        var columns = row.cells.indices.map { column in
            limited && column < fixed
                ? RenderedText.wrap(row.cells[column], width: widths[column]) : [row.cells[column]]
        }
        if let lastWidth {
            columns.append(
                limited && !row.reason.isEmpty ? RenderedText.wrap(row.reason, width: lastWidth) : [row.reason])
        }
        let lines = columns.map(\.count).max() ?? 1
        for line in 0..<lines {
            var cells = columns.map { line < $0.count ? $0[line] : "" }
            var overflowing: [(start: Int, cell: String)] = []
            if limited {
                var start = Self.indent
                for column in cells.indices {
                    let room = column < widths.count ? widths[column] : lastWidth ?? Int.max
                    if column != fixed, RenderedText.characterCount(cells[column]) > room {
                        overflowing.append((start, cells[column]))
                        cells[column] = ""
                    }
                    if column < widths.count { start += widths[column] + Self.gap }
                }
            }
            if line == 0 || cells.contains(where: { !$0.isEmpty }) {
                appendLine(cells, tone: color ? row.tone : .plain, to: &out)
            }
            for (start, cell) in overflowing {
                let begin = out.bytes.count
                out.spaces(start)
                out.append(cell)
                out.trimTrailingSpaces(from: begin)
                out.append("\n")
            }
        }
        if lastWidth == nil, !row.reason.isEmpty, row.cells != header.cells {
            let label = "      \(header.reason.lowercased()): "
            out.appendWrapped(label + row.reason, width: width, indent: label.count)
        }
    }

    /// One line of a row: its cells, each from its column's start.
    private func appendLine(_ cells: [String], tone: ReportRow.Tone, to out: inout RenderedText) {
        let start = out.bytes.count
        out.spaces(Self.indent)
        var pending = 0
        for column in cells.indices {
            let cell = cells[column]
            if !cell.isEmpty {
                out.spaces(pending)
                // The colour wraps the action's text alone: the padding is counted without it.
                if column == widths.count - 1, let escape = tone.escape {
                    out.append(escape + cell + "\u{1B}[0m")
                } else {
                    out.append(cell)
                }
                pending = 0
            }
            if column < cells.count - 1 {
                let used = cell.isEmpty ? 0 : RenderedText.characterCount(cell)
                pending += max(0, widths[column] - used) + Self.gap
            }
        }
        // Names may end in spaces: a line never does.
        out.trimTrailingSpaces(from: start)
        out.append("\n")
    }
}

extension RenderedText {
    /// Removes the spaces and tabs at the end of the text written since `start`.
    mutating func trimTrailingSpaces(from start: Int) {
        while bytes.count > start, let last = bytes.last, last == 0x20 || last == 0x09 { removeLast() }
    }

    /// `text` and a line break; with a width, wrapped to it, continuation lines indented by `indent`.
    mutating func appendWrapped(_ text: String, width: Int?, indent: Int) {
        guard let width else {
            append(text)
            append("\n")
            return
        }
        let lines = Self.wrap(text, width: width, continuationWidth: max(10, width - indent))
        for (number, line) in lines.enumerated() {
            if number > 0 { spaces(indent) }
            append(line)
            append("\n")
        }
    }

    /// `text` cut into lines of at most `width` characters (`continuationWidth` after the first), at spaces only:
    /// a token (a run of characters without a space, such as `whenPasscodeSetThisDeviceOnly` or
    /// `service/key`) is never cut, and one longer than the line goes on a line of its own, whole. The spaces a
    /// line is cut at are dropped. One empty line for empty text.
    static func wrap(_ text: String, width: Int, continuationWidth: Int? = nil) -> [String] {
        if characterCount(text) <= width { return [text] }
        var lines: [String] = []
        var line = ""
        var used = 0
        var started = false
        var limit = max(1, width)
        for token in text.split(separator: " ", omittingEmptySubsequences: false) {
            let count = characterCount(String(token))
            if !started {
                (line, used, started) = (String(token), count, true)
            } else if used + 1 + count <= limit {
                line += " "
                line += token
                used += 1 + count
            } else {
                while line.hasSuffix(" ") { line.removeLast() }
                lines.append(line)
                limit = max(1, continuationWidth ?? width)
                // Spaces in a run that a line is cut at are dropped with it.
                (line, used, started) = (String(token), count, !token.isEmpty)
            }
        }
        lines.append(line)
        return lines
    }
}

import ApexDumpModel
import ApexKeychain
import Foundation

extension MigrationReport.ItemSource {
    /// The item as a report's row names it: its service, server and account joined with ` / `, or its location
    /// in the file when it has none. With `namingDefaultService`, an empty service is named: `(default)` on
    /// Android (react-native-keychain's default service), `(no service)` on iOS (react-native-encrypted-storage's
    /// items).
    func shownName(namingDefaultService: Bool) -> String {
        var names = [service, server, account].compactMap { $0 }
        if namingDefaultService, names.first == "" {
            names[0] = platform == .android ? "(default)" : "(no service)"
        } else if namingDefaultService, service == nil, server == nil, account != nil,
            self.class?.known == .genericPassword
        {
            // A generic password whose dump records no service at all.
            names.insert("(no service)", at: 0)
        }
        return names.isEmpty ? location : names.joined(separator: " / ")
    }
}

/// The report as Markdown for a pull request: the same content as the JSON, as a table and a summary (the text
/// for a terminal is in `ReportText.swift`).
extension MigrationReport {
    /// The Markdown columns of every row, four per item: item, target, action, reason, with the dump's names made safe to
    /// show (``DisplayText``). Fields are read in place (a copy of each item would retain every string it holds).
    private var rows: [[String]] {
        concurrentMap(count: items.count) { index in
            let source = items[index].source
            let found =
                "\(source.library.rawValue) \(source.platform.rawValue) \(source.shownName(namingDefaultService: true))"
            let target = items[index].target?.text ?? "-"
            let action = actionText(index)
            let reason: String
            switch (items[index].reason, items[index].resultReason) {
            case (let first?, let second?): reason = first + "; " + second
            case (let only?, nil), (nil, let only?): reason = only
            case (nil, nil): reason = ""
            }
            return [DisplayText.escaped(found), DisplayText.escaped(target), action, DisplayText.escaped(reason)]
        }
    }

    /// A Markdown table and summary. Every cell that holds names from a dump is a code span (no HTML, link,
    /// autolink or @mention inside it is rendered), its `|` escaped and its control characters written as
    /// `\u{…}`, so each item stays one table row and shows what the dump holds.
    public func markdown() -> String { renderedMarkdown().string }

    /// How each format of a migration's report begins (an inventory's text has no heading): what the renderers
    /// write first, and how a file is known to hold an earlier report (``startsLikeAReport(_:)``).
    package enum Opening {
        static let textDryRun = "Dry run for device "
        static let textRun = "Migration on device "
        static let markdown = "## Keychain migration"
        /// The JSON writer's first member, `device`, two spaces in (``jsonWriter(sink:batch:)``).
        static let json = "{\n  \"device\" : "
    }

    /// Whether `start` (a file's first bytes) is how a migration's report in some format begins.
    package static func startsLikeAReport(_ start: String) -> Bool {
        [Opening.textDryRun, Opening.textRun, Opening.markdown, Opening.json].contains { start.hasPrefix($0) }
    }

    /// ``markdown()`` as UTF-8 bytes, for writing out without a `String` in between.
    public func markdownData() -> Data { Data(renderedMarkdown().bytes) }

    private func renderedMarkdown() -> RenderedText {
        var out = RenderedText(capacity: 256 + items.count * 240)
        out.append("\(Self.Opening.markdown)\(dryRun ? " (dry run)" : "")\n\nDevice: `\(targetDevice)`\n\n")
        for source in sources {
            out.append("- ")
            out.appendCodeSpan(DisplayText.escaped(source.path))
            out.append(
                ": \(source.format.rawValue), \(source.library?.rawValue ?? "no library recognised"), "
                    + "\(source.platform.rawValue)\n")
            for note in source.notes {
                out.append("  - note: ")
                out.appendCodeSpan(DisplayText.escaped(note))
                out.append("\n")
            }
        }
        out.append("\n| Item | Target | Action | Reason | Notes |\n|---|---|---|---|---|\n")
        let (rows, items) = (rows, items)
        out.appendChunks(items.count) { range in
            var part = RenderedText(capacity: range.count * 240)
            for index in range {
                part.append("|")
                for (column, cell) in rows[index].enumerated() {
                    part.append(" ")
                    // The action is the report's own word; the other cells hold names from the dump.
                    if column == 2 { part.append(cell) } else { part.appendCodeSpan(cell) }
                    part.append(" |")
                }
                part.append(" ")
                for (number, note) in items[index].notes.enumerated() {
                    if number > 0 { part.append(" ") }
                    part.appendCodeSpan(DisplayText.escaped(note))
                }
                part.append(" |\n")
            }
            return part
        }
        out.append("\n**Summary:** \(summaryLine)\n")
        // The verdict, as the tool prints it after a text report: counts and what the groups need, no names.
        let verdict = verdict.lines()
        if let head = verdict.first {
            out.append("\n**Verdict:** \(head.dropFirst("verdict: ".count))\n")
            if verdict.count > 1 { out.append("\n") }
            for group in verdict.dropFirst() {
                out.append("- \(group.drop { $0 == " " })\n")
            }
        }
        return out
    }
}

/// Text built as UTF-8 bytes: a 100k-item report is tens of MB, and growing a `String` piece by piece, counting
/// characters and trimming through Foundation cost seconds.
struct RenderedText {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    var string: String { String(decoding: bytes, as: UTF8.self) }

    mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }

    mutating func append(_ other: RenderedText) { bytes.append(contentsOf: other.bytes) }

    /// Appends the text of `count` rows, written in chunks of rows on every core by `write`, in order.
    mutating func appendChunks(_ count: Int, _ write: @Sendable (Range<Int>) -> RenderedText) {
        let parts = concurrentChunks(count: count, write)
        bytes.reserveCapacity(bytes.count + parts.reduce(0) { $0 + $1.bytes.count })
        for part in parts { append(part) }
    }

    mutating func removeLast() { bytes.removeLast() }

    mutating func spaces(_ count: Int) {
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: count))
    }

    /// A Markdown code span for a table cell: nothing inside it is rendered (no HTML, link, autolink or
    /// @mention); its fence is one backtick longer than the longest run of backticks in the text, with a space
    /// inside each end when the text starts or ends with a backtick or a space; `|` is escaped, as a table
    /// cell needs even inside a code span. `text` has no line breaks (``DisplayText`` escaped them). Nothing
    /// for empty text.
    mutating func appendCodeSpan(_ text: String) {
        guard let first = text.utf8.first, let last = text.utf8.last else { return }
        var longest = 0
        var run = 0
        for byte in text.utf8 {
            run = byte == UInt8(ascii: "`") ? run + 1 : 0
            longest = max(longest, run)
        }
        let fence = [UInt8](repeating: UInt8(ascii: "`"), count: longest + 1)
        let pad = first == UInt8(ascii: "`") || last == UInt8(ascii: "`") || first == 0x20 || last == 0x20
        bytes.append(contentsOf: fence)
        if pad { bytes.append(0x20) }
        for byte in text.utf8 {
            if byte == UInt8(ascii: "|") { bytes.append(UInt8(ascii: "\\")) }
            bytes.append(byte)
        }
        if pad { bytes.append(0x20) }
        bytes.append(contentsOf: fence)
    }

    /// The number of characters (grapheme clusters) in `text`: its byte count when it is ASCII without CR (the
    /// one ASCII byte that joins the next into one character, CR LF); else counted.
    static func characterCount(_ text: String) -> Int {
        func isSimple(_ byte: UInt8) -> Bool { byte < 0x80 && byte != 0x0D }
        let simple =
            text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isSimple) } ?? text.utf8.allSatisfy(isSimple)
        return simple ? text.utf8.count : text.count
    }

    /// Trims the whitespace `CharacterSet.whitespaces` names from both ends of the text written since `start`:
    /// ASCII spaces and tabs (its only ASCII members) byte by byte, and the rest by Unicode scalar when a line
    /// starts or ends with a non-ASCII byte.
    mutating func trimWhitespace(from start: Int) {
        func isSpaceOrTab(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        while bytes.count > start, let last = bytes.last, isSpaceOrTab(last) { bytes.removeLast() }
        guard let last = bytes.last, bytes.count > start else { return }
        if last < 0x80, bytes[start] < 0x80, !isSpaceOrTab(bytes[start]) { return }
        let line = String(decoding: bytes[start...], as: UTF8.self)
        let scalars = line.unicodeScalars
        func isWhitespace(_ scalar: Unicode.Scalar) -> Bool { CharacterSet.whitespaces.contains(scalar) }
        let head = scalars.firstIndex { !isWhitespace($0) } ?? scalars.endIndex
        let tail = scalars.lastIndex { !isWhitespace($0) }.map { scalars.index(after: $0) } ?? head
        let trimmed = head < tail ? String(scalars[head..<tail]) : ""
        bytes.removeSubrange(start...)
        bytes.append(contentsOf: trimmed.utf8)
    }
}

import Foundation

/// The report as text for a terminal, and as Markdown for a pull request: the same content as the JSON, as a
/// table and a summary.
extension MigrationReport {
    /// The columns of a row: item, target, action, reason.
    private var rows: [[String]] {
        items.map { item in
            let source = [item.source.service, item.source.server, item.source.account].compactMap { $0 }.joined(separator: " / ")
            let found = "\(item.source.library) \(item.source.platform) \(source.isEmpty ? item.source.location : source)"
            let target = item.target.map { "\($0.service)/\($0.key) [\($0.kind), \($0.accessible), \($0.accessControl)]" } ?? "-"
            var action = item.action ?? "-"
            if let result = item.result { action += " (\(result))" }
            let reason = [item.reason, item.resultReason].compactMap { $0 }.joined(separator: "; ")
            return [found, target, action, reason]
        }
    }

    private var summaryLine: String {
        let s = summary
        var parts = [
            "found \(s.found)", "create \(s.create)", "exists \(s.exists)", "conflict \(s.conflict)",
            "blocked \(s.blocked)", "sealed \(s.sealed)", "shadowed \(s.shadowed)", "skipped \(s.skipped)",
        ]
        if !dryRun { parts += ["written \(s.written)", "verified \(s.verified)", "failed \(s.failed)"] }
        return parts.joined(separator: ", ")
    }

    /// A readable table and summary. Notes follow their item, indented.
    public func text() -> String {
        var out = dryRun ? "Dry run for device \(device): nothing was written.\n" : "Migration on device \(device).\n"
        for source in sources {
            out += "source: \(source.path) (\(source.format), \(source.library ?? "no library recognised"), \(source.platform))\n"
        }
        let header = ["ITEM", "TARGET", "ACTION", "REASON"]
        let table = [header] + rows
        let widths = (0..<3).map { column in min(60, table.map { $0[column].count }.max() ?? 0) }
        out += "\n"
        for (index, row) in table.enumerated() {
            var line = ""
            for column in 0..<3 {
                let cell = row[column]
                line += cell + String(repeating: " ", count: max(0, widths[column] - cell.count)) + "  "
            }
            line += row[3]
            out += line.trimmingCharacters(in: .whitespaces) + "\n"
            if index > 0 {
                for note in items[index - 1].notes { out += "    note: \(note)\n" }
            }
        }
        out += "\nsummary: \(summaryLine)\n"
        return out
    }

    /// A Markdown table and summary.
    public func markdown() -> String {
        func cell(_ text: String) -> String {
            text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
        }
        var out = "## Keychain migration\(dryRun ? " (dry run)" : "")\n\nDevice: `\(device)`\n\n"
        for source in sources {
            out += "- `\(source.path)`: \(source.format), \(source.library ?? "no library recognised"), \(source.platform)\n"
        }
        out += "\n| Item | Target | Action | Reason | Notes |\n|---|---|---|---|---|\n"
        for (row, item) in zip(rows, items) {
            out += "| \(cell(row[0])) | \(cell(row[1])) | \(cell(row[2])) | \(cell(row[3])) | \(cell(item.notes.joined(separator: "; "))) |\n"
        }
        out += "\n**Summary:** \(summaryLine)\n"
        return out
    }
}

import Foundation

/// The text that keychain tools print for people, which is not a dump: known by its first bytes, so that the error
/// for it says what to take instead. Only fixed words are matched and named, never the file's text.
enum KnownTextOutput {
    /// Keychain-Dumper's listing: `Generic Password` / `----------------` blocks with `Keychain Data:` lines.
    case keychainDumper
    /// objection's `ios keychain dump` table (without `--json`).
    case objectionTable
    /// objection's `ios keychain dump_raw`: the keychain's NSDictionary descriptions (`svce = …;`).
    case objectionRaw

    /// What the start of a file shows it to be, or nil. Whole lines are matched, as the tools print them, so that
    /// a text that only speaks of these tools (a README) is not taken for their output.
    init?(_ start: Data) {
        let lines = String(decoding: start.prefix(16 << 10), as: UTF8.self).split(
            omittingEmptySubsequences: true, whereSeparator: \.isNewline)
        func isRule(_ line: Substring) -> Bool { line.count >= 8 && line.allSatisfy { $0 == "-" || $0 == " " } }
        for (index, line) in lines.enumerated() {
            let next = index + 1 < lines.count ? lines[index + 1] : ""
            // Keychain-Dumper: a class title underlined with dashes.
            if line == "Generic Password" || line == "Internet Password", next.allSatisfy({ $0 == "-" }), !next.isEmpty
            {
                self = .keychainDumper
                return
            }
            // objection's table: its header row, then a row of dashes between the columns.
            if line.hasPrefix("Created"), line.contains(" Accessible "), line.contains(" Service "), isRule(next) {
                self = .objectionTable
                return
            }
        }
        // dump_raw: NSDictionary descriptions, `    pdmn = ak;` lines among `    agrp = …;` ones.
        let attributes = lines.filter { line in
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            return trimmed.count < line.count && line.hasSuffix(";")
                && ["pdmn = ", "agrp = ", "svce = ", "acct = ", "accc = "].contains { trimmed.hasPrefix($0) }
        }
        guard attributes.count >= 2 else { return nil }
        self = .objectionRaw
    }

    /// The tool's output, as people call it.
    var name: String {
        switch self {
        case .keychainDumper: "Keychain-Dumper's text output"
        case .objectionTable: "objection's keychain table (ios keychain dump without --json)"
        case .objectionRaw: "objection's ios keychain dump_raw output"
        }
    }

    /// What to give the tool instead.
    var instead: String {
        switch self {
        case .keychainDumper:
            "it prints values as text, without their access control; give a plist or SQLite export of the "
                + "keychain, or objection's JSON (ios keychain dump --json FILE)"
        case .objectionTable:
            "it cuts values and leaves out the access group; save the dump with ios keychain dump --json FILE and "
                + "give that file"
        case .objectionRaw:
            "give objection's JSON (ios keychain dump --json FILE), or a plist or SQLite export of the keychain"
        }
    }
}

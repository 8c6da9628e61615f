/// Text from a dump or a store, made safe to show a person: names in a dump are chosen by whoever wrote it, and
/// a terminal obeys the control characters in what it prints (set its title, clear the screen, move the cursor
/// back over a line to print a fake row), as a bidi override reorders what a reader sees.
///
/// Every human-readable output (text and Markdown reports, `inspect`, `store list`, `store info`, messages on
/// stderr) writes such text through here; JSON stays exact, since its encoder escapes what JSON must.
public enum DisplayText {
    /// The text with every C0 and C1 control character, DEL and Unicode bidi control written as `\u{…}`
    /// (upper-case hex), and everything else as it is.
    public static func escaped(_ text: String) -> String {
        guard mayNeedEscape(text) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            if mustEscape(scalar.value) {
                result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether a scalar is escaped: C0 controls (TAB, LF and CR too), DEL, C1 controls, and the bidi controls
    /// (ALM, LRM, RLM, the embeddings and overrides LRE…RLO and PDF, the isolates LRI…PDI).
    static func mustEscape(_ value: UInt32) -> Bool {
        switch value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Whether the text may hold a scalar to escape: a byte that is a C0 control or DEL, or the first byte of
    /// the UTF-8 of a C1 control (0xC2), of U+061C (0xD8) or of the other bidi controls (0xE2). Most names
    /// have none, and are returned as they are after this scan.
    private static func mayNeedEscape(_ text: String) -> Bool {
        func suspect(_ byte: UInt8) -> Bool {
            byte < 0x20 || byte == 0x7F || byte == 0xC2 || byte == 0xD8 || byte == 0xE2
        }
        return text.utf8.withContiguousStorageIfAvailable { $0.contains(where: suspect) }
            ?? text.utf8.contains(where: suspect)
    }
}

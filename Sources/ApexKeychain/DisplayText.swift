/// Text from a dump or a store, made safe to show a person: names in a dump are chosen by whoever wrote it, and
/// a terminal obeys the control characters in what it prints (set its title, clear the screen, move the cursor
/// back over a line to print a fake row), as a bidi override reorders what a reader sees and an invisible
/// character makes two names look alike.
///
/// Every human-readable output (text and Markdown reports, `inspect`, `store list`, `store info`, messages on
/// stderr) writes such text through here; JSON stays exact, since its encoder escapes what JSON must.
public enum DisplayText {
    /// The text with every scalar that shows nothing or breaks the line written as `\u{…}` (upper-case hex), the
    /// backslash as `\\`, and everything else as it is. What is shown reads back to the exact text, so two
    /// different names never show alike, and a name that holds the text `\u{1B}` shows as `\\u{1B}`.
    ///
    /// Escaped (see `mustEscape(_:)`): the Unicode general categories Cc (controls: C0 with TAB, LF and CR,
    /// DEL, C1), Cf (format: zero-width space, joiners, the BOM, soft hyphen, the bidi controls, tags), Zl and Zp
    /// (the line and paragraph separators), Zs but U+0020 (spaces that can't be told from it), Cs and Cn
    /// (surrogates, noncharacters and code points unassigned in the Unicode version of the Swift runtime: nothing
    /// vouches for how they show), and every other scalar Unicode marks Default_Ignorable_Code_Point (drawn as
    /// nothing: the combining grapheme joiner, variation selectors, Hangul fillers). Private-use scalars are
    /// kept: a font draws them, or the terminal shows a replacement box.
    public static func escaped(_ text: String) -> String {
        guard mayNeedEscape(text) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            if scalar == "\\" {
                result += "\\\\"
            } else if mustEscape(scalar) {
                result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether a scalar other than the backslash is written as `\u{…}`: it shows nothing or breaks the line (see
    /// ``escaped(_:)``).
    static func mustEscape(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return scalar.value < 0x20 || scalar.value == 0x7F }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator, .surrogate, .unassigned:
            return true
        default:
            return properties.isDefaultIgnorableCodePoint
        }
    }

    /// Whether the text may hold a scalar to escape: a byte that is not printable ASCII, or a backslash. Most
    /// names have none, and are returned as they are after this scan.
    private static func mayNeedEscape(_ text: String) -> Bool {
        func suspect(_ byte: UInt8) -> Bool { byte < 0x20 || byte >= 0x7F || byte == 0x5C }
        return text.utf8.withContiguousStorageIfAvailable { $0.contains(where: suspect) }
            ?? text.utf8.contains(where: suspect)
    }
}

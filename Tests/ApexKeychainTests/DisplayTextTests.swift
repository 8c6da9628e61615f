import ApexKeychain
import Foundation
import Testing

/// ``DisplayText/escaped(_:)``: what a person sees of a name tells every name apart, and nothing in it acts on
/// the terminal or hides from the reader.
@Suite("Display text")
struct DisplayTextTests {
    @Test(
        "invisible and line-breaking scalars are written as \\u{HEX}",
        arguments: [
            // Controls (Cc): C0 with TAB, LF and CR, DEL, C1 with NEL.
            0x00, 0x09, 0x0A, 0x0D, 0x1B, 0x1F, 0x7F, 0x85, 0x9B, 0x9F,
            // Line and paragraph separators (Zl, Zp).
            0x2028, 0x2029,
            // Format (Cf): zero-width space, non-joiner, joiner, word joiner, BOM, soft hyphen, bidi controls,
            // a tag character.
            0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD, 0x061C, 0x200E, 0x200F, 0x202A, 0x202E, 0x2066, 0x2069,
            0xE0041,
            // Spaces other than U+0020 (Zs): they can't be told from it.
            0x00A0, 0x2007, 0x3000,
            // Default-ignorable scalars of other categories: the combining grapheme joiner, variation selectors,
            // the Hangul fillers.
            0x034F, 0xFE0F, 0xE0100, 0x115F, 0x3164, 0xFFA0,
            // Noncharacters and unassigned code points (Cn).
            0xFFFE, 0xFFFF, 0xFDD0, 0x10FFFF, 0x0378,
        ] as [UInt32])
    func escapesInvisible(_ value: UInt32) throws {
        let scalar = try #require(Unicode.Scalar(value))
        let hex = String(value, radix: 16, uppercase: true)
        var text = "a"
        text.unicodeScalars.append(scalar)
        text += "b"
        #expect(DisplayText.escaped(text) == "a\\u{\(hex)}b")
    }

    @Test("the backslash is written as \\\\, so a name holding the text of an escape is not shown as the escape")
    func escapesBackslash() {
        #expect(DisplayText.escaped(#"back\slash"#) == #"back\\slash"#)
        #expect(DisplayText.escaped(#"\u{1B}[2J"#) == #"\\u{1B}[2J"#)
        #expect(DisplayText.escaped("\u{1B}[2J") == #"\u{1B}[2J"#)
        #expect(DisplayText.escaped(#"\"#) != DisplayText.escaped("\u{5C}\u{5C}"))
    }

    @Test(
        "visible text is shown as it is",
        arguments: [
            "plain", "with space", "café", "cafe\u{301}", "日本語", "Ελληνικά", "עברית", "العربية", "emoji 😀",
            "quote\"", "tilde~|`", "\u{E000}private use",
        ])
    func keepsVisible(_ text: String) {
        #expect(DisplayText.escaped(text) == text)
    }

    /// Two names that differ are never shown alike: the escapes can be read back to the exact scalars.
    @Test("different names never look alike: the shown text reads back to the name")
    func readsBack() throws {
        let names = [
            "a\u{1B}b", #"a\u{1B}b"#, "a\\b", #"a\\b"#, "a\u{200B}b", "ab", "a\u{2028}b", "a\u{A0}b", "a b",
            "👨\u{200D}👩", "👨👩", #"\"#, #"\\"#, "\u{FEFF}", "",
        ]
        var shown = Set<String>()
        for name in names {
            let text = DisplayText.escaped(name)
            #expect(try Self.unescape(text) == name, "\(text)")
            #expect(shown.insert(text).inserted, "\(text)")
        }
    }

    /// Reads `\\` and `\u{HEX}` back; any other backslash is an error.
    static func unescape(_ text: String) throws -> String {
        struct Malformed: Error {}
        var result = String.UnicodeScalarView()
        var scalars = text.unicodeScalars[...]
        while let first = scalars.popFirst() {
            guard first == "\\" else {
                result.append(first)
                continue
            }
            switch scalars.popFirst() {
            case "\\": result.append("\\")
            case "u":
                guard scalars.popFirst() == "{", let end = scalars.firstIndex(of: "}"),
                    let value = UInt32(String(scalars[..<end]), radix: 16), let scalar = Unicode.Scalar(value)
                else { throw Malformed() }
                result.append(scalar)
                scalars = scalars[scalars.index(after: end)...]
            default: throw Malformed()
            }
        }
        return String(result)
    }
}

/// Text as a dictionary key compared byte for byte, as the keychain and Android compare names: a `String` key
/// would make "caf\u{E9}" and "cafe\u{301}" one key (Swift compares strings by canonical equivalence).
public struct ExactName: Hashable, Sendable {
    private var text: String

    /// The parts joined with U+0000 (which no part holds where it matters: services, groups and keys are
    /// compared whole).
    public init(_ parts: String...) {
        text = parts.count == 1 ? parts[0] : parts.joined(separator: "\u{0}")
    }

    public static func == (a: ExactName, b: ExactName) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }

    public func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

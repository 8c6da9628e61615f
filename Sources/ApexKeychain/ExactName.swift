/// Text as a dictionary key compared byte for byte, as the keychain and Android compare names: a `String` key
/// would make "caf\u{E9}" and "cafe\u{301}" one key (Swift compares strings by canonical equivalence).
public struct ExactName: Hashable, Sendable {
    private var text: String

    /// The parts joined with U+0000 (which no part holds where it matters: services, groups and keys are
    /// compared whole).
    public init(_ parts: String...) {
        text = parts.count == 1 ? parts[0] : parts.joined(separator: "\u{0}")
    }

    /// One part (as `init(_:)` with one part, without the variadic array).
    public init(_ part: String) { text = part }

    /// Two parts (as the variadic form, without its array).
    public init(_ first: String, _ second: String) {
        text = first
        text.reserveCapacity(first.utf8.count + 1 + second.utf8.count)
        text.append("\u{0}")
        text.append(second)
    }

    /// Three parts (as the variadic form, without its array).
    public init(_ first: String, _ second: String, _ third: String) {
        text = first
        text.reserveCapacity(first.utf8.count + 2 + second.utf8.count + third.utf8.count)
        text.append("\u{0}")
        text.append(second)
        text.append("\u{0}")
        text.append(third)
    }

    /// Whether the two names are the same bytes (no Unicode normalisation).
    public static func == (a: ExactName, b: ExactName) -> Bool { ExactText.equal(a.text, b.text) }

    /// Hashes the name's UTF-8 bytes, consistently with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

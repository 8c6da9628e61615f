import Foundation

/// What one read of a plist may write out: a binary plist's objects can be referred to over and over, so a small
/// file can stand for far more values and bytes than it holds. Every read starts with ``forRead(byteCount:)``
/// and spends it as it turns the tree into records; shared by every item and every entry of the read.
struct ExpansionBudget {
    /// How many more values (items, attributes, elements of `extra` containers) may be written out.
    var values: Int
    /// How many more bytes of keys and values may be written out: text as its UTF-8 bytes, data as its bytes,
    /// or as the length of its `hex:…` text in `extra`.
    var bytes: Int
    /// The bytes there were at the start, for messages.
    var byteLimit: Int

    init(values: Int, bytes: Int) {
        self.values = values
        self.bytes = bytes
        byteLimit = bytes
    }

    /// The budget of a read of a dump of `byteCount` bytes. Values: far more than a real dump holds (every
    /// value takes at least a byte, bar Apple's sharing of equal ones), far less than what a file of objects
    /// referring to shared objects over and over would expand to. Bytes: `bytes`, by default
    /// ``DumpLimits/maxFileBytes``, the limit on a dump file, which a file read out may not exceed either.
    static func forRead(byteCount: Int, bytes: Int = DumpLimits.maxFileBytes) -> ExpansionBudget {
        ExpansionBudget(values: max(1 << 21, 8 * byteCount), bytes: bytes)
    }

    /// Whether more was spent than there was.
    var isOverspent: Bool { values < 0 || bytes < 0 }
}

extension PlistNode {
    /// What ``extraText(depth:budget:)`` gives back.
    enum ExtraText: Equatable {
        case text(String)
        /// The value nests deeper than ``DumpLimits/maxDepth``.
        case tooDeep
        /// Writing the value out would use up the read's budget (a binary plist's shared objects can make a small
        /// file expand enormously).
        case tooLarge
        /// The value holds `<data>` that is not valid Base64; what is wrong.
        case damaged(String)
    }

    /// The bytes the value takes written out as found: a string's UTF-8, data's bytes (`hex:…` text in `extra`
    /// doubles them), 0 for the rest (small scalars, and containers, which ``extraText(depth:budget:)`` counts
    /// element by element).
    func expandedByteCount(asHex: Bool) -> Int {
        switch self {
        case .string(let text): text.utf8.count
        case .data(let data): asHex ? 4 + 2 * data.count : data.count
        default: 0
        }
    }

    /// The text an `extra` entry keeps (both iOS readers write it so): strings as found, data as `hex:…`,
    /// numbers in decimal, booleans as `true`/`false`, dates in ISO 8601, null as `null`, containers as
    /// JSON-like text with sorted keys, and `?` for a UID.
    ///
    /// - Parameters:
    ///   - depth: the nesting depth of the container that holds the value.
    ///   - budget: what the read may still write out (see ``ExpansionBudget``); a container's elements are
    ///     taken from it here, a scalar's bytes by the caller.
    func extraText(depth: Int, budget: inout ExpansionBudget) -> ExtraText {
        switch self {
        case .string(let text): return .text(text)
        case .damagedData(let why): return .damaged(why)
        case .array, .dictionary:
            do throws(NestedStop) {
                return .text(try nestedText(depth: depth + 1, budget: &budget))
            } catch {
                switch error {
                case .tooDeep: return .tooDeep
                case .tooLarge: return .tooLarge
                case .damaged(let why): return .damaged(why)
                }
            }
        default: return .text(scalarText)
        }
    }

    private var scalarText: String {
        switch self {
        case .string(let text): text
        case .data(let data): "hex:" + IOSAttributes.hex(data)
        case .boolean(let flag): flag ? "true" : "false"
        case .integer(let number): String(number)
        case .unsignedInteger(let number): String(number)
        case .real(let number): String(number)
        case .date(let date): IOSAttributes.iso8601(date)
        case .null: "null"
        case .array, .dictionary, .uid, .damagedData: "?"
        }
    }

    /// Why a container's text was given up.
    private enum NestedStop: Error {
        case tooDeep, tooLarge
        case damaged(String)
    }

    /// - Parameters:
    ///   - depth: the depth this value sits at when it is a container.
    ///   - budget: what may still be written; overspent when the text was given up as too large.
    private func nestedText(depth: Int, budget: inout ExpansionBudget) throws(NestedStop) -> String {
        budget.values -= 1
        // Quotes, or the room of a number or a date; a string's or data's bytes before it is copied.
        budget.bytes -= 32 + expandedByteCount(asHex: true)
        guard !budget.isOverspent else { throw .tooLarge }
        switch self {
        case .string(let text):
            return Self.quoted(text)
        case .damagedData(let why):
            throw .damaged(why)
        case .array(let elements):
            guard depth <= DumpLimits.maxDepth else { throw .tooDeep }
            var parts: [String] = []
            parts.reserveCapacity(elements.count)
            for element in elements {
                parts.append(try element.nestedText(depth: depth + 1, budget: &budget))
            }
            return "[" + parts.joined(separator: ", ") + "]"
        case .dictionary(let dictionary):
            guard depth <= DumpLimits.maxDepth else { throw .tooDeep }
            let entries = dictionary.uniqueEntries()
            var parts: [(String, String)] = []
            parts.reserveCapacity(entries.count)
            for (key, element) in entries {
                let keyText = try key.nestedText(depth: depth + 1, budget: &budget)
                parts.append((keyText, try element.nestedText(depth: depth + 1, budget: &budget)))
            }
            return "{" + parts.sorted { $0.0 < $1.0 }.map { "\($0.0): \($0.1)" }.joined(separator: ", ") + "}"
        case .data, .date:
            return Self.quoted(scalarText)
        default:
            return scalarText
        }
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

import Foundation

extension PlistNode {
    /// What ``extraText(depth:)`` gives back.
    enum ExtraText: Equatable {
        case text(String)
        /// The value nests deeper than ``DumpLimits/maxDepth``.
        case tooDeep
        /// Writing the value out would use up the read's budget of values (a binary plist's shared objects can
        /// make a small file expand enormously).
        case tooLarge
        /// The value holds `<data>` that is not valid Base64; what is wrong.
        case damaged(String)
    }

    /// The budget of values one read may write out or convert, for a dump of `byteCount` bytes: far more than a
    /// real dump holds (every value takes at least a byte, bar Apple's sharing of equal ones), far less than
    /// what a file of objects referring to shared objects over and over would expand to.
    static func expansionBudget(byteCount: Int) -> Int { max(1 << 21, 8 * byteCount) }

    /// The text an `extra` entry keeps (both iOS readers write it so): strings as found, data as `hex:…`, numbers in decimal, booleans as `true`/`false`, dates in ISO
    /// 8601, null as `null`, containers as JSON-like text with sorted keys, and `?` for a UID.
    ///
    /// - Parameters:
    ///   - depth: the nesting depth of the container that holds the value.
    ///   - budget: the values the read may still write out (see ``expansionBudget(byteCount:)``); shared by
    ///     every entry of every item of one read.
    func extraText(depth: Int, budget: inout Int) -> ExtraText {
        switch self {
        case .string(let text): return .text(text)
        case .damagedData(let why): return .damaged(why)
        case .array, .dictionary:
            var damage: String?
            var result: ExtraText = .tooDeep
            if let text = nestedText(depth: depth + 1, budget: &budget, damage: &damage) { result = .text(text) }
            if let damage { return .damaged(damage) }
            return budget < 0 ? .tooLarge : result
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

    /// - Parameters:
    ///   - depth: the depth this value sits at when it is a container.
    ///   - budget: how many more values may be written; below zero when the text was given up as too large.
    ///   - damage: set when the text was given up for `<data>` that is not valid Base64.
    private func nestedText(depth: Int, budget: inout Int, damage: inout String?) -> String? {
        budget -= 1
        guard budget >= 0 else { return nil }
        switch self {
        case .string(let text):
            return Self.quoted(text)
        case .damagedData(let why):
            damage = why
            return nil
        case .array(let elements):
            guard depth <= DumpLimits.maxDepth else { return nil }
            var parts: [String] = []
            parts.reserveCapacity(elements.count)
            for element in elements {
                guard let part = element.nestedText(depth: depth + 1, budget: &budget, damage: &damage) else { return nil }
                parts.append(part)
            }
            return "[" + parts.joined(separator: ", ") + "]"
        case .dictionary(let dictionary):
            guard depth <= DumpLimits.maxDepth else { return nil }
            let entries = dictionary.uniqueEntries()
            var parts: [(String, String)] = []
            parts.reserveCapacity(entries.count)
            for (key, element) in entries {
                guard let keyText = key.nestedText(depth: depth + 1, budget: &budget, damage: &damage),
                    let part = element.nestedText(depth: depth + 1, budget: &budget, damage: &damage)
                else { return nil }
                parts.append((keyText, part))
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

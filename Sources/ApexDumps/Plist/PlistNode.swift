import Foundation

/// A property-list value as the project's own parsers read it (see ``PlistParser``): the XML and binary forms
/// give the same tree.
///
/// The cases keep the distinctions the iOS readers rely on: an integer is not a real and neither is a boolean;
/// a date is not a number; data is not text. Integers above `Int64.max` (a binary plist's 16-byte integers, or
/// an XML `<integer>` that large) are ``unsignedInteger(_:)``. A binary plist's keyed-archiver UIDs are kept as
/// ``uid(_:)`` and its null object as ``null``; no keychain attribute has either. An XML `<data>` element whose
/// text is not valid Base64 is ``damagedData(_:)``, with what is wrong (never the text): the reader decides what
/// that costs (one item's value, or the read), so a damaged value is never taken for other bytes.
enum PlistNode: Sendable {
    case string(String)
    case data(Data)
    case damagedData(String)
    case date(Date)
    case integer(Int64)
    case unsignedInteger(UInt64)
    case real(Double)
    case boolean(Bool)
    case uid(UInt64)
    case null
    case array([PlistNode])
    case dictionary(PlistDictionary)

    /// The deepest nesting of containers a parser builds; the top-level container is at depth 1.
    ///
    /// It is well above `DumpLimits/maxDepth` (which bounds what the readers follow inside an item, and whose
    /// errors name the attribute), and matches libxml2's own element-depth limit.
    static let maxNesting = 256

    /// How an error message names the kind: "item 3: svce is a number, expected …".
    var kindName: String {
        switch self {
        case .string: "a string"
        case .data: "data"
        case .damagedData: "data that is not valid Base64"
        case .boolean: "a boolean"
        case .integer, .unsignedInteger, .real: "a number"
        case .date: "a date"
        case .array: "an array"
        case .dictionary: "a dictionary"
        case .null: "null"
        case .uid: "a value of an unknown type"
        }
    }

    /// The integer, when the value is an integer (or a real with an integral value) that fits in `Int64`.
    var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .real(let value): Int64(exactly: value)
        default: nil
        }
    }
}

/// A property-list dictionary: its entries in file order, duplicates included.
///
/// Keys are strings in every XML plist and in every binary plist Apple writes, but a binary plist can use any
/// object as a key, so a key is a ``PlistNode``. Lookups by string take the last entry with that key, as a
/// dictionary built entry by entry would.
struct PlistDictionary: Sendable {
    var entries: [(key: PlistNode, value: PlistNode)]

    init(_ entries: [(key: PlistNode, value: PlistNode)] = []) {
        self.entries = entries
    }

    /// The value of the last entry whose key is the string `key`.
    subscript(key: String) -> PlistNode? {
        for entry in entries.reversed() {
            if case .string(let found) = entry.key, found == key { return entry.value }
        }
        return nil
    }

    /// The entries with one entry per key (the last one wins), in file order of their last occurrence; nil when
    /// a key is not a string.
    func stringKeyed() -> [(key: String, value: PlistNode)]? {
        stringKeyedEntries()?.compactMap { entry in
            if case .string(let key) = entry.key { (key, entry.value) } else { nil }
        }
    }

    /// The entries with one entry per key (the last one wins), in file order of their last occurrence, keys
    /// still as nodes; nil when a key is not a string. A dictionary without repeated keys (every keychain item
    /// Apple writes) is returned as it is, without a copy.
    func stringKeyedEntries() -> [(key: PlistNode, value: PlistNode)]? {
        var keys: [String] = []
        if entries.count > 16 { keys.reserveCapacity(entries.count) }
        for entry in entries {
            guard case .string(let key) = entry.key else { return nil }
            if entries.count > 16 { keys.append(key) }
        }
        if entries.count <= 16 {
            var repeated = false
            outer: for index in entries.indices {
                guard case .string(let key) = entries[index].key else { continue }
                for later in entries.index(after: index)..<entries.endIndex {
                    if case .string(let other) = entries[later].key, other == key {
                        repeated = true
                        break outer
                    }
                }
            }
            if !repeated { return entries }
            keys = entries.map { if case .string(let key) = $0.key { key } else { "" } }
        }
        var last: [String: Int] = [:]
        last.reserveCapacity(keys.count)
        for (index, key) in keys.enumerated() { last[key] = index }
        guard last.count < keys.count else { return entries }
        return entries.indices.filter { last[keys[$0]] == $0 }.map { entries[$0] }
    }

    /// The entries with one entry per key among string keys (the last one wins); entries with other keys are all
    /// kept.
    func uniqueEntries() -> [(key: PlistNode, value: PlistNode)] {
        var seen: [String: Int] = [:]
        var unique: [(key: PlistNode, value: PlistNode)?] = []
        unique.reserveCapacity(entries.count)
        for entry in entries {
            if case .string(let key) = entry.key {
                if let earlier = seen[key] { unique[earlier] = nil }
                seen[key] = unique.count
            }
            unique.append(entry)
        }
        return unique.compactMap { $0 }
    }
}

/// What a parser found wrong, in words that name no value; ``IOSPlistReader`` puts it in a `DumpError`.
struct PlistParseError: Error {
    /// What is wrong, for the code that decides on it; ``what`` is its text.
    enum Kind: Sendable, Equatable {
        /// A binary property list that can't be read whole.
        case binaryMalformed
        /// A binary property list holding a set (no keychain dump has one).
        case binaryHoldsSet
        /// An XML property list that is not well formed, truncated or nested too deeply.
        case xmlMalformed
        /// An XML property list whose DOCTYPE declares entities or other DTD content.
        case xmlDeclaresDTD
        /// Text that is neither form (an OpenStep plist, say).
        case textNotAPlist
        /// Bytes that are neither form.
        case notAPlist
    }

    /// What is wrong.
    var kind: Kind
    /// What is wrong in particular, or nil; shown in parentheses after ``what``.
    var detail: String?

    init(_ kind: Kind, detail: String? = nil) {
        self.kind = kind
        self.detail = detail
    }

    /// The kind of file, and so the start of the message: `"a binary property list that is malformed or truncated"`.
    var what: String {
        switch kind {
        case .binaryMalformed: "a binary property list that is malformed or truncated"
        case .binaryHoldsSet: "a binary property list holding a set, which no keychain dump has"
        case .xmlMalformed: "an XML property list that is malformed, truncated or nested too deeply"
        case .xmlDeclaresDTD:
            "an XML property list whose DOCTYPE declares entities or other DTD content, which is refused"
        case .textNotAPlist: "not an XML or binary property list"
        case .notAPlist: "not a property list (XML or binary)"
        }
    }

    /// "the file is <what> (<detail>)".
    var message: String {
        "the file is \(what)" + (detail.map { " (\($0))" } ?? "")
    }
}

extension PlistNode {
    /// The tree of a value `JSONSerialization` read: strings, numbers (a JSON `true`/`false` is a boolean, an
    /// integral number an integer, others reals), arrays, objects (a dictionary with string keys) and null. The
    /// objection JSON reader reads through it, so both iOS readers share one value model and one `extra` text.
    init(json value: Any) {
        if let text = value as? String {
            self = .string(text)
        } else if let number = value as? NSNumber {
            self = Self.number(number)
        } else if let array = value as? [Any] {
            self = .array(array.map(PlistNode.init(json:)))
        } else if let object = value as? [String: Any] {
            self = .dictionary(
                PlistDictionary(object.map { (key: PlistNode.string($0.key), value: PlistNode(json: $0.value)) }))
        } else {
            // NSNull, and nothing else JSONSerialization makes.
            self = .null
        }
    }

    /// A JSON number: a boolean when Foundation made it from `true` or `false`, else by its C type.
    private static func number(_ number: NSNumber) -> PlistNode {
        if String(describing: type(of: number)).contains("Boolean") { return .boolean(number.boolValue) }
        switch String(cString: number.objCType) {
        case "f", "d":
            return .real(number.doubleValue)
        case "Q", "L", "I":
            let value = number.uint64Value
            return value <= UInt64(Int64.max) ? .integer(Int64(value)) : .unsignedInteger(value)
        default:
            return .integer(number.int64Value)
        }
    }
}

import ApexKeychain
import Foundation

/// Decodes an item's access control (`accc`, a `SecAccessControlRef`) as iOS dumps write it: the serialized DER
/// form (`SecAccessControlCopyData`), the text form of its description, or objection's flag words.
///
/// The serialized form is a DER-encoded property-list dictionary `{"prot": <pdmn>, "acl": {<operation>:
/// <constraint>…}}`. Operations are `od` (decrypt), `oe`, `odel`, `dacl` (no constraints), `osgn` / `oa` and
/// friends (private-key use); a constraint is `true` or a dictionary of constraint keys.
///
/// ### Recognition
/// - `cpo` → `AccessControlFlags.userPresence`; `cup` → `AccessControlFlags.devicePasscode`;
///   `cwtch` → `AccessControlFlags.watch`.
/// - `cbio` holding `pbioh`, or more than one entry → `AccessControlFlags.biometryCurrentSet`; any other `cbio`
///   → `AccessControlFlags.biometryAny`.
/// - `pkofn` equal to 1 → `AccessControlFlags.or`; otherwise, with two or more constraints,
///   `AccessControlFlags.and`.
/// - `prp` (at the ACL's top level or inside a constraint) → `AccessControlFlags.applicationPassword`.
/// - An `osgn` or `oa` operation → `AccessControlFlags.privateKeyUsage`.
/// - `prot` → `AccessControlDescription/protection`.
///
/// A constraint key the decoder does not know (any key of a constraint dictionary other than the above and the
/// `p…` parameters such as `pbioc`) is refused rather than dropped: dropping it would describe the item as less
/// protected than it is. Unknown operations are read like `od`, since Apple gives the private-key operations whose
/// names are not public the same constraint as `osgn`.
public enum AccessControlDecoder {
    /// Why serialized access-control data (or other `der_plist` DER, such as a backup item's attributes) can't be
    /// decoded. The message names the problem, never a value.
    public struct DecodingError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong.
        public let message: String

        /// Creates an error.
        public init(_ message: String) { self.message = message }

        /// The message.
        public var description: String { message }
    }

    /// Decodes serialized access control (`SecAccessControlCopyData`, a DER property list).
    ///
    /// The parser is bounded: every length is checked against the bytes that remain, containers nest at most
    /// `DumpLimits/maxDepth` deep, and nothing is allocated beyond what the input holds.
    ///
    /// The ACL dictionary is named `"acl"` by the tools that read it, but Apple's name for it is not public, so any
    /// dictionary-valued key other than `prot` is read as the ACL.
    ///
    /// - Parameter der: the bytes.
    /// - Returns: the flags, the protection inside (`prot`), and `raw` = `der:` followed by the bytes in hex.
    /// - Throws: ``DecodingError`` when the bytes are not a DER dictionary, are truncated, nest too deeply, hold
    ///   a type `der_plist` does not write, or hold a constraint the decoder does not know.
    public static func decode(der: Data) throws(DecodingError) -> AccessControlDescription {
        // The parser names no caller (a backup's items are DER too): an empty input is named here.
        guard !der.isEmpty else { throw DecodingError("the access control data is empty") }
        let root = try DERParser.parse(der)
        guard case .dictionary(let entries) = root else {
            throw DecodingError("the access control is \(root.kindName), expected a dictionary")
        }
        var protection: String?
        var acl: [(key: String, value: Node)] = []
        for (key, value) in entries {
            switch key {
            case "prot":
                guard case .string(let text) = value else {
                    throw DecodingError("prot is \(value.kindName), expected a string")
                }
                protection = text
            case "bound":
                continue
            default:
                if case .dictionary(let operations) = value { acl += operations }
            }
        }
        let flags = try recognize(acl)
        return AccessControlDescription(flags: flags, protection: protection, raw: "der:" + IOSAttributes.hex(der))
    }

    /// Decodes the text form of a `SecAccessControlRef` description: `ak;od(cbio(pbioc()pbioh()));odel(true);oe(true)`,
    /// optionally wrapped as `<SecAccessControlRef: …>`.
    ///
    /// The form is the protection, then `;op(value)` for each ACL entry, with dictionaries written as
    /// `key(value)key(value)` and data as hex (`…(Nb)` when cut short).
    ///
    /// - Returns: the description with `raw` = the text, or nil when the text is not in that form (unbalanced
    ///   parentheses, a protection that is not a code such as `ak`, nesting deeper than `DumpLimits/maxDepth`,
    ///   nothing to describe, or a constraint the decoder does not know).
    public static func decode(text: String) -> AccessControlDescription? {
        guard let (protection, acl) = TextForm.parse(text), let flags = try? recognize(acl) else { return nil }
        return AccessControlDescription(flags: flags, protection: protection, raw: text)
    }

    /// Decodes objection's `access_control` field: flag words joined by spaces, such as
    /// `kSecAccessControlDevicePasscode And kSecAccessControlBiometryCurrentSet`.
    ///
    /// `"None"` means an access control without constraints; `""` means the item has none (nil). objection's agent
    /// compares the `pkofn` NSNumber object with a JavaScript number, which is never equal, so it likely prints
    /// `And` for an Or as well (inferred from its source). `And` is kept as `AccessControlFlags.and`: the
    /// stricter reading, never a weaker one.
    ///
    /// - Returns: the description with `raw` = the words, or nil when there are no words, a word is unknown, or
    ///   both `Or` and `And` appear.
    public static func decode(objectionWords: String) -> AccessControlDescription? {
        let words = objectionWords.split(whereSeparator: \.isWhitespace).map(String.init)
        guard !words.isEmpty else { return nil }
        if words == ["None"] { return AccessControlDescription(flags: [], raw: objectionWords) }
        var flags: AccessControlFlags = []
        for word in words {
            guard let flag = objectionFlags[word] else { return nil }
            flags.insert(flag)
        }
        guard !flags.isSuperset(of: [.or, .and]) else { return nil }
        return AccessControlDescription(flags: flags, raw: objectionWords)
    }

    /// objection's words (and the SDK's constant names a dump might carry) to flags.
    private static let objectionFlags: [String: AccessControlFlags] = [
        "kSecAccessControlUserPresence": .userPresence,
        "kSecAccessControlDevicePasscode": .devicePasscode,
        "kSecAccessControlBiometryAny": .biometryAny,
        "kSecAccessControlTouchIDAny": .biometryAny,
        "kSecAccessControlBiometryCurrentSet": .biometryCurrentSet,
        "kSecAccessControlTouchIDCurrentSet": .biometryCurrentSet,
        "kSecAccessControlWatch": .watch,
        "kSecAccessControlCompanion": .watch,
        "Or": .or,
        "kSecAccessControlOr": .or,
        "And": .and,
        "kSecAccessControlAnd": .and,
        "kSecAttrKeyClassPrivate": .privateKeyUsage,
        "kSecAccessControlPrivateKeyUsage": .privateKeyUsage,
        "kSecAccessControlApplicationPassword": .applicationPassword,
    ]

    /// The flags of an ACL dictionary (operation → constraint), by the rules in the type's documentation.
    static func recognize(_ acl: [(key: String, value: Node)]) throws(DecodingError) -> AccessControlFlags {
        var flags: AccessControlFlags = []
        var constraints: Set<String> = []
        var kOfN: Int64?
        for (operation, value) in acl {
            switch operation {
            case "prp": if value.isTruthy { flags.insert(.applicationPassword) }
            case "osgn", "oa": flags.insert(.privateKeyUsage)
            default: break
            }
            guard case .dictionary(let entries) = value else { continue }
            for (key, parameter) in entries {
                switch key {
                case "cpo": flags.insert(.userPresence)
                case "cup": flags.insert(.devicePasscode)
                case "cwtch": flags.insert(.watch)
                case "cbio":
                    if case .dictionary(let bio) = parameter,
                        bio.count > 1 || bio.contains(where: { $0.key == "pbioh" })
                    {
                        flags.insert(.biometryCurrentSet)
                    } else {
                        flags.insert(.biometryAny)
                    }
                case "pkofn":
                    guard case .integer(let count) = parameter else {
                        throw DecodingError(
                            "pkofn in \(safeName(operation)) is \(parameter.kindName), expected an integer")
                    }
                    kOfN = count
                    continue
                case "prp":
                    flags.insert(.applicationPassword)
                    continue
                default:
                    if key.hasPrefix("p") { continue }
                    throw DecodingError("unknown constraint \(safeName(key)) in \(safeName(operation))")
                }
                constraints.insert(key)
            }
        }
        if kOfN == 1 {
            flags.insert(.or)
        } else if constraints.count >= 2 {
            flags.insert(.and)
        }
        return flags
    }

    /// A key's name for a message when it is a short token, else a neutral phrase (keys come from the input).
    private static func safeName(_ key: String) -> String {
        let isToken =
            !key.isEmpty && key.utf8.count <= 16
            && key.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F
            }
        return isToken ? "'\(key)'" : "a key"
    }
}

extension AccessControlDecoder {
    /// A decoded property-list value (from DER or the text form).
    enum Node {
        case boolean(Bool)
        case integer(Int64)
        case string(String)
        case data(Data)
        case date(Date)
        case null
        case array([Node])
        case dictionary([(key: String, value: Node)])

        /// How an error message names the kind.
        var kindName: String {
            switch self {
            case .boolean: "a boolean"
            case .integer: "an integer"
            case .string: "a string"
            case .data: "data"
            case .date: "a date"
            case .null: "null"
            case .array: "an array"
            case .dictionary: "a dictionary"
            }
        }

        /// `true`, a non-zero integer, or anything other than `false` / `0` / null.
        var isTruthy: Bool {
            switch self {
            case .boolean(let flag): flag
            case .integer(let number): number != 0
            case .null: false
            default: true
            }
        }
    }
}

extension AccessControlDecoder {
    /// The text form of a `SecAccessControlRef` description: `prot;op(value);op(value)…`.
    enum TextForm {
        /// The protection and the ACL entries, or nil when the text is not in the form.
        static func parse(_ text: String) -> (String?, [(key: String, value: Node)])? {
            var body = Substring(text.trimmingCharacters(in: .whitespacesAndNewlines))
            let wrapper = "<SecAccessControlRef:"
            if body.hasPrefix(wrapper) {
                guard body.hasSuffix(">") else { return nil }
                body = body.dropFirst(wrapper.count).dropLast()
                body = Substring(body.trimmingCharacters(in: .whitespaces))
            }
            let bytes = Array(body.utf8)
            guard !bytes.isEmpty, let segments = split(bytes) else { return nil }
            var protection: String?
            var acl: [(key: String, value: Node)] = []
            let reader = Reader(bytes: bytes)
            for (index, segment) in segments.enumerated() {
                if index == 0, !bytes[segment].contains(0x28) {
                    if segment.isEmpty { continue }
                    guard segment.count <= 8, bytes[segment].allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) else {
                        return nil
                    }
                    protection = String(decoding: bytes[segment], as: UTF8.self)
                    continue
                }
                guard let entries = try? reader.entries(segment, depth: 1), !entries.isEmpty else { return nil }
                acl += entries
            }
            guard protection != nil || !acl.isEmpty else { return nil }
            return (protection, acl)
        }

        /// The ranges between top-level `;`, or nil when the parentheses don't balance.
        private static func split(_ bytes: [UInt8]) -> [Range<Int>]? {
            var segments: [Range<Int>] = []
            var level = 0
            var start = 0
            for (index, byte) in bytes.enumerated() {
                switch byte {
                case 0x28: level += 1
                case 0x29:
                    level -= 1
                    if level < 0 { return nil }
                case 0x3B where level == 0:
                    segments.append(start..<index)
                    start = index + 1
                default: break
                }
            }
            guard level == 0 else { return nil }
            segments.append(start..<bytes.count)
            return segments
        }

        private struct TooDeep: Error {}

        private struct Reader {
            let bytes: [UInt8]

            /// `key(value)key(value)…` filling the range exactly, or nil when the range is not such a list.
            func entries(_ range: Range<Int>, depth: Int) throws(TooDeep) -> [(key: String, value: Node)]? {
                guard depth <= DumpLimits.maxDepth else { throw TooDeep() }
                var result: [(key: String, value: Node)] = []
                var position = range.lowerBound
                while position < range.upperBound {
                    let keyStart = position
                    while position < range.upperBound, isKeyCharacter(bytes[position]) { position += 1 }
                    guard position > keyStart, position < range.upperBound, bytes[position] == 0x28,
                        let close = matchingClose(after: position, before: range.upperBound)
                    else { return nil }
                    let key = String(decoding: bytes[keyStart..<position], as: UTF8.self)
                    result.append((key, try value(position + 1..<close, depth: depth + 1)))
                    position = close + 1
                }
                return result
            }

            /// A nested dictionary when the content is a list of entries, else a scalar.
            private func value(_ range: Range<Int>, depth: Int) throws(TooDeep) -> Node {
                if !range.isEmpty, let nested = try entries(range, depth: depth), !nested.isEmpty {
                    return .dictionary(nested)
                }
                let text = String(decoding: bytes[range], as: UTF8.self)
                switch text {
                case "true": return .boolean(true)
                case "false": return .boolean(false)
                default: return Int64(text).map(Node.integer) ?? .string(text)
                }
            }

            private func matchingClose(after open: Int, before end: Int) -> Int? {
                var level = 0
                for index in open..<end {
                    if bytes[index] == 0x28 {
                        level += 1
                    } else if bytes[index] == 0x29 {
                        level -= 1
                        if level == 0 { return index }
                    }
                }
                return nil
            }

            private func isKeyCharacter(_ byte: UInt8) -> Bool {
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x5F
            }
        }
    }
}

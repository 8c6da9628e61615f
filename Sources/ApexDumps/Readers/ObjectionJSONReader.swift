import ApexKeychain
import Foundation

/// Reads objection's `ios keychain dump --json` output: a JSON array of items whose fields are all strings.
///
/// ### Fields
/// - `item_class`: a constant name (`kSecClassGenericPassword`) or a class code (`genp`).
/// - `service`, `account`, `generic` → `svce`, `acct`, `gena` as text. objection prints `""` both for a missing
///   attribute and an empty one; `service` and `account` keep `""` (the keychain returns an empty value for a
///   missing primary-key attribute), except an `inet` item's `service`, an attribute internet passwords don't
///   have; every other field reads `""` as absent.
/// - `accessible_attribute`: a constant name (`kSecAttrAccessibleWhenUnlocked` → `ak`, …); other text as found.
/// - `access_control`: objection's flag words (``AccessControlDecoder/decode(objectionWords:)``); `""` = none.
/// - `create_date`, `modification_date`: `2018-07-21 18:11:15 +0000`.
/// - `creator`: a decimal string (or four characters). `entitlement_group` → `agrp`; `label` → `labl`.
/// - Every other field (`alias`, `comment`, `custom_icon`, `description`, `invisible`, `negative`,
///   `protected`, `script_code`, `type`, and fields objection may add) → `KeychainRecord/extra` under its
///   JSON name, when not empty.
/// - objection does not print `sync`: `KeychainRecord/synchronizable` is false and `sync` is in
///   `KeychainRecord/unrecorded` (`KeychainRecord/synchronizableUnknown`).
/// - objection prints no field for an internet password's server, protocol, port or path (its agent,
///   `agent/src/ios/keychain.ts`, has never read `kSecAttrServer`), so an `inet` item lists `srvr`, `ptcl`, `port`
///   and `path` in `KeychainRecord/unrecorded`: the server of such an item is unknown, not empty. A JSON that
///   has them (added by hand from a `dump_raw` listing, or by a patched agent) gives them as `server` → `srvr`
///   (`""` kept, as for `service`), `protocol` → `ptcl`, `port` → `port` (a decimal string or number) and `path`
///   → `path`.
///
/// ### The value: `data` and `dataHex`
/// `data` is a rendering of `v_Data`: its UTF-8 decoding (`""` when the bytes are not UTF-8, cut at the first
/// NUL), or with `--smart` an NSKeyedArchiver dictionary re-encoded as JSON, or `(Key data not displayed)` for
/// class `keys`. `dataHex` is the bytes in hex, but objection versions of 2019 wrote each byte without its
/// leading zero (`0x01` as `1`), which can give an odd length and can't be decoded exactly. So:
/// 1. Class `keys` with `data` = `(Key data not displayed)` → `DumpValue/absent`.
/// 2. `data` not empty and `dataHex` equal to the hex of `data`'s UTF-8 bytes (two digits per byte, or the
///    2019 one-digit form) → those bytes: the two fields confirm each other.
/// 3. Otherwise `dataHex` even-length, valid hex → its bytes, unless some item of the same file has an
///    odd-length `dataHex`: the file then comes from a version that dropped zeros, and an even length proves
///    nothing → `DumpValue/damaged(_:)`.
/// 4. Otherwise (odd length, not hex, `data` that `dataHex` does not confirm) → `DumpValue/damaged(_:)`; `data`
///    alone is never trusted for bytes, since it may be a cut, lossy or "smart" rendering.
/// 5. No `dataHex` field at all (objection before 2019): `data` not empty → its UTF-8 bytes, the only rendering
///    those versions had; `""` → `DumpValue/damaged(_:)` (empty, or bytes that are not UTF-8).
/// `data` and `dataHex` both `""` → empty data; `dataHex` `""` with a non-empty `data` → damaged.
public enum ObjectionJSONReader {
    /// Whether the first bytes of a file look like objection's JSON: an array whose first item has one of its
    /// field names (`access_control`, `accessible_attribute`, `item_class`, `entitlement_group`).
    ///
    /// - Parameter prefix: the file's first bytes (a kilobyte is enough).
    public static func looksLike(_ prefix: Data) -> Bool {
        var head = Array(prefix.prefix(4096))
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { head.removeFirst(3) }
        let text = String(decoding: head, as: UTF8.self).drop { $0.isWhitespace }
        guard text.hasPrefix("[") else { return false }
        return ["\"access_control\"", "\"accessible_attribute\"", "\"item_class\"", "\"entitlement_group\""]
            .contains { text.contains($0) }
    }

    /// Reads the keychain items of an objection JSON dump.
    ///
    /// - Parameters:
    ///   - data: the file's bytes (UTF-8 JSON).
    ///   - path: the file's path, for errors and nothing else.
    /// - Returns: the items in file order, located `item 1`, `item 2`, ….
    /// - Throws: `DumpError` with kind `.malformed` when the file is empty, not UTF-8, not JSON (truncated,
    ///   nested too deeply), not an array of objects, or holds a field of the wrong type or an unreadable date,
    ///   creator or access control (the message names the item and the field, never a value); with kind
    ///   `.notADump` instead when the file does not look like objection's output at all (its first bytes name
    ///   none of objection's fields, and no item has an `item_class`): a `package.json`, some other JSON.
    public static func read(_ data: Data, path: String) throws(DumpError) -> [KeychainRecord] {
        // What is wrong with a file that does not even start like objection's output says it is not a dump.
        let kind: DumpError.Kind = looksLike(data.prefix(4096)) ? .malformed : .notADump
        let prefix = kind == .notADump ? "not a keychain dump: " : ""
        guard !data.isEmpty else { throw DumpError(kind, path: path, prefix + "the file is empty") }
        guard data.count <= DumpLimits.maxFileBytes else {
            throw DumpError(.malformed, path: path, "the file is larger than \(DumpLimits.maxFileBytes) bytes")
        }
        // JSON text never holds a raw NUL; refusing them also keeps JSONSerialization from reading UTF-16/32.
        guard !data.contains(0), String(validating: data, as: UTF8.self) != nil else {
            throw DumpError(kind, path: path, prefix + "the file is not UTF-8 text")
        }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw DumpError(
                kind, path: path, prefix + "the file is not JSON: it is malformed, truncated or nested too deeply")
        }
        let top = PlistNode(json: root)
        guard case .array(let elements) = top else {
            throw DumpError(
                .notADump, path: path,
                "not a keychain dump: the top level is \(top.kindName), expected an array of objection's items")
        }
        let hasItemClass = elements.contains { element in
            if case .dictionary(let dictionary) = element { return dictionary["item_class"] != nil }
            return false
        }
        if !elements.isEmpty, !hasItemClass, kind == .notADump {
            throw DumpError(.notADump, path: path, "not a keychain dump: no element of the array has an item_class")
        }
        var items: [ObjectionItem] = []
        items.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            let location = "item \(index + 1)"
            guard case .dictionary(let dictionary) = element, let pairs = dictionary.stringKeyed() else {
                throw DumpError(.malformed, path: path, "\(location) is \(element.kindName), expected an object")
            }
            let fields = Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { _, later in later })
            items.append(ObjectionItem(location: location, fields: fields, path: path))
        }
        let zerosDropped = items.contains { item in
            if case .string(let hex)? = item.fields["dataHex"] { return hex.utf8.count % 2 == 1 }
            return false
        }
        var records: [KeychainRecord] = []
        records.reserveCapacity(items.count)
        for item in items {
            records.append(try item.record(zerosDropped: zerosDropped))
        }
        return records
    }
}

/// One objection item turned into a record; errors name the item and the field.
private struct ObjectionItem {
    let location: String
    let fields: [String: PlistNode]
    let path: String

    private static let mappedFields: Set<String> = [
        "item_class", "service", "account", "generic", "data", "dataHex", "accessible_attribute", "access_control",
        "create_date", "modification_date", "creator", "entitlement_group", "label",
    ]

    /// An internet password's fields that objection itself never prints, and their attributes.
    private static let internetFields = [("server", "srvr"), ("protocol", "ptcl"), ("port", "port"), ("path", "path")]

    private static let keyPlaceholder = "(Key data not displayed)"

    func record(zerosDropped: Bool) throws(DumpError) -> KeychainRecord {
        guard let itemClass = try string("item_class"), !itemClass.isEmpty else { throw error("has no item_class") }
        var record = KeychainRecord(location: location, itemClass: IOSAttributes.itemClass(itemClass))
        // objection prints no field for it: whether the item synchronizes is unknown, not "no".
        record.unrecorded.insert("sync")
        record.service = try string("service").map(DumpBytes.string)
        record.account = try string("account").map(DumpBytes.string)
        record.generic = try nonEmpty("generic").map(DumpBytes.string)
        record.value = try value(itemClass: record.knownClass, zerosDropped: zerosDropped)
        record.protection = try nonEmpty("accessible_attribute").map(IOSAttributes.protectionCode)
        if let words = try nonEmpty("access_control") {
            if let description = AccessControlDecoder.decode(objectionWords: words) {
                record.accessControl = description
            } else {
                // This item's protection is unknown (its importer blocks it); the other items read.
                record.extra["accc"] = words
                record.unreadable["accc"] =
                    "access_control (accc) is not a list of objection's access-control flag words"
            }
        }
        record.createdAt = try date("create_date")
        record.modifiedAt = try date("modification_date")
        if let creator = try nonEmpty("creator") {
            guard let code = IOSAttributes.fourCharCode(text: creator) else {
                throw error("creator is neither a decimal number nor four characters")
            }
            record.creator = code
        }
        record.accessGroup = try nonEmpty("entitlement_group")
        record.label = try nonEmpty("label")
        var mapped = Self.mappedFields
        if record.knownClass == .internetPassword {
            // An internet password has no svce: objection prints "" for it, as for any missing attribute.
            if record.service == .string("") { record.service = nil }
            try internetAttributes(&record)
            mapped.formUnion(Self.internetFields.map(\.0))
        }
        for (name, raw) in fields where !mapped.contains(name) {
            if case .null = raw { continue }
            // JSON has no shared objects: a value is never larger than the file, so the budget is one entry's.
            var budget = ExpansionBudget.unlimited
            switch raw.extraText(depth: 2, budget: &budget) {
            case .text(let text): if !text.isEmpty { record.extra[name] = text }
            case .tooDeep, .tooLarge, .damaged, .sharedContainer:
                throw error("\(name) nests deeper than \(DumpLimits.maxDepth) levels")
            }
        }
        return record
    }

    /// `server`, `protocol`, `port` and `path`, when the JSON has them; the attributes of those it lacks are
    /// `KeychainRecord/unrecorded`.
    private func internetAttributes(_ record: inout KeychainRecord) throws(DumpError) {
        for (field, attribute) in Self.internetFields {
            let found: PlistNode? = if case .null? = fields[field] { nil } else { fields[field] }
            guard let raw = found else {
                record.unrecorded.insert(attribute)
                continue
            }
            switch field {
            case "server": record.server = try string(field)
            case "protocol": record.protocolCode = try nonEmpty(field)
            case "path": record.path = try string(field)
            default:
                switch raw {
                case .integer(let number) where number >= 0 && number <= 65535: record.port = Int(number)
                case .string(let text) where text.isEmpty: break
                case .string(let text):
                    guard let number = Int(text), (0...65535).contains(number) else {
                        throw error("port is not a port number")
                    }
                    record.port = number
                default: throw error("port is not a port number")
                }
            }
        }
    }

    private func error(_ message: String) -> DumpError {
        DumpError(.malformed, path: path, "\(location): \(message)")
    }

    /// A string field as found; nil when missing or null.
    private func string(_ name: String) throws(DumpError) -> String? {
        guard let raw = fields[name] else { return nil }
        switch raw {
        case .string(let text): return text
        case .null: return nil
        case let other: throw error("\(name) is \(other.kindName), expected a string")
        }
    }

    /// A string field; nil when missing, null or empty.
    private func nonEmpty(_ name: String) throws(DumpError) -> String? {
        guard let text = try string(name), !text.isEmpty else { return nil }
        return text
    }

    private func date(_ name: String) throws(DumpError) -> Date? {
        guard let text = try nonEmpty(name) else { return nil }
        guard let date = IOSAttributes.date(objectionText: text) ?? IOSAttributes.date(iso8601: text) else {
            throw error("\(name) is not a date like 2018-07-21 18:11:15 +0000")
        }
        return date
    }

    /// The value, by the rules in ``ObjectionJSONReader``'s documentation.
    private func value(itemClass: KeychainItemClass?, zerosDropped: Bool) throws(DumpError) -> DumpValue {
        let text = try string("data") ?? ""
        if itemClass == .key, text == Self.keyPlaceholder { return .absent }
        guard let hex = try string("dataHex") else {
            return text.isEmpty
                ? .damaged("objection wrote no dataHex and an empty data: the value is empty or not UTF-8 text")
                : .data(Data(text.utf8))
        }
        let lowered = hex.lowercased()
        if !text.isEmpty {
            let bytes = Data(text.utf8)
            if lowered == IOSAttributes.hex(bytes) || lowered == Self.zeroDroppingHex(bytes) { return .data(bytes) }
        }
        guard IOSAttributes.isHexDigits(hex) else { return .damaged("dataHex is not hexadecimal") }
        guard hex.utf8.count % 2 == 0, let bytes = IOSAttributes.data(hex: hex) else {
            return .damaged(
                "dataHex has odd length: objection wrote bytes below 0x10 as one digit, so the bytes can't be recovered, and data does not match"
            )
        }
        if bytes.isEmpty { return text.isEmpty ? .data(Data()) : .damaged("dataHex is empty but data is not") }
        guard !zerosDropped else {
            return .damaged(
                "dataHex can't be trusted: this file has odd-length dataHex values, from an objection version that wrote bytes below 0x10 as one digit, and data does not match"
            )
        }
        return .data(bytes)
    }

    /// The hex that objection's 2019 versions wrote: each byte without its leading zero.
    private static func zeroDroppingHex(_ bytes: Data) -> String {
        bytes.map { String($0, radix: 16) }.joined()
    }
}

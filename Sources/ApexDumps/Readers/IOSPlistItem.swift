import ApexKeychain
import Foundation

/// One plist item turned into a record; errors name the item and the attribute.
struct PlistItem {
    typealias Found = PlistNode

    let item: IOSPlistReader.FoundItem
    let path: String

    init(_ item: IOSPlistReader.FoundItem, path: String) {
        self.item = item
        self.path = path
    }

    private static let internetKeys: Set<String> = ["srvr", "ptcl", "port", "path", "atyp", "sdmn"]

    /// The record; every key and value written out is taken from `budget`'s bytes (a container in `extra` also
    /// from its values).
    func record(budget: inout ExpansionBudget) throws(DumpError) -> KeychainRecord {
        var record = KeychainRecord(location: item.location, itemClass: "")
        var itemClass: String?
        for (node, value) in item.attributes {
            guard case .string(let key) = node else { continue }
            // Before anything is copied or converted: a shared value is one object however often it is used.
            budget.bytes -= key.utf8.count + value.expandedByteCount(asHex: false)
            guard budget.bytes >= 0 else { throw IOSPlistReader.expands(path, budget) }
            if case .damagedData(let why) = value, key != "v_Data", !Self.protectionKeys.contains(key) {
                throw error("\(key) is <data> that is not valid Base64 (\(why))")
            }
            switch key {
            case "class": itemClass = IOSAttributes.itemClass(try text(value, key))
            case "svce": record.service = try bytes(value, key)
            case "acct": record.account = try bytes(value, key)
            case "gena": record.generic = try bytes(value, key)
            case "v_Data": record.value = try secret(value)
            case "agrp": record.accessGroup = try text(value, key)
            case "labl": record.label = try blobText(value, key, extra: &record.extra)
            case "crtr": record.creator = try creator(value)
            case "cdat": record.createdAt = try date(value, key)
            case "mdat": record.modifiedAt = try date(value, key)
            case "srvr": record.server = try blobText(value, key, extra: &record.extra)
            case "ptcl": record.protocolCode = try protocolCode(value)
            case "port": record.port = try port(value)
            case "path": record.path = try blobText(value, key, extra: &record.extra)
            case "atyp": record.authenticationType = try blobText(value, key, extra: &record.extra)
            case "sdmn": record.securityDomain = try blobText(value, key, extra: &record.extra)
            case "pdmn", "sync", "accc":
                // What decides the item's protection: one that can't be read makes this item's protection unknown
                // (its importer blocks it), not the whole dump unreadable.
                do throws(DumpError) {
                    try protection(key, value, into: &record)
                } catch {
                    record.unreadable[key] = problem(error)
                    if key == "accc" { record.extra[key] = Self.undecodedText(value) }
                }
            default:
                // Data is kept as `hex:…` text, twice its size and then some.
                budget.bytes -= value.expandedByteCount(asHex: true) - value.expandedByteCount(asHex: false)
                guard budget.bytes >= 0 else { throw IOSPlistReader.expands(path, budget) }
                switch value.extraText(depth: item.depth, budget: &budget) {
                case .text(let text): record.extra[key] = text
                case .tooDeep: throw error("\(key) nests deeper than \(DumpLimits.maxDepth) levels")
                case .tooLarge: throw IOSPlistReader.expands(path, budget)
                case .damaged(let why): throw error("\(key) holds <data> that is not valid Base64 (\(why))")
                case .sharedContainer:
                    throw error(
                        "\(key) reaches the same container twice (a binary plist's shared reference), which no keychain dump holds: it is refused"
                    )
                }
            }
        }
        if let found = itemClass ?? item.classKey {
            record.itemClass = found
        } else {
            record.itemClass = try inferredClass()
        }
        if let header = IOSPlistReader.sealedBlob(item) {
            record.value = .damaged(
                "v_Data is a sealed keychain blob (version \(header.version), key class \(header.keyClass)), not the secret"
            )
        }
        return record
    }

    private func error(_ message: String) -> DumpError {
        DumpError(.malformed, path: path, "\(item.location): \(message)")
    }

    /// The attributes that decide an item's protection (`KeychainRecord/protectionAttributes`).
    private static let protectionKeys = Set(KeychainRecord.protectionAttributes)

    /// `pdmn`, `sync` or `accc` into the record; throws what is wrong with one that can't be read.
    private func protection(_ key: String, _ value: Found, into record: inout KeychainRecord) throws(DumpError) {
        if case .damagedData(let why) = value { throw error("\(key) is <data> that is not valid Base64 (\(why))") }
        switch key {
        case "pdmn": record.protection = IOSAttributes.protectionCode(try text(value, key))
        case "sync": record.synchronizable = try synchronizable(value)
        default: record.accessControl = try accessControl(value)
        }
    }

    /// What is wrong, without the item's location (`KeychainRecord/unreadable` is the item's own).
    private func problem(_ error: DumpError) -> String {
        let prefix = item.location + ": "
        return error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
    }

    /// An `accc` that does not decode, as `KeychainRecord/extra` keeps it (an access control is no secret):
    /// data as `hex:…`, text as found, anything else by its kind.
    private static func undecodedText(_ value: Found) -> String {
        switch value {
        case .data(let data): "hex:" + IOSAttributes.hex(data)
        case .string(let text): text
        default: value.kindName
        }
    }

    private func inferredClass() throws(DumpError) -> String {
        let keys = item.keys
        if keys.contains(where: Self.internetKeys.contains) { return "inet" }
        if keys.contains("svce") || keys.contains("gena") { return "genp" }
        throw error("has no class, and no attribute that tells a generic password from an internet password")
    }

    /// `svce` / `acct` / `gena`: text or bytes as found.
    private func bytes(_ value: Found, _ key: String) throws(DumpError) -> DumpBytes {
        switch value {
        case .string(let text): return .string(text)
        case .data(let data): return .data(data)
        default: throw error("\(key) is \(value.kindName), expected a string or data")
        }
    }

    /// A text attribute; UTF-8 data is read as text (old decrypted exports wrote every value as data).
    private func text(_ value: Found, _ key: String) throws(DumpError) -> String {
        switch value {
        case .string(let text): return text
        case .data(let data):
            guard let text = String(validating: data, as: UTF8.self) else {
                throw error("\(key) is data that is not UTF-8 text")
            }
            return text
        default: throw error("\(key) is \(value.kindName), expected a string")
        }
    }

    /// A Blob-kind attribute that the record holds as text: data that is not UTF-8 goes to `extra` as `hex:…`.
    private func blobText(_ value: Found, _ key: String, extra: inout [String: String]) throws(DumpError) -> String? {
        switch value {
        case .string(let text): return text
        case .data(let data):
            if let text = String(validating: data, as: UTF8.self) { return text }
            extra[key] = "hex:" + IOSAttributes.hex(data)
            return nil
        default: throw error("\(key) is \(value.kindName), expected a string or data")
        }
    }

    /// `v_Data`: data as found; a string is taken as its UTF-8 bytes; `<data>` that is not valid Base64 is a
    /// damaged value, which blocks this item only.
    private func secret(_ value: Found) throws(DumpError) -> DumpValue {
        switch value {
        case .data(let data): return .data(data)
        case .damagedData(let why): return .damaged("damaged value: v_Data is <data> that is not valid Base64 (\(why))")
        case .string(let text): return .data(Data(text.utf8))
        default: throw error("v_Data is \(value.kindName), expected data")
        }
    }

    private func creator(_ value: Found) throws(DumpError) -> UInt32 {
        switch value {
        case .string(let text):
            guard let code = IOSAttributes.fourCharCode(text: text) else {
                throw error("crtr is text that is neither a decimal number nor four characters")
            }
            return code
        case .integer, .unsignedInteger, .real:
            guard let number = value.integer, let code = IOSAttributes.fourCharCode(integer: number) else {
                throw error("crtr is a number that is not a 32-bit four-character code")
            }
            return code
        default:
            throw error("crtr is \(value.kindName), expected an integer or a four-character code")
        }
    }

    private func synchronizable(_ value: Found) throws(DumpError) -> Bool {
        switch value {
        case .boolean(let flag): return flag
        case .integer(0): return false
        case .integer(1): return true
        case .integer, .unsignedInteger, .real: throw error("sync is a number other than 0 or 1")
        default: throw error("sync is \(value.kindName), expected 0, 1 or a boolean")
        }
    }

    /// A date, `CFAbsoluteTime` seconds, or ISO 8601 / NSDate-description text.
    private func date(_ value: Found, _ key: String) throws(DumpError) -> Date {
        switch value {
        case .date(let date): return date
        case .integer(let seconds):
            guard let date = IOSAttributes.date(absoluteTime: Double(seconds)) else {
                throw error("\(key) is out of range")
            }
            return date
        case .real(let seconds):
            guard let date = IOSAttributes.date(absoluteTime: seconds) else { throw error("\(key) is out of range") }
            return date
        case .string(let text):
            guard let date = IOSAttributes.date(iso8601: text) ?? IOSAttributes.date(objectionText: text) else {
                throw error("\(key) is text that is not a date")
            }
            return date
        default:
            throw error("\(key) is \(value.kindName), expected a date")
        }
    }

    /// `ptcl`: text as found (`htps`); a number is shown as its four characters when they are printable.
    private func protocolCode(_ value: Found) throws(DumpError) -> String {
        switch value {
        case .integer(let number):
            if let code = IOSAttributes.fourCharCode(integer: number), number > 0xFFFF,
                let characters = IOSAttributes.fourCharString(code)
            {
                return characters
            }
            return String(number)
        case .string, .data:
            return try text(value, "ptcl")
        default:
            throw error("ptcl is \(value.kindName), expected a string or an integer")
        }
    }

    private func port(_ value: Found) throws(DumpError) -> Int {
        let number: Int64?
        switch value {
        case .integer, .real: number = value.integer
        case .string(let text): number = text.utf8.count <= 5 ? Int64(text) : nil
        default: throw error("port is \(value.kindName), expected an integer")
        }
        guard let number, (0...65_535).contains(number) else { throw error("port is not a port number (0 to 65535)") }
        return Int(number)
    }

    /// `accc`: serialized DER data, or the text form of a `SecAccessControlRef`.
    private func accessControl(_ value: Found) throws(DumpError) -> AccessControlDescription {
        switch value {
        case .data(let data):
            do {
                return try AccessControlDecoder.decode(der: data)
            } catch {
                throw self.error("accc: \(error.message)")
            }
        case .string(let text):
            guard let description = AccessControlDecoder.decode(text: text) else {
                throw error("accc is text that is not an access-control description")
            }
            return description
        default:
            throw error("accc is \(value.kindName), expected data or text")
        }
    }
}

import ApexSQLite
import Foundation

/// How a keychain export's values become a record's attributes: each SQLite value by its storage class, as
/// securityd reads it (see ``KeychainSQLiteReader``).
extension KeychainSQLiteReader {

    static func apply(_ value: SQLValue, as role: Role, column: String, to record: inout KeychainRecord) {
        if case .null = value { return }
        switch role {
        case .service: record.service = bytes(value)
        case .account: record.account = bytes(value)
        case .generic: record.generic = bytes(value)
        case .value:
            switch value {
            case .blob(let data): record.value = .data(data)
            case .text(let data): record.value = .data(data)
            case .integer, .real:
                record.value = .damaged("the value is stored as a number, so its exact bytes are unknown")
            case .null: record.value = .absent
            }
        case .protection: record.protection = text(value, column: column, into: &record)
        case .accessGroup: record.accessGroup = text(value, column: column, into: &record)
        case .label: record.label = text(value, column: column, into: &record)
        case .server: record.server = text(value, column: column, into: &record)
        case .protocolCode: record.protocolCode = text(value, column: column, into: &record)
        case .path: record.path = text(value, column: column, into: &record)
        case .authenticationType: record.authenticationType = text(value, column: column, into: &record)
        case .securityDomain: record.securityDomain = text(value, column: column, into: &record)
        case .creator:
            if let code = fourCharacterCode(value) {
                record.creator = code
            } else {
                record.extra[column] = value.description
            }
        case .synchronizable:
            if let flag = boolean(value) {
                record.synchronizable = flag
            } else {
                record.extra[column] = value.description
                // Whether the item synchronizes is unknown: not taken as "no" (the item's importer blocks it).
                record.unreadable["sync"] = "sync is neither a number nor a boolean"
            }
        case .port:
            if let port = integer(value) {
                record.port = port
            } else {
                record.extra[column] = value.description
            }
        case .createdAt, .modifiedAt:
            guard let date = date(value) else {
                record.extra[column] = value.description
                return
            }
            if case .createdAt = role { record.createdAt = date } else { record.modifiedAt = date }
        case .accessControl:
            // Decoded when it can be; otherwise kept as found, so that an importer sees an access control it
            // can't read (and refuses to guess) rather than none.
            switch value {
            case .blob(let data):
                if let decoded = try? AccessControlDecoder.decode(der: data) {
                    record.accessControl = decoded
                    return
                }
            case .text(let data):
                if let text = String(validating: data, as: UTF8.self),
                    let decoded = AccessControlDecoder.decode(text: text)
                {
                    record.accessControl = decoded
                    return
                }
            default:
                break
            }
            record.extra[column] = value.description
            record.unreadable["accc"] = "accc does not decode as an access control"
        case .extra:
            record.extra[column] = value.description
        }
    }

    /// `svce` / `acct` / `gena`: TEXT as text (bytes when it is not valid UTF-8), BLOB as bytes, numbers as text.
    static func bytes(_ value: SQLValue) -> DumpBytes? {
        switch value {
        case .null: nil
        case .blob(let data): .data(data)
        case .text(let data): String(validating: data, as: UTF8.self).map(DumpBytes.string) ?? .data(data)
        case .integer, .real: .string(value.description)
        }
    }

    /// A text attribute: TEXT, a BLOB of valid UTF-8, or a number as decimal text. Bytes that are not UTF-8 go
    /// to `extra` as `hex:…` instead.
    static func text(_ value: SQLValue, column: String, into record: inout KeychainRecord) -> String? {
        switch value {
        case .null: return nil
        case .integer, .real: return value.description
        case .text(let data), .blob(let data):
            if let text = String(validating: data, as: UTF8.self) { return text }
            record.extra[column] = "hex:" + hex(data)
            return nil
        }
    }

    /// `crtr`: an INTEGER (securityd stores a four-character code as a signed 32-bit number), or TEXT holding a
    /// decimal number or the four characters themselves (`ApxK`, or quoted `'ApxK'`).
    static func fourCharacterCode(_ value: SQLValue) -> UInt32? {
        switch value {
        case .integer(let number): return code(number)
        case .real(let number):
            guard number.rounded() == number, let whole = Int64(exactly: number) else { return nil }
            return code(whole)
        case .text(let data):
            guard var text = String(validating: data, as: UTF8.self)?.trimmingCharacters(in: .whitespaces) else {
                return nil
            }
            if let number = Int64(text) { return code(number) }
            if text.count == 6, text.hasPrefix("'"), text.hasSuffix("'") { text = String(text.dropFirst().dropLast()) }
            let scalars = Array(text.unicodeScalars)
            guard scalars.count == 4, scalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) else { return nil }
            return scalars.reduce(UInt32(0)) { $0 << 8 | $1.value }
        case .null, .blob: return nil
        }
    }

    static func code(_ number: Int64) -> UInt32? {
        if let code = UInt32(exactly: number) { return code }
        if let signed = Int32(exactly: number) { return UInt32(bitPattern: signed) }
        return nil
    }

    static func boolean(_ value: SQLValue) -> Bool? {
        switch value {
        case .integer(let number): return number != 0
        case .real(let number): return number != 0
        case .text(let data):
            switch String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespaces).lowercased() {
            case "1", "true", "yes": return true
            case "0", "false", "no", "": return false
            default: return nil
            }
        case .null, .blob: return nil
        }
    }

    static func integer(_ value: SQLValue) -> Int? {
        switch value {
        case .integer(let number): return Int(exactly: number)
        case .real(let number): return number.rounded() == number ? Int(exactly: number) : nil
        case .text(let data): return Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespaces))
        case .null, .blob: return nil
        }
    }

    /// `cdat` / `mdat`: a REAL or INTEGER CFAbsoluteTime, or TEXT: a CFAbsoluteTime number, or a date such as
    /// `2024-05-01T10:20:30Z`, `2024-05-01 10:20:30.250 +0000` or SQLite's `2024-05-01 10:20:30` (UTC).
    static func date(_ value: SQLValue) -> Date? {
        switch value {
        case .integer(let number): return Date(timeIntervalSinceReferenceDate: Double(number))
        case .real(let number): return number.isFinite ? Date(timeIntervalSinceReferenceDate: number) : nil
        case .text(let data):
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            if let seconds = Double(text), seconds.isFinite, text.first.map({ $0.isNumber || $0 == "-" }) == true {
                return Date(timeIntervalSinceReferenceDate: seconds)
            }
            return parseDateText(Array(text.utf8))
        case .null, .blob: return nil
        }
    }

    /// `YYYY-MM-DD[(T| )HH:MM[:SS[.fff]]][ ][Z|±HH[:]MM]`; no zone means UTC.
    static func parseDateText(_ bytes: [UInt8]) -> Date? {
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var result = 0
            for byte in bytes[index..<(index + digits)] {
                guard (0x30...0x39).contains(byte) else { return nil }
                result = result * 10 + Int(byte - 0x30)
            }
            index += digits
            return result
        }
        func take(_ character: Character) -> Bool {
            guard index < bytes.count, bytes[index] == character.asciiValue else { return false }
            index += 1
            return true
        }
        guard let year = number(4), take("-"), let month = number(2), take("-"), let day = number(2),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var hour = 0
        var minute = 0
        var second = 0
        var fraction = 0.0
        if take("T") || take(" ") {
            guard let h = number(2), take(":"), let m = number(2), h < 24, m < 60 else { return nil }
            hour = h
            minute = m
            if take(":") {
                guard let s = number(2), s <= 60 else { return nil }
                second = s
                if take(".") || take(",") {
                    var scale = 0.1
                    let start = index
                    while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                        fraction += Double(bytes[index] - 0x30) * scale
                        scale /= 10
                        index += 1
                    }
                    guard index > start else { return nil }
                }
            }
        }
        _ = take(" ")
        var offsetSeconds = 0
        if take("Z") {
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let zoneHours = number(2) else { return nil }
            _ = take(":")
            let zoneMinutes = number(2) ?? 0
            offsetSeconds = sign * (zoneHours * 3600 + zoneMinutes * 60)
        }
        guard index == bytes.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    fileprivate static func hex(_ data: Data) -> String { Hex.lowercase(data) }
}

// MARK: - Values by storage class (the SQLite wrapper is ApexSQLite)

/// One value of a row, by storage class.
enum SQLValue: CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    /// TEXT, as its UTF-8 bytes (SQLite does not check that they are valid).
    case text(Data)
    case blob(Data)

    /// The value for `extra`: text as found, numbers in decimal, bytes as `hex:…`.
    var description: String {
        switch self {
        case .null: ""
        case .integer(let number): String(number)
        case .real(let number): String(number)
        case .text(let data):
            String(validating: data, as: UTF8.self) ?? "hex:" + KeychainSQLiteReader.hex(data)
        case .blob(let data): "hex:" + KeychainSQLiteReader.hex(data)
        }
    }
}

extension SQLValue {
    /// The column's value by its storage class.
    init(_ statement: Statement, _ column: Int32) {
        switch statement.storageClass(column) {
        case .integer: self = .integer(statement.int64(column))
        case .float: self = .real(statement.double(column))
        case .text: self = .text(statement.textBytes(column) ?? Data())
        case .blob: self = .blob(statement.data(column) ?? Data())
        case .null: self = .null
        }
    }
}

import Foundation

/// Conversions shared by the iOS readers: class and protection names, four-character codes, dates, hex, and a
/// neutral view of the values that `PropertyListSerialization` and `JSONSerialization` hand back.
///
/// Everything here is pure and bounded: no value is ever put into an error message by these helpers.
enum IOSAttributes {
    // MARK: Item classes

    /// `kSecClass` constant names, as objection prints them, to the keychain's class codes.
    static let classCodes: [String: String] = [
        "kSecClassGenericPassword": "genp",
        "kSecClassInternetPassword": "inet",
        "kSecClassCertificate": "cert",
        "kSecClassKey": "keys",
        "kSecClassIdentity": "idnt",
    ]

    /// The class codes in the order the readers list them.
    static let classOrder = ["genp", "inet", "cert", "keys", "idnt"]

    /// The class code for a constant name, or the text as found.
    static func itemClass(_ found: String) -> String { classCodes[found] ?? found }

    // MARK: Protection (`pdmn`)

    /// `kSecAttrAccessible…` constant names to `pdmn` codes, including the deprecated "always" classes and the
    /// private aliases that share their values.
    static let protectionCodes: [String: String] = [
        "kSecAttrAccessibleWhenUnlocked": "ak",
        "kSecAttrAccessibleAfterFirstUnlock": "ck",
        "kSecAttrAccessibleAlways": "dk",
        "kSecAttrAccessibleAlwaysPrivate": "dk",
        "kSecAttrAccessibleWhenUnlockedThisDeviceOnly": "aku",
        "kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly": "cku",
        "kSecAttrAccessibleAlwaysThisDeviceOnly": "dku",
        "kSecAttrAccessibleAlwaysThisDeviceOnlyPrivate": "dku",
        "kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly": "akpu",
    ]

    /// The `pdmn` code for a constant name, or the text as found (codes such as `ak` pass through).
    static func protectionCode(_ found: String) -> String { protectionCodes[found] ?? found }

    // MARK: Four-character codes (`crtr`, `type`)

    /// A four-character code from text: a decimal number (`"1097889867"`), or exactly four ASCII characters
    /// (`"ApxK"`), packed first character in the most significant byte.
    ///
    /// Decimal wins: `"1234"` is the number 1234, not the characters `1 2 3 4`, because every dump tool that
    /// writes `crtr` as text writes the number.
    static func fourCharCode(text: String) -> UInt32? {
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return UInt32(text)
        }
        let bytes = Array(text.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return bytes.reduce(0) { ($0 << 8) | UInt32($1) }
    }

    /// A four-character code from an integer: 0…0xFFFFFFFF, or a negative 32-bit value read as its bit pattern
    /// (a tool that printed the code as a signed 32-bit integer).
    static func fourCharCode(integer: Int64) -> UInt32? {
        if integer >= 0 { return UInt32(exactly: integer) }
        return Int32(exactly: integer).map { UInt32(bitPattern: $0) }
    }

    /// The four characters of a code when all four are printable ASCII.
    static func fourCharString(_ code: UInt32) -> String? {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: code >> (24 - 8 * $0)) }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Dates

    /// A date from `CFAbsoluteTime` (seconds since 2001-01-01 UTC), as keychain databases store `cdat`/`mdat`.
    static func date(absoluteTime: Double) -> Date? {
        guard absoluteTime.isFinite, abs(absoluteTime) < 1e12 else { return nil }
        return Date(timeIntervalSinceReferenceDate: absoluteTime)
    }

    /// A date from NSDate's description, as objection writes it: `2018-07-21 18:11:15 +0000`.
    static func date(objectionText text: String) -> Date? {
        var scanner = DateScanner(text)
        guard let year = scanner.digits(4), scanner.skip("-"), let month = scanner.digits(2), scanner.skip("-"),
            let day = scanner.digits(2), scanner.skip(" "), let hour = scanner.digits(2), scanner.skip(":"),
            let minute = scanner.digits(2), scanner.skip(":"), let second = scanner.digits(2), scanner.skip(" "),
            let offset = scanner.zoneOffset(colon: false), scanner.atEnd
        else { return nil }
        return makeDate(year, month, day, hour, minute, second, fraction: 0, offset: offset)
    }

    /// A date from ISO 8601 text: `2018-07-21T18:11:15Z`, with optional fractional seconds and a `Z`,
    /// `±hh:mm` or `±hhmm` zone.
    static func date(iso8601 text: String) -> Date? {
        var scanner = DateScanner(text)
        guard let year = scanner.digits(4), scanner.skip("-"), let month = scanner.digits(2), scanner.skip("-"),
            let day = scanner.digits(2), scanner.skip("T"), let hour = scanner.digits(2), scanner.skip(":"),
            let minute = scanner.digits(2), scanner.skip(":"), let second = scanner.digits(2)
        else { return nil }
        let fraction = scanner.fraction()
        guard let offset = scanner.skip("Z") ? 0 : scanner.zoneOffset(colon: true), scanner.atEnd else { return nil }
        return makeDate(year, month, day, hour, minute, second, fraction: fraction, offset: offset)
    }

    /// A date from ASN.1 GeneralizedTime as `der_plist` writes it: `YYYYMMDDhhmmss[.fff…]Z`.
    static func date(generalizedTime text: String) -> Date? {
        var scanner = DateScanner(text)
        guard let year = scanner.digits(4), let month = scanner.digits(2), let day = scanner.digits(2),
            let hour = scanner.digits(2), let minute = scanner.digits(2), let second = scanner.digits(2)
        else { return nil }
        let fraction = scanner.fraction()
        guard scanner.skip("Z"), scanner.atEnd else { return nil }
        return makeDate(year, month, day, hour, minute, second, fraction: fraction, offset: 0)
    }

    /// ISO 8601 in UTC, with fractional seconds (up to microseconds) only when the date has them. A date
    /// beyond ±30 000 years (a binary plist can hold any double) is written as `absolute-time:<seconds since 2001>`.
    static func iso8601(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite, abs(interval) < 1e12 else {
            return "absolute-time:\(date.timeIntervalSinceReferenceDate)"
        }
        let microseconds = Int64((interval * 1_000_000).rounded())
        let seconds = microseconds.quotientRoundingDown(1_000_000)
        let micros = microseconds - seconds * 1_000_000
        let days = seconds.quotientRoundingDown(86_400)
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = civil(fromDays: days)
        var text =
            pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(secondOfDay / 3600, 2) + ":"
            + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if micros != 0 {
            var digits = pad(Int(micros), 6)
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
        }
        return text + "Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    private static func makeDate(
        _ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int, fraction: Double,
        offset: Int
    ) -> Date? {
        let monthDays = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), hour < 24, minute < 60, second < 60 else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        guard day >= 1, day <= monthDays[month - 1] + (month == 2 && leap ? 1 : 0) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offset)
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (eras of 400 years).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = y.quotientRoundingDown(400)
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of ``daysFromCivil(year:month:day:)``.
    private static func civil(fromDays days: Int64) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = z.quotientRoundingDown(146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    // MARK: Hex

    /// Lower-case hex of the bytes.
    static func hex(_ data: Data) -> String { Hex.lowercase(data) }

    /// The bytes of hex text (either case), or nil when it has an odd length or a character that is not a digit.
    static func data(hex text: String) -> Data? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out = Data(capacity: chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let high = nibble(chars[index]), let low = nibble(chars[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// Whether every character is a hex digit.
    static func isHexDigits(_ text: String) -> Bool { text.utf8.allSatisfy { nibble($0) != nil } }

    private static func nibble(_ char: UInt8) -> UInt8? {
        switch char {
        case 0x30...0x39: char - 0x30
        case 0x61...0x66: char - 0x61 + 10
        case 0x41...0x46: char - 0x41 + 10
        default: nil
        }
    }
}

/// A bounded scanner over the ASCII of a date.
private struct DateScanner {
    private let chars: [UInt8]
    private var index = 0

    /// Text longer than any date is refused up front (it scans as empty).
    init(_ text: String) { chars = text.utf8.count <= 64 ? Array(text.utf8) : [] }

    var atEnd: Bool { index == chars.count }

    mutating func skip(_ literal: Character) -> Bool {
        guard index < chars.count, let ascii = literal.asciiValue, chars[index] == ascii else { return false }
        index += 1
        return true
    }

    mutating func digits(_ count: Int) -> Int? {
        guard index + count <= chars.count else { return nil }
        var value = 0
        for char in chars[index..<index + count] {
            guard char >= 0x30, char <= 0x39 else { return nil }
            value = value * 10 + Int(char - 0x30)
        }
        index += count
        return value
    }

    /// `.123…` or `,123…`; 0 when absent. Digits beyond nanoseconds are read and ignored.
    mutating func fraction() -> Double {
        guard index < chars.count, chars[index] == 0x2E || chars[index] == 0x2C else { return 0 }
        var scale = 0.1
        var value = 0.0
        var next = index + 1
        while next < chars.count, chars[next] >= 0x30, chars[next] <= 0x39 {
            if scale > 1e-10 { value += Double(chars[next] - 0x30) * scale }
            scale /= 10
            next += 1
        }
        guard next > index + 1 else { return 0 }
        index = next
        return value
    }

    /// `±hhmm` (or also `±hh:mm` when `colon`), in seconds east of UTC.
    mutating func zoneOffset(colon: Bool) -> Int? {
        guard index < chars.count, chars[index] == 0x2B || chars[index] == 0x2D else { return nil }
        let sign = chars[index] == 0x2D ? -1 : 1
        index += 1
        guard let hours = digits(2) else { return nil }
        if colon { _ = skip(":") }
        guard let minutes = digits(2), hours < 24, minutes < 60 else { return nil }
        return sign * (hours * 3600 + minutes * 60)
    }
}

extension Int64 {
    /// Floor division, for dates before 1970.
    fileprivate func quotientRoundingDown(_ divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}

import ApexDumps
import Foundation

/// `android.util.Base64` as the Android libraries call it.
enum AndroidBase64 {
    /// `Base64.DEFAULT`: lines of 76 characters, each ended by `\n`, the last one too.
    static func defaultFlags(_ data: Data) -> String {
        var encoded = Substring(data.base64EncodedString())
        var out = ""
        while !encoded.isEmpty {
            out += encoded.prefix(76) + "\n"
            encoded = encoded.dropFirst(76)
        }
        return out
    }

    /// `Base64.NO_WRAP`.
    static func noWrap(_ data: Data) -> String { data.base64EncodedString() }
}

/// A SharedPreferences XML file as Android's `XmlUtils.writeMapXml` lays it out. Its serializer indents an end
/// tag that follows a line break, so text ending in `\n` (Base64.DEFAULT) gets four spaces before `</string>`,
/// and those spaces are part of the value Android reads back.
enum SharedPreferencesWriter {
    /// The value Android reads back for `text` written to a SharedPreferences file.
    static func readBack(_ text: String) -> String { text.hasSuffix("\n") ? text + "    " : text }

    static func write(_ entries: [PreferenceEntry]) -> Data {
        var out = "<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map>\n"
        for entry in entries {
            let name = escape(entry.name)
            switch entry.value {
            case .string(let text): out += "    <string name=\"\(name)\">\(escape(readBack(text)))</string>\n"
            case .boolean(let flag): out += "    <boolean name=\"\(name)\" value=\"\(flag)\" />\n"
            case .int(let number): out += "    <int name=\"\(name)\" value=\"\(number)\" />\n"
            case .long(let number): out += "    <long name=\"\(name)\" value=\"\(number)\" />\n"
            case .float(let number): out += "    <float name=\"\(name)\" value=\"\(number)\" />\n"
            case .double(let number): out += "    <double name=\"\(name)\" value=\"\(number)\" />\n"
            case .stringSet(let strings):
                out += "    <set name=\"\(name)\">\n"
                for string in strings { out += "        <string>\(escape(string))</string>\n" }
                out += "    </set>\n"
            case .bytes: preconditionFailure("SharedPreferences have no byte values")
            }
        }
        out += "</map>\n"
        return Data(out.utf8)
    }

    /// What `FastXmlSerializer` escapes.
    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// A Preferences DataStore file: a `PreferenceMap` in protobuf, entries in the order given (androidx writes its
/// map's order).
enum DataStoreWriter {
    static func write(_ entries: [PreferenceEntry]) -> Data {
        var out: [UInt8] = []
        for entry in entries {
            let item = lengthDelimited(1, Array(entry.name.utf8)) + lengthDelimited(2, value(entry.value))
            out += lengthDelimited(1, item)
        }
        return Data(out)
    }

    private static func value(_ value: PreferenceValue) -> [UInt8] {
        switch value {
        case .boolean(let flag): tag(1, 0) + varint(flag ? 1 : 0)
        case .float(let number): tag(2, 5) + littleEndian(UInt64(number.bitPattern), 4)
        case .int(let number): tag(3, 0) + varint(UInt64(bitPattern: Int64(number)))
        case .long(let number): tag(4, 0) + varint(UInt64(bitPattern: number))
        case .string(let text): lengthDelimited(5, Array(text.utf8))
        case .stringSet(let strings): lengthDelimited(6, strings.flatMap { lengthDelimited(1, Array($0.utf8)) })
        case .double(let number): tag(7, 1) + littleEndian(number.bitPattern, 8)
        case .bytes(let data): lengthDelimited(8, Array(data))
        }
    }

    static func tag(_ field: UInt64, _ wireType: UInt64) -> [UInt8] { varint(field << 3 | wireType) }

    static func lengthDelimited(_ field: UInt64, _ payload: [UInt8]) -> [UInt8] {
        tag(field, 2) + varint(UInt64(payload.count)) + payload
    }

    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var out: [UInt8] = []
        while value >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        return out + [UInt8(value)]
    }

    private static func littleEndian(_ value: UInt64, _ width: Int) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}

/// Compact JSON objects as Android's `org.json.JSONObject.toString()` writes them: members in insertion order,
/// no spaces, and `/` escaped as `\/`.
enum OrgJSON {
    enum Member {
        case string(String)
        case integer(Int)
        case boolean(Bool)
    }

    static func object(_ members: [(String, Member)]) -> String {
        let body = members.map { key, member -> String in
            let value: String
            switch member {
            case .string(let text): value = quote(text)
            case .integer(let number): value = String(number)
            case .boolean(let flag): value = String(flag)
            }
            return quote(key) + ":" + value
        }
        return "{" + body.joined(separator: ",") + "}"
    }

    private static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/": out += "\\/"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

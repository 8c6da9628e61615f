import Foundation

/// A property-list value with ordered dictionaries, written by hand so that the bytes are the same on every run
/// (Foundation's writers follow dictionary hash order, which changes from process to process).
indirect enum PlistValue {
    case string(String)
    case data(Data)
    case integer(Int64)
    case real(Double)
    case boolean(Bool)
    case date(Date)
    /// An NSKeyedArchiver object reference: a UID object (`0x8n`) in a binary plist, `{CF$UID: n}` in XML.
    case uid(UInt64)
    case array([PlistValue])
    /// Keys are written sorted, as CoreFoundation writes them.
    case dictionary([(String, PlistValue)])
}

/// XML property lists in Apple's layout: tabs, sorted keys, whole-second UTC dates, wrapped Base64.
enum XMLPlistWriter {
    static func write(_ root: PlistValue) -> Data {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">

            """
        append(root, indent: 0, to: &out)
        out += "</plist>\n"
        return Data(out.utf8)
    }

    private static func append(_ value: PlistValue, indent: Int, to out: inout String) {
        let tabs = String(repeating: "\t", count: indent)
        switch value {
        case .string(let text): out += "\(tabs)<string>\(escape(text))</string>\n"
        case .integer(let number): out += "\(tabs)<integer>\(number)</integer>\n"
        case .real(let number): out += "\(tabs)<real>\(number)</real>\n"
        case .boolean(let flag): out += "\(tabs)\(flag ? "<true/>" : "<false/>")\n"
        case .date(let date): out += "\(tabs)<date>\(iso8601(date))</date>\n"
        case .uid(let index): append(.dictionary([("CF$UID", .integer(Int64(index)))]), indent: indent, to: &out)
        case .data(let data):
            let encoded = data.base64EncodedString()
            if encoded.count <= 60 {
                out += "\(tabs)<data>\(encoded)</data>\n"
            } else {
                out += "\(tabs)<data>\n"
                var rest = Substring(encoded)
                while !rest.isEmpty {
                    out += "\(tabs)\(rest.prefix(68))\n"
                    rest = rest.dropFirst(68)
                }
                out += "\(tabs)</data>\n"
            }
        case .array(let items):
            guard !items.isEmpty else {
                out += "\(tabs)<array/>\n"
                return
            }
            out += "\(tabs)<array>\n"
            for item in items { append(item, indent: indent + 1, to: &out) }
            out += "\(tabs)</array>\n"
        case .dictionary(let pairs):
            guard !pairs.isEmpty else {
                out += "\(tabs)<dict/>\n"
                return
            }
            out += "\(tabs)<dict>\n"
            for (key, item) in sorted(pairs) {
                out += "\(tabs)\t<key>\(escape(key))</key>\n"
                append(item, indent: indent + 1, to: &out)
            }
            out += "\(tabs)</dict>\n"
        }
    }

    static func sorted(_ pairs: [(String, PlistValue)]) -> [(String, PlistValue)] {
        pairs.sorted { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`, the fraction dropped as CoreFoundation drops it.
    static func iso8601(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2))T"
            + "\(pad(parts.hour, 2)):\(pad(parts.minute, 2)):\(pad(parts.second, 2))Z"
    }
}

/// Binary property lists (`bplist00`): objects in depth-first order, no uniquing, big-endian throughout.
enum BinaryPlistWriter {
    static func write(_ root: PlistValue) -> Data {
        var objects: [PlistValue] = []
        var children: [[Int]] = []
        flatten(root, into: &objects, children: &children)
        let referenceSize = byteWidth(for: UInt64(objects.count))

        var out = Data("bplist00".utf8)
        var offsets: [UInt64] = []
        offsets.reserveCapacity(objects.count)
        for (index, object) in objects.enumerated() {
            offsets.append(UInt64(out.count))
            encode(object, references: children[index], referenceSize: referenceSize, into: &out)
        }
        let tableOffset = UInt64(out.count)
        let offsetSize = byteWidth(for: tableOffset)
        for offset in offsets { appendBigEndian(offset, width: offsetSize, to: &out) }
        out.append(contentsOf: [0, 0, 0, 0, 0, 0])
        out.append(UInt8(offsetSize))
        out.append(UInt8(referenceSize))
        appendBigEndian(UInt64(objects.count), width: 8, to: &out)
        appendBigEndian(0, width: 8, to: &out)
        appendBigEndian(tableOffset, width: 8, to: &out)
        return out
    }

    /// Numbers the objects: each container, then its children (dictionary keys before values).
    @discardableResult
    private static func flatten(_ value: PlistValue, into objects: inout [PlistValue], children: inout [[Int]]) -> Int {
        let index = objects.count
        objects.append(value)
        children.append([])
        switch value {
        case .array(let items):
            children[index] = items.map { flatten($0, into: &objects, children: &children) }
        case .dictionary(let pairs):
            let ordered = XMLPlistWriter.sorted(pairs)
            let keys = ordered.map { flatten(.string($0.0), into: &objects, children: &children) }
            let values = ordered.map { flatten($0.1, into: &objects, children: &children) }
            children[index] = keys + values
        default: break
        }
        return index
    }

    private static func encode(_ value: PlistValue, references: [Int], referenceSize: Int, into out: inout Data) {
        switch value {
        case .boolean(let flag): out.append(flag ? 0x09 : 0x08)
        case .integer(let number): appendInteger(number, to: &out)
        case .real(let number):
            out.append(0x23)
            appendBigEndian(number.bitPattern, width: 8, to: &out)
        case .date(let date):
            out.append(0x33)
            appendBigEndian(date.timeIntervalSinceReferenceDate.bitPattern, width: 8, to: &out)
        case .uid(let index):
            let width = byteWidth(for: index)
            out.append(0x80 | UInt8(width - 1))
            appendBigEndian(index, width: width, to: &out)
        case .data(let data):
            appendMarker(0x40, count: data.count, to: &out)
            out.append(data)
        case .string(let text):
            if text.utf8.allSatisfy({ $0 < 0x80 }) {
                appendMarker(0x50, count: text.utf8.count, to: &out)
                out.append(contentsOf: text.utf8)
            } else {
                let units = Array(text.utf16)
                appendMarker(0x60, count: units.count, to: &out)
                for unit in units { appendBigEndian(UInt64(unit), width: 2, to: &out) }
            }
        case .array:
            appendMarker(0xA0, count: references.count, to: &out)
            for reference in references { appendBigEndian(UInt64(reference), width: referenceSize, to: &out) }
        case .dictionary:
            appendMarker(0xD0, count: references.count / 2, to: &out)
            for reference in references { appendBigEndian(UInt64(reference), width: referenceSize, to: &out) }
        }
    }

    private static func appendInteger(_ number: Int64, to out: inout Data) {
        guard number >= 0 else {
            out.append(0x13)
            return appendBigEndian(UInt64(bitPattern: number), width: 8, to: &out)
        }
        let width = byteWidth(for: UInt64(number))
        let power: UInt8 = width == 1 ? 0 : width == 2 ? 1 : width == 4 ? 2 : 3
        out.append(0x10 | power)
        appendBigEndian(UInt64(number), width: width, to: &out)
    }

    private static func appendMarker(_ marker: UInt8, count: Int, to out: inout Data) {
        if count < 15 {
            out.append(marker | UInt8(count))
        } else {
            out.append(marker | 0x0F)
            appendInteger(Int64(count), to: &out)
        }
    }

    /// 1, 2, 4 or 8: the smallest width that holds `value`.
    private static func byteWidth(for value: UInt64) -> Int {
        value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
    }

    private static func appendBigEndian(_ value: UInt64, width: Int, to out: inout Data) {
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}

import CLibXML2
import Foundation

/// Parses an XML property list with libxml2 into a ``PlistNode`` tree.
///
/// The document is a `<plist>` root holding one value (a bare value element as the root is also read), where a
/// value is `<string>`, `<data>` (Base64; characters outside the alphabet, such as line breaks, are skipped),
/// `<date>` (ISO 8601), `<integer>` (decimal, or hexadecimal after `0x`), `<real>`, `<true/>`, `<false/>`,
/// `<array>` or `<dict>` (`<key>` and value elements in turn). Text is taken as libxml2 unescaped it; comments and
/// processing instructions are skipped everywhere.
///
/// The input is untrusted. libxml2 reads it without network access, without entity substitution and without
/// loading the DTD that the usual `<!DOCTYPE plist …>` names; a document whose DOCTYPE declares anything (an
/// entity, element, attribute list or notation) is refused as soon as the declaration is seen, which answers
/// entity-expansion and external-entity attacks. libxml2 limits element nesting to 256 levels and prints
/// nothing: its errors are kept in the parse state and turned into ``PlistParseError`` values that name a line,
/// never a value.
enum PlistXMLParser {
    /// What a malformed XML plist is called in messages (the CLI's tests pin this text).
    static let malformed = "an XML property list that is malformed, truncated or nested too deeply"

    /// Parses `data`, a document that starts (after a byte order mark and white space) with `<`.
    static func parse(_ data: Data) throws(PlistParseError) -> PlistNode {
        let parsed = SafeXML.read(data, documentTypes: .bareOnly)
        defer { if let document = parsed.document { xmlFreeDoc(document) } }
        if let line = parsed.state.refusedLine {
            throw PlistParseError(
                "an XML property list whose DOCTYPE declares entities or other DTD content, which is refused",
                detail: "line \(line)")
        }
        guard let document = parsed.document else { throw PlistParseError(malformed) }
        guard let root = xmlDocGetRootElement(document) else { throw PlistParseError(malformed) }
        if name(of: root) == "plist" {
            guard let only = try onlyElement(in: root) else {
                throw structural(root, "the <plist> element holds no value")
            }
            return try value(only, depth: 0)
        }
        return try value(root, depth: 0)
    }

    /// An error for a document that libxml2 read but that is not a valid plist.
    private static func structural(_ node: xmlNodePtr, _ detail: String) -> PlistParseError {
        PlistParseError(malformed, detail: "line \(xmlGetLineNo(node)): \(detail)")
    }

    // MARK: Values

    /// The value of element `node`; `depth` is the number of containers around it.
    private static func value(_ node: xmlNodePtr, depth: Int) throws(PlistParseError) -> PlistNode {
        let tag = name(of: node)
        switch tag {
        case "string": return .string(try text(of: node))
        case "data": return .data(base64(try text(of: node)))
        case "date":
            guard let date = IOSAttributes.date(iso8601: String(trimmed(try text(of: node)))) else {
                throw structural(node, "a <date> that is not an ISO 8601 date")
            }
            return .date(date)
        case "integer":
            guard let number = integer(trimmed(try text(of: node))) else {
                throw structural(node, "an <integer> that is not a 64-bit integer")
            }
            return number
        case "real":
            guard let number = Double(trimmed(try text(of: node))) else {
                throw structural(node, "a <real> that is not a number")
            }
            return .real(number)
        case "true": return .boolean(true)
        case "false": return .boolean(false)
        case "array", "dict":
            guard depth < PlistNode.maxNesting else {
                throw structural(node, "containers nested deeper than \(PlistNode.maxNesting) levels")
            }
            return tag == "array" ? try array(node, depth: depth + 1) : try dictionary(node, depth: depth + 1)
        case "key": throw structural(node, "a <key> outside a <dict>")
        default: throw structural(node, "an element that is not a plist value: <\(printable(tag))>")
        }
    }

    private static func array(_ node: xmlNodePtr, depth: Int) throws(PlistParseError) -> PlistNode {
        var elements: [PlistNode] = []
        var child = node.pointee.children
        while let current = child {
            child = current.pointee.next
            guard try isElement(current, in: "<array>") else { continue }
            elements.append(try value(current, depth: depth))
        }
        return .array(elements)
    }

    private static func dictionary(_ node: xmlNodePtr, depth: Int) throws(PlistParseError) -> PlistNode {
        var entries: [(key: PlistNode, value: PlistNode)] = []
        var pendingKey: String?
        var child = node.pointee.children
        while let current = child {
            child = current.pointee.next
            guard try isElement(current, in: "<dict>") else { continue }
            if let key = pendingKey {
                guard name(of: current) != "key" else { throw structural(current, "a <key> without a value") }
                entries.append((.string(key), try value(current, depth: depth)))
                pendingKey = nil
            } else {
                guard name(of: current) == "key" else { throw structural(current, "a value without a <key> in a <dict>") }
                pendingKey = try text(of: current)
            }
        }
        guard pendingKey == nil else { throw structural(node, "a <key> without a value at the end of a <dict>") }
        return .dictionary(PlistDictionary(entries))
    }

    /// The only element inside `node`, or nil when it has none.
    private static func onlyElement(in node: xmlNodePtr) throws(PlistParseError) -> xmlNodePtr? {
        var found: xmlNodePtr?
        var child = node.pointee.children
        while let current = child {
            child = current.pointee.next
            guard try isElement(current, in: "<plist>") else { continue }
            guard found == nil else { throw structural(current, "the <plist> element holds more than one value") }
            found = current
        }
        return found
    }

    /// Whether `node` is an element. White space, comments and processing instructions are skipped; anything
    /// else (text, CDATA, entity references) is refused.
    private static func isElement(_ node: xmlNodePtr, in parent: String) throws(PlistParseError) -> Bool {
        switch node.pointee.type {
        case XML_ELEMENT_NODE: return true
        case XML_COMMENT_NODE, XML_PI_NODE: return false
        case XML_TEXT_NODE where isWhitespace(node.pointee.content): return false
        default: throw structural(node, "text or a reference inside \(parent)")
        }
    }

    /// The text of a `<string>`, `<key>` or scalar element: its text and CDATA children joined, as libxml2
    /// unescaped them. The usual single text child is read without a copy of the bytes.
    private static func text(of node: xmlNodePtr) throws(PlistParseError) -> String {
        switch SafeXML.text(of: node) {
        case .success(let text): return text
        case .failure(let other):
            throw PlistParseError(
                malformed,
                detail: "line \(other.line): <\(printable(name(of: node)))> holds an element or a reference, not only text")
        }
    }

    // MARK: Scalars

    /// An `<integer>`: an optional sign, then decimal digits or `0x` and hexadecimal digits. Values above
    /// `Int64.max` are unsigned; anything outside `Int64.min…UInt64.max` is nil.
    static func integer(_ text: Substring) -> PlistNode? {
        var digits = text
        var negative = false
        if let sign = digits.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        var radix = 10
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            radix = 16
            digits = digits.dropFirst(2)
        }
        guard !digits.isEmpty, digits.first != "+", digits.first != "-", let magnitude = UInt64(digits, radix: radix) else {
            return nil
        }
        if !negative {
            return magnitude <= UInt64(Int64.max) ? .integer(Int64(magnitude)) : .unsignedInteger(magnitude)
        }
        if magnitude == UInt64(Int64.max) + 1 { return .integer(Int64.min) }
        return Int64(exactly: magnitude).map { .integer(-$0) }
    }

    /// The bytes of Base64 text; characters outside the alphabet (white space, `=`) are skipped, and a final group
    /// of two or three characters gives one or two bytes.
    static func base64(_ text: String) -> Data {
        var out = Data(capacity: text.utf8.count / 4 * 3 + 3)
        var group: UInt32 = 0
        var filled = 0
        for char in text.utf8 {
            let sextet: UInt8
            switch char {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): sextet = char - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): sextet = char - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): sextet = char - UInt8(ascii: "0") + 52
            case UInt8(ascii: "+"): sextet = 62
            case UInt8(ascii: "/"): sextet = 63
            default: continue
            }
            group = group << 6 | UInt32(sextet)
            filled += 1
            if filled == 4 {
                out.append(contentsOf: [UInt8(truncatingIfNeeded: group >> 16), UInt8(truncatingIfNeeded: group >> 8), UInt8(truncatingIfNeeded: group)])
                group = 0
                filled = 0
            }
        }
        if filled == 3 {
            out.append(contentsOf: [UInt8(truncatingIfNeeded: group >> 10), UInt8(truncatingIfNeeded: group >> 2)])
        } else if filled == 2 {
            out.append(UInt8(truncatingIfNeeded: group >> 4))
        }
        return out
    }

    /// `text` without XML white space at either end.
    private static func trimmed(_ text: String) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let start = text.firstIndex(where: { !isSpace($0) }), let end = text.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return text[start...end]
    }

    // MARK: Small helpers

    private static func name(of node: xmlNodePtr) -> String {
        guard let name = node.pointee.name else { return "" }
        return String(cString: name)
    }

    /// An element name for a message: at most 40 characters.
    private static func printable(_ name: String) -> String {
        name.count > 40 ? String(name.prefix(40)) + "…" : name
    }

    private static func string(_ content: UnsafeMutablePointer<xmlChar>?) -> String { SafeXML.string(content) }

    private static func isWhitespace(_ content: UnsafeMutablePointer<xmlChar>?) -> Bool {
        guard var cursor = content else { return true }
        while cursor.pointee != 0 {
            let byte = cursor.pointee
            guard byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D else { return false }
            cursor += 1
        }
        return true
    }
}

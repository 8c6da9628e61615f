import CLibXML2
import Foundation

@testable import ApexDumps

/// The SharedPreferences reader as it was before it streamed: libxml2 builds the whole document (SafeXML's safe
/// setup, with libxml2's own tree builder), which is then walked. Kept unchanged as the oracle of the differential
/// tests: the streaming reader must give the same entries, or the same error, for any input.
enum SharedPreferencesDOMReference {
    static func read(_ data: Data, path: String) throws(DumpError) -> [PreferenceEntry] {
        guard !data.isEmpty else {
            throw DumpError(.malformed, path: path, "empty file, not a SharedPreferences XML file")
        }
        guard data.count <= DumpLimits.maxXMLBytes else {
            throw DumpError(
                .malformed, path: path,
                "\(data.count) bytes is larger than the \(DumpLimits.maxXMLBytes >> 20) MiB limit for an XML preferences file"
            )
        }
        let parsed = SafeXML.parse([data], documentTypes: .refused, user: nil, inChunks: false, content: nil)
        let usable = parsed.state.refusedLine == nil && parsed.wellFormed
        let tree = usable ? parsed.document : nil
        defer { if let document = parsed.document { xmlFreeDoc(document) } }
        if let line = parsed.state.refusedLine {
            throw DumpError(
                .malformed, path: path,
                "line \(line): the document declares a DTD (<!DOCTYPE>); SharedPreferences files have none, and documents with DTDs or entity declarations are refused"
            )
        }
        guard let document = tree else {
            throw DumpError(.malformed, path: path, describeParseFailure(parsed.state))
        }
        guard document.pointee.intSubset == nil, document.pointee.extSubset == nil else {
            throw DumpError(.malformed, path: path, "the document declares a DTD; documents with DTDs are refused")
        }
        guard let root = xmlDocGetRootElement(document) else {
            throw DumpError(.malformed, path: path, "the document has no root element")
        }
        return try readMap(root, path: path)
    }

    // MARK: - Parsing

    /// The words for libxml2's errors are the reader's own (the same function served both readers).
    private static func describeParseFailure(_ state: SafeXML.State) -> String {
        SharedPreferencesReader.describeParseFailure(state)
    }

    // MARK: - The tree

    private static func readMap(_ root: xmlNodePtr, path: String) throws(DumpError) -> [PreferenceEntry] {
        guard root.pointee.ns == nil, elementName(root) == "map" else {
            throw DumpError(
                .malformed, path: path,
                "line \(xmlGetLineNo(root)): the root element is <\(printableName(root))>, not <map>; not a SharedPreferences file"
            )
        }
        var entries: [PreferenceEntry] = []
        var child = root.pointee.children
        while let node = child {
            child = node.pointee.next
            guard try isElement(node, in: "<map>", path: path) else { continue }
            entries.append(try readEntry(node, path: path))
        }
        return entries
    }

    private static func isElement(_ node: xmlNodePtr, in parent: String, path: String) throws(DumpError) -> Bool {
        switch node.pointee.type {
        case XML_ELEMENT_NODE:
            return true
        case XML_COMMENT_NODE, XML_PI_NODE:
            return false
        case XML_TEXT_NODE where isWhitespace(node.pointee.content):
            return false
        default:
            throw DumpError(
                .malformed, path: path, "line \(xmlGetLineNo(node)): unexpected text or content inside \(parent)")
        }
    }

    private static func readEntry(_ node: xmlNodePtr, path: String) throws(DumpError) -> PreferenceEntry {
        let line = xmlGetLineNo(node)
        let type = elementName(node)
        guard node.pointee.ns == nil,
            ["string", "boolean", "int", "long", "float", "double", "set"].contains(type)
        else {
            throw DumpError(
                .malformed, path: path,
                "line \(line): unknown element <\(printableName(node))>; a SharedPreferences entry is <string>, <boolean>, <int>, <long>, <float>, <double> or <set>"
            )
        }
        guard let name = attribute("name", of: node) else {
            throw DumpError(.malformed, path: path, "line \(line): <\(type)> has no name attribute")
        }
        switch type {
        case "string":
            return PreferenceEntry(name: name, value: .string(try text(of: node, path: path)))
        case "set":
            return PreferenceEntry(name: name, value: .stringSet(try strings(in: node, path: path)))
        default:
            try requireNoChildren(node, type: type, path: path)
            guard let raw = attribute("value", of: node) else {
                throw DumpError(.malformed, path: path, "line \(line): <\(type)> has no value attribute")
            }
            guard let value = primitive(type, raw) else {
                throw DumpError(.malformed, path: path, "line \(line): the value of <\(type)> is not a valid \(type)")
            }
            return PreferenceEntry(name: name, value: value)
        }
    }

    private static func primitive(_ type: String, _ raw: String) -> PreferenceValue? {
        switch type {
        case "boolean":
            switch raw.lowercased() {
            case "true": return .boolean(true)
            case "false": return .boolean(false)
            default: return nil
            }
        case "int": return Int32(raw).map { .int($0) }
        case "long": return Int64(raw).map { .long($0) }
        case "float": return isNumberText(raw) ? Float(raw).map { .float($0) } : nil
        case "double": return isNumberText(raw) ? Double(raw).map { .double($0) } : nil
        default: return nil
        }
    }

    private static func isNumberText(_ raw: String) -> Bool {
        if ["NaN", "Infinity", "-Infinity", "+Infinity"].contains(raw) { return true }
        guard !raw.isEmpty else { return false }
        return raw.utf8.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "E")
                || byte == UInt8(ascii: "e")
        }
    }

    /// The text and CDATA children of a `<string>` joined; comments and processing instructions skipped; the line
    /// of any other child is an error.
    private static func text(of node: xmlNodePtr, path: String) throws(DumpError) -> String {
        guard let first = node.pointee.children else { return "" }
        if first.pointee.next == nil,
            first.pointee.type == XML_TEXT_NODE || first.pointee.type == XML_CDATA_SECTION_NODE
        {
            return string(first.pointee.content)
        }
        var bytes: [UInt8] = []
        var child: xmlNodePtr? = first
        while let part = child {
            child = part.pointee.next
            switch part.pointee.type {
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if let content = part.pointee.content {
                    bytes.append(contentsOf: UnsafeBufferPointer(start: content, count: strlen(content)))
                }
            case XML_COMMENT_NODE, XML_PI_NODE:
                continue
            default:
                throw DumpError(
                    .malformed, path: path,
                    "line \(xmlGetLineNo(part)): <string> holds an element or a reference, not only text")
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func strings(in set: xmlNodePtr, path: String) throws(DumpError) -> [String] {
        var strings: [String] = []
        var child = set.pointee.children
        while let node = child {
            child = node.pointee.next
            guard try isElement(node, in: "<set>", path: path) else { continue }
            guard node.pointee.ns == nil, elementName(node) == "string" else {
                throw DumpError(
                    .malformed, path: path,
                    "line \(xmlGetLineNo(node)): <set> holds <\(printableName(node))>; only <string> elements are allowed"
                )
            }
            strings.append(try text(of: node, path: path))
        }
        return strings
    }

    private static func requireNoChildren(_ node: xmlNodePtr, type: String, path: String) throws(DumpError) {
        var child = node.pointee.children
        while let part = child {
            child = part.pointee.next
            guard try isElement(part, in: "<\(type)>", path: path) else { continue }
            throw DumpError(
                .malformed, path: path, "line \(xmlGetLineNo(part)): <\(type)> holds an element; it must be empty")
        }
    }

    // MARK: - Small helpers

    private static func elementName(_ node: xmlNodePtr) -> String {
        guard let name = node.pointee.name else { return "" }
        return String(cString: name)
    }

    private static func printableName(_ node: xmlNodePtr) -> String {
        var name = elementName(node)
        if let prefix = node.pointee.ns?.pointee.prefix { name = String(cString: prefix) + ":" + name }
        return name.count > 40 ? String(name.prefix(40)) + "…" : name
    }

    private static func attribute(_ name: String, of node: xmlNodePtr) -> String? {
        var property = node.pointee.properties
        while let attribute = property {
            property = attribute.pointee.next
            guard attribute.pointee.ns == nil, let attributeName = attribute.pointee.name,
                String(cString: attributeName) == name
            else { continue }
            var bytes: [UInt8] = []
            var child = attribute.pointee.children
            while let part = child {
                child = part.pointee.next
                if let content = part.pointee.content {
                    bytes.append(contentsOf: UnsafeBufferPointer(start: content, count: strlen(content)))
                }
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        return nil
    }

    private static func string(_ content: UnsafeMutablePointer<xmlChar>?) -> String {
        guard let content else { return "" }
        return String(decoding: UnsafeBufferPointer(start: content, count: strlen(content)), as: UTF8.self)
    }

    private static func isWhitespace(_ content: UnsafeMutablePointer<xmlChar>?) -> Bool {
        guard var cursor = content else { return true }
        while cursor.pointee != 0 {
            guard cursor.pointee == 0x20 || cursor.pointee == 0x09 || cursor.pointee == 0x0A || cursor.pointee == 0x0D
            else { return false }
            cursor += 1
        }
        return true
    }
}

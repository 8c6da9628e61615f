import CLibXML2
import Foundation

/// Reads an Android SharedPreferences XML file (`shared_prefs/<name>.xml`) into typed entries.
///
/// The file is a `<map>` root whose children are `<string name="…">text</string>`,
/// `<boolean name="…" value="true|false"/>`, `<int …/>`, `<long …/>`, `<float …/>`, `<double …/>` and
/// `<set name="…"><string>…</string>…</set>`. Entries come back in file order, duplicates included, with string
/// text exactly as stored: only the XML parser's unescaping is applied, so leading and trailing whitespace and
/// embedded newlines (Android's wrapped Base64) are kept. The reader knows nothing of which library wrote the
/// file; it does not interpret entry names or values.
///
/// The input is untrusted. It is parsed by libxml2 without network access, without entity substitution and
/// without loading external DTDs; a document that has a `<!DOCTYPE …>` at all is refused before its internal
/// subset is read (SharedPreferences files never have one), which answers entity-expansion and external-entity
/// attacks at once. Input larger than ``DumpLimits/maxXMLBytes`` is refused unread. libxml2 reports nothing to
/// the standard error stream; failures come back as ``DumpError`` values that name the file and a line, never a
/// value.
public enum SharedPreferencesReader {
    /// Whether `prefix` (the first bytes of a file) looks like a SharedPreferences file: an optional UTF-8 byte
    /// order mark, an optional `<?xml …?>` declaration, optional comments and whitespace, then a `<map` start tag.
    /// A document with a DOCTYPE before the root (such as an XML property list) does not look like one.
    public static func looksLike(_ prefix: Data) -> Bool {
        let bytes = [UInt8](prefix.prefix(64 << 10))
        var index = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        func skipWhitespace() {
            while index < bytes.count, isXMLWhitespace(bytes[index]) { index += 1 }
        }
        func skip(past terminator: [UInt8]) -> Bool {
            guard let end = find(terminator, in: bytes, from: index) else { return false }
            index = end + terminator.count
            return true
        }
        skipWhitespace()
        if matches(Array("<?xml".utf8), in: bytes, at: index) {
            guard skip(past: Array("?>".utf8)) else { return false }
        }
        while true {
            skipWhitespace()
            if matches(Array("<!--".utf8), in: bytes, at: index) {
                index += 4
                guard skip(past: Array("-->".utf8)) else { return false }
                continue
            }
            break
        }
        guard matches(Array("<map".utf8), in: bytes, at: index), index + 4 < bytes.count else { return false }
        let next = bytes[index + 4]
        return next == UInt8(ascii: ">") || next == UInt8(ascii: "/") || isXMLWhitespace(next)
    }

    /// Reads the entries of a SharedPreferences file.
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - path: The file's path, for error messages only (nothing is read from it).
    /// - Returns: The entries in file order.
    /// - Throws: ``DumpError`` of kind ``DumpError/Kind/malformed`` when the input is empty, too large, not
    ///   well-formed XML, declares a DTD or entities, has a root other than `<map>`, or has an element that is not
    ///   a SharedPreferences entry, an entry without a name, or a number or boolean that does not parse; the
    ///   message names the element's line.
    public static func read(_ data: Data, path: String) throws(DumpError) -> [PreferenceEntry] {
        guard !data.isEmpty else { throw DumpError(.malformed, path: path, "empty file, not a SharedPreferences XML file") }
        guard data.count <= DumpLimits.maxXMLBytes else {
            throw DumpError(
                .malformed, path: path,
                "\(data.count) bytes is larger than the \(DumpLimits.maxXMLBytes >> 20) MiB limit for an XML preferences file")
        }
        let parsed = SafeXML.read(data, documentTypes: .refused)
        defer { if let document = parsed.document { xmlFreeDoc(document) } }
        if let line = parsed.state.refusedLine {
            throw DumpError(
                .malformed, path: path,
                "line \(line): the document declares a DTD (<!DOCTYPE>); SharedPreferences files have none, and documents with DTDs or entity declarations are refused")
        }
        guard let document = parsed.document else {
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

    private static func describeParseFailure(_ state: SafeXML.State) -> String {
        let code = state.firstErrorCode
        let line = state.firstErrorLine
        let what: String
        switch code {
        case Int32(XML_ERR_DOCUMENT_EMPTY.rawValue): what = "the document is empty"
        case Int32(XML_ERR_INVALID_CHAR.rawValue), Int32(XML_ERR_INVALID_ENCODING.rawValue):
            what = "invalid character or invalid UTF-8"
        case Int32(XML_ERR_UNSUPPORTED_ENCODING.rawValue): what = "unsupported character encoding"
        case Int32(XML_ERR_UNDECLARED_ENTITY.rawValue): what = "reference to an undeclared entity"
        case Int32(XML_ERR_INTERNAL_ERROR.rawValue): what = "nesting too deep or a parser limit reached"
        case Int32(XML_ERR_NO_MEMORY.rawValue): what = "out of memory"
        case Int32(XML_ERR_TAG_NOT_FINISHED.rawValue): what = "the document ends inside an element (truncated?)"
        case Int32(XML_ERR_TAG_NAME_MISMATCH.rawValue): what = "an end tag does not match its start tag"
        case Int32(XML_ERR_DOCUMENT_END.rawValue): what = "content after the root element"
        default: what = "not well-formed"
        }
        let location = line > 0 ? "line \(line): " : ""
        return "\(location)not a well-formed XML file: \(what) (libxml2 error \(code))"
    }

    // MARK: - The tree

    private static func readMap(_ root: xmlNodePtr, path: String) throws(DumpError) -> [PreferenceEntry] {
        guard root.pointee.ns == nil, elementName(root) == "map" else {
            throw DumpError(
                .malformed, path: path,
                "line \(xmlGetLineNo(root)): the root element is <\(printableName(root))>, not <map>; not a SharedPreferences file")
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

    /// Whether `node` is an element to read. Whitespace, comments and processing instructions are skipped;
    /// anything else (text, CDATA, entity references) is refused.
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
                "line \(line): unknown element <\(printableName(node))>; a SharedPreferences entry is <string>, <boolean>, <int>, <long>, <float>, <double> or <set>")
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

    /// Java's `Float.toString` forms: digits, sign, point, exponent, `NaN`, `Infinity`. Swift's parser also takes
    /// hexadecimal and `inf`/`nan` spellings that Android never writes; those are refused.
    private static func isNumberText(_ raw: String) -> Bool {
        if ["NaN", "Infinity", "-Infinity", "+Infinity"].contains(raw) { return true }
        guard !raw.isEmpty else { return false }
        return raw.utf8.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "E")
                || byte == UInt8(ascii: "e")
        }
    }

    /// The text of a `<string>`: its text and CDATA children concatenated, exactly as the parser unescaped them.
    private static func text(of node: xmlNodePtr, path: String) throws(DumpError) -> String {
        switch SafeXML.text(of: node) {
        case .success(let text): return text
        case .failure(let other):
            throw DumpError(
                .malformed, path: path,
                "line \(other.line): <string> holds an element or a reference, not only text")
        }
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
                    "line \(xmlGetLineNo(node)): <set> holds <\(printableName(node))>; only <string> elements are allowed")
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

    /// An element name for a message, with its namespace prefix: at most 40 characters.
    private static func printableName(_ node: xmlNodePtr) -> String {
        var name = elementName(node)
        if let prefix = node.pointee.ns?.pointee.prefix { name = String(cString: prefix) + ":" + name }
        return name.count > 40 ? String(name.prefix(40)) + "…" : name
    }

    /// The value of the un-namespaced attribute `name`, read from the tree (no allocation to free).
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

    private static func isWhitespace(_ content: UnsafeMutablePointer<xmlChar>?) -> Bool {
        guard var cursor = content else { return true }
        while cursor.pointee != 0 {
            guard isXMLWhitespace(cursor.pointee) else { return false }
            cursor += 1
        }
        return true
    }

    private static func isXMLWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func matches(_ needle: [UInt8], in bytes: [UInt8], at index: Int) -> Bool {
        index + needle.count <= bytes.count && bytes[index..<(index + needle.count)].elementsEqual(needle)
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard needle.count <= bytes.count else { return nil }
        var index = start
        while index + needle.count <= bytes.count {
            if matches(needle, in: bytes, at: index) { return index }
            index += 1
        }
        return nil
    }
}

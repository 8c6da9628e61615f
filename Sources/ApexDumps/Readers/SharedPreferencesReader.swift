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
/// The parse streams: libxml2's SAX2 callbacks read each entry as its elements end, and no document tree is built.
/// What is accepted, and the error and line given for what is not, are those of a walk over the finished document:
/// libxml2's own errors (a document that is not well-formed) come first, then the first problem in document order,
/// where a number's or boolean's value is checked after its children. One check of libxml2's tree builder is kept:
/// it reports an `xml:id` value that is not a name or is repeated, which can decide the error a document that is
/// not well-formed reports. Its 10 MB limit on one text node is not: a tree cut such a node short and silently
/// dropped every entry after it, while streaming reads text of any length (the file's size is capped). Lines are
/// exact, also past line 65,535.
///
/// The input is untrusted. It is parsed by libxml2 without network access, without entity substitution and
/// without loading external DTDs; a document that has a `<!DOCTYPE …>` at all is refused before its internal
/// subset is read (SharedPreferences files never have one), which answers entity-expansion and external-entity
/// attacks at once. Input larger than `DumpLimits/maxXMLBytes` is refused unread. libxml2 reports nothing to
/// the standard error stream; failures come back as `DumpError` values that name the file and a line, never a
/// value.
public enum SharedPreferencesReader {
    /// Reads the entries of a SharedPreferences file.
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - path: The file's path, for error messages only (nothing is read from it).
    /// - Returns: The entries in file order.
    /// - Throws: `DumpError` of kind `DumpError/Kind/malformed` when the input is empty, too large, not
    ///   well-formed XML, declares a DTD or entities, has a root other than `<map>`, or has an element that is not
    ///   a SharedPreferences entry, an entry without a name, or a number or boolean that does not parse; the
    ///   message names the element's line.
    public static func read(_ data: Data, path: String) throws(DumpError) -> [PreferenceEntry] {
        return try read(data, path: path, chunkLimit: 16 * 1024)
    }

    /// ``read(_:path:)`` with libxml2 reading at most `chunkLimit` bytes at a time (see ``XMLChunkedInput``), or
    /// the whole file from one buffer with `inChunks` false.
    static func read(
        _ data: Data, path: String, inChunks: Bool = true, chunkLimit: Int
    ) throws(DumpError) -> [PreferenceEntry] {
        guard !data.isEmpty else {
            throw DumpError(.malformed, path: path, "empty file, not a SharedPreferences XML file")
        }
        guard data.count <= DumpLimits.maxXMLBytes else {
            throw DumpError(
                .malformed, path: path,
                "\(data.count) bytes is larger than the \(DumpLimits.maxXMLBytes >> 20) MiB limit for an XML preferences file"
            )
        }
        // SafeXML's way (no network, entities or DTD; any DOCTYPE refused; nothing printed), streaming.
        return try SafeXML.stream(
            [data], documentTypes: .refused, inChunks: inChunks, chunkLimit: chunkLimit,
            builder: { Builder(path: path) }, content: content
        ) { state, wellFormed, builder throws(DumpError) in
            if let line = state.refusedLine {
                throw DumpError(
                    .malformed, path: path,
                    "line \(line): the document declares a DTD (<!DOCTYPE>); SharedPreferences files have none, and documents with DTDs or entity declarations are refused"
                )
            }
            guard wellFormed else { throw DumpError(.malformed, path: path, describeParseFailure(state)) }
            return try builder.finish()
        }
    }

    // MARK: - Parsing

    /// The message for a document libxml2 found not well-formed: the line and the kind of its first error.
    static func describeParseFailure(_ state: SafeXML.State) -> String {
        "\(state.firstErrorLocation)not a well-formed XML file: \(state.firstErrorWords)"
    }

    // MARK: - Callbacks

    /// This reader's content callbacks, for SafeXML's one handler: no element, text or comment node is ever made.
    private static let content = SAXContent(
        startElement: { context, localName, prefix, uri, _, _, count, defaulted, attributes in
            guard let context, let localName, let builder = SharedPreferencesReader.builder(context) else { return }
            // Attributes come as (local name, prefix, URI, value, end of value); libxml2's tree leaves out the
            // defaulted ones, which come last.
            let attributes = Attributes(base: attributes, count: attributes == nil ? 0 : Int(count - defaulted))
            builder.pointee.startElement(context, localName, prefix: prefix, uri: uri, attributes: attributes)
        },
        endElement: { context, _, _, _ in
            guard let context, let builder = SharedPreferencesReader.builder(context) else { return }
            builder.pointee.endElement()
        },
        characters: { context, bytes, length in
            guard let context, let bytes, let builder = SharedPreferencesReader.builder(context) else { return }
            builder.pointee.characters(context, UnsafeBufferPointer(start: bytes, count: Int(length)))
        },
        cdata: { context, bytes, length in
            guard let context, let builder = SharedPreferencesReader.builder(context) else { return }
            builder.pointee.cdata(context, UnsafeBufferPointer(start: bytes, count: bytes == nil ? 0 : Int(length)))
        },
        reference: { context, _ in
            guard let context, let builder = SharedPreferencesReader.builder(context) else { return }
            builder.pointee.reference()
        },
        comment: { context, _ in
            guard let context, let builder = SharedPreferencesReader.builder(context) else { return }
            builder.pointee.skipped(context, .comment)
        },
        processingInstruction: { context, _, _ in
            guard let context, let builder = SharedPreferencesReader.builder(context) else { return }
            builder.pointee.skipped(context, .instruction)
        })

    /// The builder behind a callback's user data (the parser context).
    private static func builder(_ context: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Builder>? {
        SafeXML.user(context)?.assumingMemoryBound(to: Builder.self)
    }

    // MARK: - Reading

    /// The attributes of a start tag, as libxml2 hands them to the callback.
    fileprivate struct Attributes {
        let base: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
        let count: Int

        /// The value of the attribute without a prefix named `name`, as libxml2's tree holds it.
        func value(_ name: StaticString) -> String? {
            guard let base else { return nil }
            for index in 0..<count {
                let attribute = base + 5 * index
                guard attribute[1] == nil, let localName = attribute[0],
                    SharedPreferencesReader.equals(localName, name),
                    let start = attribute[3], let end = attribute[4]
                else { continue }
                return SharedPreferencesReader.attributeValue(UnsafeBufferPointer(start: start, count: end - start))
            }
            return nil
        }
    }

    /// An entry element.
    enum Kind {
        case string, set, boolean, int, long, float, double

        init?(_ localName: UnsafePointer<xmlChar>) {
            let kind: Kind
            switch localName[0] {
            case UInt8(ascii: "s"): kind = localName[1] == UInt8(ascii: "t") ? .string : .set
            case UInt8(ascii: "b"): kind = .boolean
            case UInt8(ascii: "i"): kind = .int
            case UInt8(ascii: "l"): kind = .long
            case UInt8(ascii: "f"): kind = .float
            case UInt8(ascii: "d"): kind = .double
            default: return nil
            }
            guard SharedPreferencesReader.equals(localName, kind.staticName) else { return nil }
            self = kind
        }

        var staticName: StaticString {
            switch self {
            case .string: "string"
            case .set: "set"
            case .boolean: "boolean"
            case .int: "int"
            case .long: "long"
            case .float: "float"
            case .double: "double"
            }
        }

        var name: String { staticName.description }
    }

    /// A child node as a walk over the document would have seen it, for the line an error names.
    fileprivate enum Child {
        case none, element, text, comment, instruction, cdata
    }

    /// An open element whose children are read: the `<map>` root, an entry, or a `<string>` in a `<set>`.
    fileprivate struct Open {
        /// The line of its start tag.
        var line = 0
        /// Its last child so far, and that child's line.
        var last = Child.none
        var lastLine = 0

        /// The line a walk over the document gives a CDATA section or reference child now: that of the child before
        /// it when that is an element, text, comment or processing instruction, else that of this element.
        var lineOfNextChild: Int {
            switch last {
            case .element, .text, .comment, .instruction: lastLine
            case .none, .cdata: line
            }
        }
    }

    /// A run of text or CDATA callbacks: one node of libxml2's tree.
    fileprivate enum Run {
        case none, text, cdata
    }

    /// The parse state the callbacks share.
    fileprivate struct Builder {
        /// The file, for errors.
        let path: String
        /// The entries so far.
        var entries: [PreferenceEntry] = []
        /// The first problem in document order; once there is one, libxml2 still parses the rest (so that a later
        /// well-formedness error wins), but no more entries are read.
        var problem: DumpError?

        /// How many elements are open (the root is 1), and whether the root has started.
        var depth = 0
        var rootSeen = false
        /// The open elements being read, by depth: the `<map>` root, the entry, a `<string>` in a `<set>`.
        var open = [Open](repeating: Open(), count: 3)

        /// The entry being read: what it is, its name, and a number's or boolean's value attribute.
        var kind = Kind.string
        var name = ""
        var value: String?
        /// The text of the `<string>` being read (an entry or a set's), and the strings of the `<set>`.
        var text: [UInt8] = []
        var strings: [String] = []

        /// The run going on: what it is, the line of its first part, and whether a text run holds anything but
        /// XML white space (only looked at where only elements may be).
        var run = Run.none
        var runLine = 0
        /// Whether the text run's line is still to be taken from its next callback.
        var runLineOpen = false
        var runHasText = false

        /// The `xml:id` values seen, which libxml2's tree builder registers.
        var ids = Set<[UInt8]>()

        init(path: String) {
            self.path = path
        }

        // MARK: Events

        mutating func startElement(
            _ context: UnsafeMutableRawPointer, _ localName: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?,
            uri: UnsafePointer<xmlChar>?, attributes: Attributes
        ) {
            endRun()
            registerIDs(context, attributes)
            depth += 1
            guard problem == nil else { return }
            let line = Int(xmlSAX2GetLineNumber(context))
            // An element with a prefix or a namespace is never one of the file's: libxml2's tree gives it a
            // namespace, or names it by its qualified name when the prefix is not declared.
            let plain = prefix == nil && uri == nil
            switch depth {
            case 1:
                rootSeen = true
                guard plain, SharedPreferencesReader.equals(localName, "map") else {
                    return fail(
                        line,
                        "the root element is <\(SharedPreferencesReader.printable(localName, prefix))>, not <map>; not a SharedPreferences file"
                    )
                }
                open[0] = Open(line: line)
            case 2:
                open[0].last = .element
                open[0].lastLine = line
                startEntry(line, plain ? Kind(localName) : nil, localName, prefix: prefix, attributes: attributes)
            case 3:
                open[1].last = .element
                open[1].lastLine = line
                switch kind {
                case .string:
                    fail(line, Self.nonText)
                case .set:
                    guard plain, SharedPreferencesReader.equals(localName, "string") else {
                        return fail(
                            line,
                            "<set> holds <\(SharedPreferencesReader.printable(localName, prefix))>; only <string> elements are allowed"
                        )
                    }
                    text.removeAll(keepingCapacity: true)
                    open[2] = Open(line: line)
                default:
                    fail(line, "<\(kind.name)> holds an element; it must be empty")
                }
            default:
                fail(line, Self.nonText)
            }
        }

        mutating func endElement() {
            endRun()
            let ending = depth
            depth -= 1
            guard problem == nil else { return }
            switch ending {
            case 2: finishEntry()
            case 3: strings.append(String(decoding: text, as: UTF8.self))
            default: break
            }
        }

        mutating func characters(_ context: UnsafeMutableRawPointer, _ bytes: UnsafeBufferPointer<xmlChar>) {
            if run != .text {
                endRun()
                run = .text
                (runHasText, runLineOpen) = (false, false)
                guard problem == nil, depth > 0 else { return }
                takeRunLine(context, bytes)
            } else if runLineOpen, problem == nil, depth > 0 {
                takeRunLine(context, bytes)
            }
            guard problem == nil, depth > 0 else { return }
            if holdsText {
                text.append(contentsOf: bytes)
            } else if !runHasText {
                runHasText = bytes.contains { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
            }
        }

        /// A text run's line is libxml2's when it hands over its first text; a callback that ends at the end of
        /// what was read so far is one that reading at once would have gone on from (``XMLChunkedInput``).
        private mutating func takeRunLine(_ context: UnsafeMutableRawPointer, _ bytes: UnsafeBufferPointer<xmlChar>) {
            runLine = Int(xmlSAX2GetLineNumber(context))
            runLineOpen = XMLChunkedInput.endsAtEndOfInput(context, bytes)
            open[depth - 1].last = .text
            open[depth - 1].lastLine = runLine
        }

        mutating func cdata(_ context: UnsafeMutableRawPointer, _ bytes: UnsafeBufferPointer<xmlChar>) {
            if run == .cdata {
                // A section right after another joins its node.
                guard problem == nil, depth > 0 else { return }
                if holdsText { text.append(contentsOf: bytes) }
                return
            }
            endRun()
            run = .cdata
            guard problem == nil, depth > 0 else { return }
            if holdsText {
                text.append(contentsOf: bytes)
                open[depth - 1].last = .cdata
            } else {
                fail(open[depth - 1].lineOfNextChild, misplaced)
            }
        }

        /// An entity reference node (libxml2 makes none for the predefined entities and character references it
        /// substitutes; any other is refused before the content is read): never text.
        mutating func reference() {
            endRun()
            guard problem == nil, depth > 0 else { return }
            fail(open[depth - 1].lineOfNextChild, holdsText ? Self.nonText : misplaced)
        }

        /// A comment or processing instruction: skipped, but remembered for the line of a later error.
        mutating func skipped(_ context: UnsafeMutableRawPointer, _ child: Child) {
            endRun()
            guard problem == nil, depth > 0 else { return }
            open[depth - 1].last = child
            open[depth - 1].lastLine = Int(xmlSAX2GetLineNumber(context))
        }

        /// The entries, or the first problem.
        mutating func finish() throws(DumpError) -> [PreferenceEntry] {
            if let problem { throw problem }
            guard rootSeen else { throw DumpError(.malformed, path: path, "the document has no root element") }
            return entries
        }

        // MARK: Entries

        private mutating func startEntry(
            _ line: Int, _ kind: Kind?, _ localName: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?,
            attributes: Attributes
        ) {
            guard let kind else {
                return fail(
                    line,
                    "unknown element <\(SharedPreferencesReader.printable(localName, prefix))>; a SharedPreferences entry is <string>, <boolean>, <int>, <long>, <float>, <double> or <set>"
                )
            }
            guard let name = attributes.value("name") else { return fail(line, "<\(kind.name)> has no name attribute") }
            self.kind = kind
            self.name = name
            open[1] = Open(line: line)
            switch kind {
            case .string: text.removeAll(keepingCapacity: true)
            case .set: strings = []
            default: value = attributes.value("value")
            }
        }

        private mutating func finishEntry() {
            switch kind {
            case .string:
                entries.append(PreferenceEntry(name: name, value: .string(String(decoding: text, as: UTF8.self))))
            case .set:
                entries.append(PreferenceEntry(name: name, value: .stringSet(strings)))
            default:
                // Checked once the children are, as a walk over the document does.
                let line = open[1].line
                guard let value else { return fail(line, "<\(kind.name)> has no value attribute") }
                guard let parsed = SharedPreferencesReader.primitive(kind, value) else {
                    return fail(line, "the value of <\(kind.name)> is not a valid \(kind.name)")
                }
                entries.append(PreferenceEntry(name: name, value: parsed))
            }
        }

        /// Whether the open element holds text: a `<string>`, as an entry or in a `<set>`.
        private var holdsText: Bool { depth == 3 || (depth == 2 && kind == .string) }

        // MARK: Errors

        private static let nonText = "<string> holds an element or a reference, not only text"

        /// Text, CDATA or a reference where only elements may be.
        private var misplaced: String {
            "unexpected text or content inside " + (depth == 1 ? "<map>" : "<\(kind.name)>")
        }

        /// The text of a run that has ended is checked where only elements may be.
        private mutating func endRun() {
            guard run != .none else { return }
            if run == .text, runHasText, problem == nil { fail(runLine, misplaced) }
            run = .none
        }

        private mutating func fail(_ line: Int, _ detail: String) {
            if problem == nil { problem = DumpError(.malformed, path: path, "line \(line): \(detail)") }
        }

        // MARK: The tree builder's checks

        /// Registers the `xml:id` attributes of a start tag as libxml2's tree builder does: a value that is not a
        /// name, and a value seen before, are errors (which do not make the document ill-formed).
        private mutating func registerIDs(_ context: UnsafeMutableRawPointer, _ attributes: Attributes) {
            guard let base = attributes.base else { return }
            for index in 0..<attributes.count {
                let attribute = base + 5 * index
                guard let prefix = attribute[1], SharedPreferencesReader.equals(prefix, "xml"),
                    let localName = attribute[0],
                    SharedPreferencesReader.equals(localName, "id"), let start = attribute[3], let end = attribute[4]
                else { continue }
                var id = Array(UnsafeBufferPointer(start: start, count: end - start))
                id.append(0)
                if xmlValidateNCName(id, 1) != 0 { SafeXML.treeBuilderError(context, XML_DTD_XMLID_VALUE) }
                id.removeLast()
                if !id.isEmpty, !ids.insert(id).inserted { SafeXML.treeBuilderError(context, XML_DTD_ID_REDEFINED) }
            }
        }
    }

    // MARK: - Small helpers

    /// Whether the libxml2 string `name` is `literal`.
    fileprivate static func equals(_ name: UnsafePointer<xmlChar>, _ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { bytes in
            for index in 0..<bytes.count where name[index] != bytes[index] { return false }
            return name[bytes.count] == 0
        }
    }

    /// An element name for a message, with its prefix: at most 40 characters.
    fileprivate static func printable(_ localName: UnsafePointer<xmlChar>, _ prefix: UnsafePointer<xmlChar>?) -> String
    {
        var name = string(localName)
        if let prefix { name = string(prefix) + ":" + name }
        return name.count > 40 ? String(name.prefix(40)) + "…" : name
    }

    private static func string(_ name: UnsafePointer<xmlChar>) -> String {
        String(decoding: UnsafeBufferPointer(start: name, count: strlen(name)), as: UTF8.self)
    }
}

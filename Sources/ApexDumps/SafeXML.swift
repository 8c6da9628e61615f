import CLibXML2
import Foundation

/// libxml2 the one way the readers use it on untrusted XML: no network, no entity substitution, no DTD loading,
/// nothing printed, and a DOCTYPE either refused outright or allowed bare with every declaration in it refused.
/// Either way an entity declaration stops the parser as soon as it is seen, which answers entity-expansion
/// ("billion laughs") and external-entity attacks.
enum SafeXML {
    /// What the parser callbacks recorded.
    struct State {
        /// The line of the refused DOCTYPE or declaration, when one stopped the parse.
        var refusedLine: Int?
        /// The first error libxml2 reported, and its line (0 when none).
        var firstErrorCode: Int32 = 0
        var firstErrorLine: Int32 = 0
    }

    /// What a DOCTYPE may be.
    enum DocumentTypes {
        /// Any DOCTYPE stops the parse (SharedPreferences files have none).
        case refused
        /// A DOCTYPE is allowed (every plist names Apple's DTD) but never read; any declaration in it stops the
        /// parse.
        case bareOnly
    }

    /// Reads `data` into a document. The caller frees the document.
    /// - Returns: the document, or nil when it is not well-formed or was refused; and what the callbacks saw.
    static func read(_ data: Data, documentTypes: DocumentTypes) -> (document: xmlDocPtr?, state: State) {
        let parsed = parse(data, documentTypes: documentTypes, user: nil, content: nil)
        if parsed.state.refusedLine != nil || !parsed.wellFormed {
            if let document = parsed.document { xmlFreeDoc(document) }
            return (nil, parsed.state)
        }
        return (parsed.document, parsed.state)
    }

    /// What the callbacks reach through the parser context's `_private` pointer: this type's state and the
    /// caller's own.
    private struct Shared {
        var state = State()
        var user: UnsafeMutableRawPointer?
    }

    /// Runs libxml2 over `data` the safe way, with the caller's content callbacks when it streams.
    /// - Parameters:
    ///   - user: the caller's state, which its callbacks find with ``user(_:)``.
    ///   - content: sets the caller's element, text and other content callbacks on the handler (the error and
    ///     DOCTYPE callbacks are this type's); nil keeps libxml2's tree builder.
    /// - Returns: the document (the caller frees it; an empty shell when `content` streams), what the callbacks
    ///   saw, and whether libxml2 found the document well-formed.
    static func parse(
        _ data: Data, documentTypes: DocumentTypes, user: UnsafeMutableRawPointer?,
        content: ((UnsafeMutablePointer<xmlSAXHandler>) -> Void)?
    ) -> (document: xmlDocPtr?, state: State, wellFormed: Bool) {
        xmlInitParser()
        guard let context = xmlNewParserCtxt() else {
            return (nil, State(firstErrorCode: Int32(XML_ERR_NO_MEMORY.rawValue)), false)
        }
        defer { xmlFreeParserCtxt(context) }

        let shared = UnsafeMutablePointer<Shared>.allocate(capacity: 1)
        shared.initialize(to: Shared(user: user))
        defer {
            shared.deinitialize(count: 1)
            shared.deallocate()
        }
        context.pointee._private = UnsafeMutableRawPointer(shared)

        if let sax = context.pointee.sax {
            content?(sax)
            // Errors go to this context's handler, which keeps the first code and line and prints nothing.
            sax.pointee.serror = { userData, error in
                guard let error, let shared = SafeXML.shared(userData), shared.pointee.state.firstErrorCode == 0 else {
                    return
                }
                shared.pointee.state.firstErrorCode = error.pointee.code
                shared.pointee.state.firstErrorLine = error.pointee.line
            }
            switch documentTypes {
            case .refused:
                sax.pointee.internalSubset = { userData, _, _, _ in SafeXML.refuse(userData) }
                sax.pointee.externalSubset = { userData, _, _, _ in SafeXML.refuse(userData) }
            case .bareOnly:
                sax.pointee.internalSubset = { _, _, _, _ in }
                sax.pointee.externalSubset = { _, _, _, _ in }
                sax.pointee.elementDecl = { userData, _, _, _ in SafeXML.refuse(userData) }
                sax.pointee.attributeDecl = { userData, _, _, _, _, _, _ in SafeXML.refuse(userData) }
                sax.pointee.notationDecl = { userData, _, _, _ in SafeXML.refuse(userData) }
                sax.pointee.unparsedEntityDecl = { userData, _, _, _, _ in SafeXML.refuse(userData) }
            }
            sax.pointee.entityDecl = { userData, _, _, _, _, _ in SafeXML.refuse(userData) }
        }

        // Errors that libxml2 raises without a parser context go to the thread's structured handler: silence it
        // for the duration of the parse and put back whatever the host program had.
        let savedHandler = __xmlStructuredError()?.pointee
        let savedHandlerContext = __xmlStructuredErrorContext()?.pointee
        xmlSetStructuredErrorFunc(nil) { _, _ in }
        defer { xmlSetStructuredErrorFunc(savedHandlerContext, savedHandler) }

        // Safe options only: no network, no entity substitution, no DTD loading, no error output; short text
        // kept inside its node; big line numbers so that messages name the right line in long files.
        let options = Int32(
            bitPattern: XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
                | XML_PARSE_COMPACT.rawValue | XML_PARSE_BIG_LINES.rawValue)
        let document = data.withUnsafeBytes { buffer -> xmlDocPtr? in
            guard let base = buffer.baseAddress, let length = Int32(exactly: buffer.count) else { return nil }
            return xmlCtxtReadMemory(context, base.assumingMemoryBound(to: CChar.self), length, nil, nil, options)
        }
        return (document, shared.pointee.state, document != nil && context.pointee.wellFormed != 0)
    }

    /// The caller's state behind a callback's user data (the parser context), as given to ``parse``.
    static func user(_ userData: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? { shared(userData)?.pointee.user }

    /// The text and CDATA children of `node` joined, as libxml2 unescaped them; comments and processing
    /// instructions are skipped. The usual single text child is read without copying its bytes twice.
    /// - Returns: the text, or the line of the first child that is neither (an element or an entity reference).
    static func text(of node: xmlNodePtr) -> Result<String, NonText> {
        guard let first = node.pointee.children else { return .success("") }
        if first.pointee.next == nil, first.pointee.type == XML_TEXT_NODE || first.pointee.type == XML_CDATA_SECTION_NODE {
            return .success(string(first.pointee.content))
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
                return .failure(NonText(line: Int(xmlGetLineNo(part))))
            }
        }
        return .success(String(decoding: bytes, as: UTF8.self))
    }

    /// A child where only text may be: its line.
    struct NonText: Error {
        let line: Int
    }

    /// The UTF-8 text of a libxml2 string; "" for none.
    static func string(_ content: UnsafeMutablePointer<xmlChar>?) -> String {
        guard let content else { return "" }
        return String(decoding: UnsafeBufferPointer(start: content, count: strlen(content)), as: UTF8.self)
    }

    /// What is shared behind a SAX callback's user data (the parser context).
    private static func shared(_ userData: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<Shared>? {
        guard let userData else { return nil }
        return userData.assumingMemoryBound(to: xmlParserCtxt.self).pointee._private?.assumingMemoryBound(to: Shared.self)
    }

    /// Records the first refused DOCTYPE or declaration and stops the parser.
    private static func refuse(_ userData: UnsafeMutableRawPointer?) {
        guard let userData, let shared = shared(userData) else { return }
        if shared.pointee.state.refusedLine == nil {
            shared.pointee.state.refusedLine = Int(xmlSAX2GetLineNumber(userData))
        }
        xmlStopParser(userData.assumingMemoryBound(to: xmlParserCtxt.self))
    }
}

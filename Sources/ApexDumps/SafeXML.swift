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

    /// Reads `data`. The caller frees the document.
    /// - Returns: the document, or nil when it is not well-formed or was refused; and what the callbacks saw.
    static func read(_ data: Data, documentTypes: DocumentTypes) -> (document: xmlDocPtr?, state: State) {
        xmlInitParser()
        guard let context = xmlNewParserCtxt() else {
            return (nil, State(firstErrorCode: Int32(XML_ERR_NO_MEMORY.rawValue)))
        }
        defer { xmlFreeParserCtxt(context) }

        let state = UnsafeMutablePointer<State>.allocate(capacity: 1)
        state.initialize(to: State())
        defer {
            state.deinitialize(count: 1)
            state.deallocate()
        }
        context.pointee._private = UnsafeMutableRawPointer(state)

        if let sax = context.pointee.sax {
            // Errors go to this context's handler, which keeps the first code and line and prints nothing.
            sax.pointee.serror = { userData, error in
                guard let error, let state = SafeXML.state(userData), state.pointee.firstErrorCode == 0 else { return }
                state.pointee.firstErrorCode = error.pointee.code
                state.pointee.firstErrorLine = error.pointee.line
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
        let seen = state.pointee
        if seen.refusedLine != nil || context.pointee.wellFormed == 0 {
            if let document { xmlFreeDoc(document) }
            return (nil, seen)
        }
        return (document, seen)
    }

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

    /// The state behind a SAX callback's user data (the parser context).
    private static func state(_ userData: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<State>? {
        guard let userData else { return nil }
        return userData.assumingMemoryBound(to: xmlParserCtxt.self).pointee._private?.assumingMemoryBound(to: State.self)
    }

    /// Records the first refused DOCTYPE or declaration and stops the parser.
    private static func refuse(_ userData: UnsafeMutableRawPointer?) {
        guard let userData, let state = state(userData) else { return }
        if state.pointee.refusedLine == nil { state.pointee.refusedLine = Int(xmlSAX2GetLineNumber(userData)) }
        xmlStopParser(userData.assumingMemoryBound(to: xmlParserCtxt.self))
    }
}

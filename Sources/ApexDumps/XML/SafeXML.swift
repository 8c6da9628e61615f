// XML/: what the XML readers share. SafeXML (this file) runs libxml2 the one safe way on untrusted input, around
// each reader's own SAX callbacks (PlistXMLParser, SharedPreferencesReader) set on the one handler
// (SAXHandler.swift), feeding it a chunk at a time (XMLChunkedInput); XMLProlog finds a document's root element without parsing it, for format detection.

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
        /// Whether that error is fatal (the document is not well-formed).
        var firstErrorIsFatal = false

        /// libxml2's first error in words, for a message: what kind of problem it is, without any of the
        /// document's text (which may be a secret).
        var firstErrorKind: String {
            switch firstErrorCode {
            case Int32(XML_ERR_DOCUMENT_EMPTY.rawValue): "the document is empty"
            case Int32(XML_ERR_INVALID_CHAR.rawValue), Int32(XML_ERR_INVALID_ENCODING.rawValue):
                "invalid character or invalid UTF-8"
            case Int32(XML_ERR_UNSUPPORTED_ENCODING.rawValue): "unsupported character encoding"
            case Int32(XML_ERR_UNDECLARED_ENTITY.rawValue): "reference to an undeclared entity"
            case Int32(XML_ERR_INTERNAL_ERROR.rawValue): "nesting too deep or a parser limit reached"
            case Int32(XML_ERR_NO_MEMORY.rawValue): "out of memory"
            case Int32(XML_ERR_TAG_NOT_FINISHED.rawValue): "the document ends inside an element (truncated?)"
            case Int32(XML_ERR_GT_REQUIRED.rawValue): "a tag is not closed with '>' (truncated?)"
            case Int32(XML_ERR_TAG_NAME_MISMATCH.rawValue): "an end tag does not match its start tag"
            case Int32(XML_ERR_DOCUMENT_END.rawValue): "content after the root element"
            default: "not well-formed"
            }
        }

        /// libxml2's first error in words and its code: `"an end tag does not match its start tag (libxml2 error 76)"`.
        var firstErrorWords: String { "\(firstErrorKind) (libxml2 error \(firstErrorCode))" }

        /// Where libxml2's first error is, when it says: `"line 12: "`, or nothing.
        var firstErrorLocation: String { firstErrorLine > 0 ? "line \(firstErrorLine): " : "" }
        /// The size of libxml2's dictionary of names (element, attribute and entity names, processing-instruction
        /// targets) by the end: the bytes its string pools were given, which libxml2 caps at 10 MB per parse, a
        /// limit the whole of a document can reach where none of its pieces does.
        var dictionaryBytes = 0
        /// Whether the document was read in chunks, one of which had to end where libxml2 may read otherwise
        /// than from one buffer (see ``XMLChunkedInput``): ``stream(_:documentTypes:inChunks:chunkLimit:builder:content:finish:)``
        /// parses it again from one buffer.
        var needsOneBuffer = false
    }

    /// What a DOCTYPE may be.
    enum DocumentTypes {
        /// Any DOCTYPE stops the parse (SharedPreferences files have none).
        case refused
        /// A DOCTYPE is allowed (every plist names Apple's DTD) but never read; any declaration in it stops the
        /// parse.
        case bareOnly
    }

    /// What the callbacks reach through the parser context's `_private` pointer: this type's state and the
    /// caller's own.
    struct Shared {
        var state = State()
        var user: UnsafeMutableRawPointer?
    }

    /// Runs libxml2 over `parts`, read in turn as one document, the safe way, with the caller's content callbacks
    /// when it streams. A UTF-8 document is read a chunk at a time (``XMLChunkedInput``), so that libxml2 holds
    /// no copy of it; with `inChunks` false, or in another encoding, it is read from one buffer.
    /// - Parameters:
    ///   - user: the caller's state, which its callbacks find with ``user(_:)``.
    ///   - content: the caller's element, text and other content callbacks (the error and DOCTYPE callbacks are
    ///     this type's: ``handler(content:documentTypes:)``); nil keeps libxml2's tree builder.
    /// - Returns: the document (the caller frees it; an empty shell when `content` streams), what the callbacks
    ///   saw, and whether libxml2 found the document well-formed.
    static func parse(
        _ parts: [Data], documentTypes: DocumentTypes, user: UnsafeMutableRawPointer?, inChunks: Bool = true,
        chunkLimit: Int = 16 * 1024, content: SAXContent?
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

        // The one SAX handler (SAXHandler.swift): SAX2, the reader's content callbacks, the error and DOCTYPE ones.
        context.pointee.sax?.pointee = handler(content: content, documentTypes: documentTypes)

        // Errors that libxml2 raises without a parser context go to the thread's structured handler: silence it
        // for the duration of the parse and put back whatever the host program had.
        let savedHandler = __xmlStructuredError()?.pointee
        let savedHandlerContext = __xmlStructuredErrorContext()?.pointee
        xmlSetStructuredErrorFunc(nil) { _, _ in }
        defer { xmlSetStructuredErrorFunc(savedHandlerContext, savedHandler) }

        let document: xmlDocPtr?
        if inChunks, let first = parts.first, XMLChunkedInput.readsInChunks(first) {
            let input = XMLChunkedInput(parts, chunkLimit: chunkLimit)
            document = withExtendedLifetime(input) {
                xmlCtxtReadIO(
                    context, XMLChunkedInput.readCallback, nil, Unmanaged.passUnretained(input).toOpaque(), nil, nil,
                    options)
            }
            shared.pointee.state.needsOneBuffer = input.needsOneBuffer
        } else {
            let data = parts.count == 1 ? parts[0] : parts.reduce(into: Data()) { $0.append($1) }
            document = data.withUnsafeBytes { buffer -> xmlDocPtr? in
                guard let base = buffer.baseAddress, let length = Int32(exactly: buffer.count) else { return nil }
                return xmlCtxtReadMemory(context, base.assumingMemoryBound(to: CChar.self), length, nil, nil, options)
            }
        }
        shared.pointee.state.dictionaryBytes = context.pointee.dict.map { Int(xmlDictGetUsage($0)) } ?? 0
        return (document, shared.pointee.state, document != nil && context.pointee.wellFormed != 0)
    }

    /// Streams `parts` through a reader's own callbacks, with a new `Builder` (the reader's state, which its
    /// callbacks find with ``user(_:)``) for each parse: in chunks, and again from one buffer when a chunk had to
    /// end where libxml2 may read otherwise (``State/needsOneBuffer``); from one buffer only with `inChunks` false
    /// (the tests' oracle). `finish` judges the parse that counts (what the callbacks saw, whether libxml2 found it
    /// well-formed) and makes the result from its builder. The document shell libxml2 returns is freed here.
    static func stream<Builder, Result, Failure: Error>(
        _ parts: [Data], documentTypes: DocumentTypes, inChunks: Bool = true, chunkLimit: Int = 16 * 1024,
        builder make: () -> Builder, content: SAXContent,
        finish: (_ state: State, _ wellFormed: Bool, _ builder: inout Builder) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var chunked = inChunks
        while true {
            let builder = UnsafeMutablePointer<Builder>.allocate(capacity: 1)
            builder.initialize(to: make())
            defer {
                builder.deinitialize(count: 1)
                builder.deallocate()
            }
            let parsed = parse(
                parts, documentTypes: documentTypes, user: UnsafeMutableRawPointer(builder), inChunks: chunked,
                chunkLimit: chunkLimit, content: content)
            if let document = parsed.document { xmlFreeDoc(document) }
            if chunked, parsed.state.needsOneBuffer {
                chunked = false
                continue
            }
            return try finish(parsed.state, parsed.wellFormed, &builder.pointee)
        }
    }

    /// The caller's state behind a callback's user data (the parser context), as given to ``parse``.
    static func user(_ userData: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? { shared(userData)?.pointee.user }

    /// Records an error that libxml2's tree builder raises by itself, for a streaming caller that must end as a read
    /// into a document would: kept as the first error when none came before, at the current line, with the
    /// builder's effect on the parser context (an `xml:id` that is not a name marks the document invalid; a
    /// repeated ID changes nothing more).
    static func treeBuilderError(_ userData: UnsafeMutableRawPointer, _ code: xmlParserErrors) {
        guard let shared = shared(userData) else { return }
        if shared.pointee.state.firstErrorCode == 0 {
            shared.pointee.state.firstErrorCode = Int32(code.rawValue)
            shared.pointee.state.firstErrorLine = xmlSAX2GetLineNumber(userData)
        }
        let context = userData.assumingMemoryBound(to: xmlParserCtxt.self)
        if code == XML_DTD_XMLID_VALUE {
            context.pointee.errNo = Int32(code.rawValue)
            context.pointee.valid = 0
        }
    }

    /// What is shared behind a SAX callback's user data (the parser context).
    static func shared(_ userData: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<Shared>? {
        guard let userData else { return nil }
        return userData.assumingMemoryBound(to: xmlParserCtxt.self).pointee._private?.assumingMemoryBound(
            to: Shared.self)
    }

    /// Records the first refused DOCTYPE or declaration and stops the parser.
    static func refuse(_ userData: UnsafeMutableRawPointer?) {
        guard let userData, let shared = shared(userData) else { return }
        if shared.pointee.state.refusedLine == nil {
            shared.pointee.state.refusedLine = Int(xmlSAX2GetLineNumber(userData))
        }
        xmlStopParser(userData.assumingMemoryBound(to: xmlParserCtxt.self))
    }
}

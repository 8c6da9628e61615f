import CLibXML2

/// A streaming reader's content callbacks: what it does with elements, text and the nodes it skips. Each is a C
/// function that finds the reader's state with ``SafeXML/user(_:)``. No element, text or comment node is ever made.
struct SAXContent {
    /// A start tag (libxml2's SAX2 form: local name, prefix, namespace URI, attributes).
    var startElement: startElementNsSAX2Func
    /// An end tag.
    var endElement: endElementNsSAX2Func
    /// Text, and white space too: one function for both, so that libxml2 never asks whether blanks are ignorable.
    var characters: charactersSAXFunc
    /// A CDATA section.
    var cdata: cdataBlockSAXFunc
    /// An entity or character reference libxml2 did not substitute.
    var reference: referenceSAXFunc
    /// A comment.
    var comment: commentSAXFunc
    /// A processing instruction.
    var processingInstruction: processingInstructionSAXFunc
}

extension SafeXML {
    /// The options of every parse: no network, no entity substitution, no DTD loading, no error output; short text
    /// kept inside its node; big line numbers so that messages name the right line in long files.
    static let options = Int32(
        bitPattern: XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
            | XML_PARSE_COMPACT.rawValue | XML_PARSE_BIG_LINES.rawValue)

    /// The one SAX handler the readers parse with: libxml2's SAX2 handler, with the reader's `content` callbacks
    /// (nil keeps libxml2's tree builder), this type's error callback (the first error kept, nothing printed), and
    /// DOCTYPE and declaration callbacks that refuse what `documentTypes` does not allow. An entity declaration is
    /// always refused, and stops the parse as soon as it is seen.
    static func handler(content: SAXContent?, documentTypes: DocumentTypes) -> xmlSAXHandler {
        var sax = xmlSAXHandler()
        xmlSAXVersion(&sax, 2)
        if let content {
            sax.characters = content.characters
            sax.ignorableWhitespace = content.characters
            sax.cdataBlock = content.cdata
            sax.startElementNs = content.startElement
            sax.endElementNs = content.endElement
            sax.reference = content.reference
            sax.comment = content.comment
            sax.processingInstruction = content.processingInstruction
        }
        // Errors go to this context's handler, which keeps the first code and line and prints nothing; a fatal
        // error (what stops a document being well-formed) replaces a lesser one kept before it (a namespace or
        // validity error), so that a message names what ended the parse.
        sax.serror = { userData, error in
            guard let error, let shared = SafeXML.shared(userData) else { return }
            let fatal = error.pointee.level == XML_ERR_FATAL
            let state = shared.pointee.state
            guard state.firstErrorCode == 0 || (fatal && !state.firstErrorIsFatal) else { return }
            shared.pointee.state.firstErrorCode = error.pointee.code
            shared.pointee.state.firstErrorLine = error.pointee.line
            shared.pointee.state.firstErrorIsFatal = fatal
        }
        switch documentTypes {
        case .refused:
            sax.internalSubset = { userData, _, _, _ in SafeXML.refuse(userData) }
            sax.externalSubset = { userData, _, _, _ in SafeXML.refuse(userData) }
        case .bareOnly:
            sax.internalSubset = { _, _, _, _ in }
            sax.externalSubset = { _, _, _, _ in }
            sax.elementDecl = { userData, _, _, _ in SafeXML.refuse(userData) }
            sax.attributeDecl = { userData, _, _, _, _, _, _ in SafeXML.refuse(userData) }
            sax.notationDecl = { userData, _, _, _ in SafeXML.refuse(userData) }
            sax.unparsedEntityDecl = { userData, _, _, _, _ in SafeXML.refuse(userData) }
        }
        sax.entityDecl = { userData, _, _, _, _, _ in SafeXML.refuse(userData) }
        return sax
    }
}

import CLibXML2
import Foundation
import Testing

@testable import ApexDumps

/// The one SAX handler both XML readers parse with (`XML/SAXHandler.swift`).
@Suite("XML: the one SAX handler")
struct SAXHandlerTests {
    /// Content callbacks that count what they see, through the state ``SafeXML/user(_:)`` finds.
    static let counting = SAXContent(
        startElement: { context, _, _, _, _, _, _, _, _ in count(context, \.elements) },
        endElement: { context, _, _, _ in count(context, \.ends) },
        characters: { context, _, _ in count(context, \.texts) },
        cdata: { context, _, _ in count(context, \.texts) },
        reference: { context, _ in count(context, \.references) },
        comment: { context, _ in count(context, \.skipped) },
        processingInstruction: { context, _, _ in count(context, \.skipped) })

    struct Counts {
        var elements = 0, ends = 0, texts = 0, references = 0, skipped = 0
    }

    static func count(_ context: UnsafeMutableRawPointer?, _ field: WritableKeyPath<Counts, Int>) {
        guard let context, let user = SafeXML.user(context) else { return }
        user.assumingMemoryBound(to: Counts.self).pointee[keyPath: field] += 1
    }

    @Test("it is libxml2's SAX2 handler: the reader's callbacks replace the tree builder's, one for text and blanks")
    func sax2WithTheReadersCallbacks() {
        let streaming = SafeXML.handler(content: Self.counting, documentTypes: .refused)
        #expect(streaming.initialized == XML_SAX2_MAGIC)
        #expect(streaming.startElementNs != nil && streaming.endElementNs != nil)
        #expect(streaming.characters != nil && streaming.cdataBlock != nil)
        #expect(streaming.serror != nil && streaming.entityDecl != nil)
        let tree = SafeXML.handler(content: nil, documentTypes: .bareOnly)
        #expect(tree.initialized == XML_SAX2_MAGIC)
        // Without content callbacks, libxml2's own SAX2 tree builder stays.
        var libxml2 = xmlSAXHandler()
        xmlSAXVersion(&libxml2, 2)
        #expect(
            unsafeBitCast(tree.startElementNs, to: Int.self) == unsafeBitCast(libxml2.startElementNs, to: Int.self))
        #expect(unsafeBitCast(tree.entityDecl, to: Int.self) != unsafeBitCast(libxml2.entityDecl, to: Int.self))
    }

    @Test("a parse through it runs the reader's callbacks, and refuses an entity declaration under either DOCTYPE rule")
    func callbacksAndRefusals() {
        let document = Data("<a>x<!-- c --><b/>&#65;<![CDATA[y]]><?p q?></a>".utf8)
        var counts = Counts()
        let parsed = SafeXML.parse([document], documentTypes: .refused, user: &counts, content: Self.counting)
        if let document = parsed.document { xmlFreeDoc(document) }
        #expect(parsed.wellFormed)
        #expect(counts.elements == 2 && counts.ends == 2)
        #expect(counts.skipped == 2 && counts.texts >= 3)
        let entity = Data("<!DOCTYPE a [<!ENTITY e \"v\">]><a>&e;</a>".utf8)
        for types in [SafeXML.DocumentTypes.refused, .bareOnly] {
            var ignored = Counts()
            let refused = SafeXML.parse([entity], documentTypes: types, user: &ignored, content: Self.counting)
            if let document = refused.document { xmlFreeDoc(document) }
            #expect(refused.state.refusedLine == 1, "\(types)")
        }
    }
}

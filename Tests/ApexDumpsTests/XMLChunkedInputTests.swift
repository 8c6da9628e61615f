import Foundation
import Testing

@testable import ApexDumps

/// Issue 15: libxml2 reads a document a chunk at a time, so that it holds no copy of it (``XMLChunkedInput``).
/// Read so, in chunks down to the smallest libxml2 reads with, every document gives what it gives read from one buffer: the same value,
/// or the same error at the same line.
@Suite("XML read in chunks")
struct XMLChunkedInputTests {
    /// What the plist parser gives for `parts`: the value as text, or the error's message.
    static func plist(_ parts: [Data], chunkLimit: Int?) -> String {
        do throws(PlistParseError) {
            let parsed =
                if let chunkLimit {
                    try PlistXMLParser.parseCounting(parts, chunkLimit: chunkLimit)
                } else {
                    try PlistXMLParser.parseCounting(parts, inChunks: false, chunkLimit: 1)
                }
            return PlistCanonical.text(parsed.value)
        } catch {
            return "error: " + error.message
        }
    }

    /// Expects `document` to read the same in chunks of every size in `limits` as from one buffer.
    static func expectSameInChunks(
        _ document: String, limits: [Int] = [256, 257, 263, 300, 521, 1000, 4096],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let data = Data(document.utf8)
        let whole = plist([data], chunkLimit: nil)
        for limit in limits {
            let chunked = plist([data], chunkLimit: limit)
            #expect(chunked == whole, "chunks of \(limit) bytes", sourceLocation: sourceLocation)
        }
    }

    static func wrapped(_ body: String) -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n\(body)\n</plist>\n"
    }

    @Test("a `]]>` in text is refused wherever a chunk ends (libxml2 2.9.14 misses one that straddles a read)")
    func cdataEndInTextIsRefusedAtEveryCut() {
        let filler = String(repeating: "a", count: 300)
        for shift in 150..<300 {
            let document = Self.wrapped(
                "<array><string>\(String(filler.prefix(shift)))x]]>y</string><string>]]</string></array>")
            let whole = Self.plist([Data(document.utf8)], chunkLimit: nil)
            #expect(whole.hasPrefix("error:"), "\(whole)")
            Self.expectSameInChunks(document)
        }
    }

    @Test("a run of text that crosses chunks has the line it has in one buffer, in errors of both readers")
    func textLinesAcrossChunks() {
        let lines = String(repeating: "\n", count: 300)
        let spaced = String(repeating: "  \n\t", count: 200)
        for body in [
            "<dict>\(lines)stray<key>k</key><string>v</string></dict>",
            "<dict><key>k</key>\(spaced)x\(lines)<string>v</string></dict>",
            "<array>\(lines)a\r\nb\(spaced)é\(lines)<true/></array>",
            "<array><string>\(lines)ok</string>\(lines)</array>\(lines)trailing",
        ] {
            Self.expectSameInChunks(Self.wrapped(body))
        }
        // The SharedPreferences reader, whose messages name the lines of stray text too.
        let preferences = Data("<map>\(lines)x\(spaced)<int name=\"n\" value=\"1\"/></map>".utf8)
        let expected = Result { () throws(DumpError) in
            try SharedPreferencesReader.read(preferences, path: "p.xml", inChunks: false, chunkLimit: 1)
        }
        for limit in [256, 300, 1000] {
            let chunked = Result { () throws(DumpError) in
                try SharedPreferencesReader.read(preferences, path: "p.xml", chunkLimit: limit)
            }
            #expect("\(chunked)" == "\(expected)", "chunks of \(limit) bytes")
        }
        // libxml2 gives a run of text the line where its first hand-over ends: after the white space, at its last line.
        #expect("\(expected)".contains("line 501"), "\(expected)")
    }

    @Test("a chunk with no place to end (text dense with brackets) makes the parse read from one buffer, alike")
    func denseChunksFallBackToOneBuffer() {
        let dense = String(repeating: "<true/>", count: 40)
        let brackets = String(repeating: "]", count: 1200)
        Self.expectSameInChunks(Self.wrapped("<array>\(dense)<string>\(brackets)</string></array>"))
        Self.expectSameInChunks(Self.wrapped("<array><string>\(brackets)]]>\(brackets)</string></array>"))
    }

    @Test("a document given in parts reads as their concatenation")
    func partsReadAsOne() {
        let document = Self.wrapped(
            "<array>" + (0..<50).map { "<dict><key>k\($0)</key><string>v\($0) &amp; ]</string></dict>" }.joined()
                + "</array>")
        let data = Data(document.utf8)
        let whole = Self.plist([data], chunkLimit: nil)
        #expect(!whole.hasPrefix("error"))
        for cuts in [[1], [17, 18], [100, 900, 901, 1500]] {
            var parts: [Data] = []
            var start = 0
            for cut in cuts + [data.count] {
                parts.append(data[start..<cut])
                start = cut
            }
            for limit in [256, 300, 4096] { #expect(Self.plist(parts, chunkLimit: limit) == whole, "\(cuts) \(limit)") }
        }
    }

    @Test("only UTF-8 documents are read in chunks: a declared other encoding, or UTF-16, is read from one buffer")
    func encodings() {
        #expect(XMLChunkedInput.readsInChunks(Data("<plist/>".utf8)))
        #expect(XMLChunkedInput.readsInChunks(Data("\u{FEFF}<?xml version='1.0' encoding='UTF-8'?><a/>".utf8)))
        #expect(XMLChunkedInput.readsInChunks(Data("<?xml version=\"1.0\"?><a/>".utf8)))
        #expect(!XMLChunkedInput.readsInChunks(Data("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a/>".utf8)))
        #expect(!XMLChunkedInput.readsInChunks(Data([0xFF, 0xFE, 0x3C, 0x00])))
        #expect(!XMLChunkedInput.readsInChunks(Data("  <a/>".utf8)))
        let latin = Data(
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><plist><string>caf\u{E9}</string></plist>".utf8)
        #expect(Self.plist([latin], chunkLimit: 256) == Self.plist([latin], chunkLimit: nil))
    }
}

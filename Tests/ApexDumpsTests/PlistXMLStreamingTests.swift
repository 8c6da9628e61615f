import Foundation
import Testing

@testable import ApexDumps

/// The XML plist parser streams libxml2's SAX2 callbacks into a stack of values: what that makes newly risky
/// (text arriving in several pieces, the order in which errors are found, skipping the rest of a value after an
/// error) is pinned here.
@Suite("XML plist streaming")
struct PlistXMLStreamingTests {
    static func parse(_ xml: String) throws(PlistParseError) -> PlistNode {
        try PlistXMLParser.parse(Data(xml.utf8))
    }

    /// The message of the error `xml` gives; fails the test when it parses.
    static func message(_ xml: String, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        do throws(PlistParseError) {
            let node = try parse(xml)
            Issue.record("parsed as \(PlistCanonical.text(node))", sourceLocation: sourceLocation)
            return ""
        } catch {
            return error.message
        }
    }

    static func structural(_ line: Int, _ detail: String) -> String {
        "the file is \(PlistParseError(.xmlMalformed).what) (line \(line): \(detail))"
    }

    @Test("text that libxml2 hands over in many pieces (long, non-ASCII, references between) is joined exactly")
    func textInPieces() throws {
        // Non-ASCII text is delivered in chunks of a few hundred bytes; every reference is a piece of its own.
        var expected = ""
        var escaped = ""
        for index in 0..<3000 {
            let part = "é日😀\(index)"
            expected += part + "<&>\"'A"
            escaped += part + "&lt;&amp;&gt;&quot;&apos;&#65;"
        }
        let ascii = String(repeating: "abcdefghij", count: 50_000)
        let node = try Self.parse("<plist><array><string>\(escaped)</string><string>\(ascii)</string></array></plist>")
        guard case .array(let values) = node, values.count == 2, case .string(let first) = values[0],
            case .string(let second) = values[1]
        else {
            Issue.record("unexpected tree \(PlistCanonical.text(node).prefix(200))")
            return
        }
        #expect(first == expected)
        #expect(second == ascii)
    }

    @Test("CDATA and text are concatenated in order, in strings, keys and scalars")
    func cdataMixedWithText() throws {
        let node = try Self.parse(
            "<plist><dict><key>k<![CDATA[<e>]]>y</key><string>a<![CDATA[<b>&amp;]]>c<![CDATA[]]>d</string>"
                + "<key>n</key><integer><![CDATA[ 4]]>2 </integer><key>d</key><data>AA<![CDATA[EC]]></data></dict></plist>"
        )
        #expect(PlistCanonical.text(node) == "{s(\"d\"):d(000102),s(\"k<e>y\"):s(\"a<b>&amp;cd\"),s(\"n\"):i(42)}")
    }

    @Test("comments and processing instructions inside values and between entries are skipped")
    func commentsInsideValues() throws {
        let node = try Self.parse(
            "<plist><!-- a --><dict><!-- b --><key>s<!-- c -->t</key><?pi d?><string>a<!-- e -->b<?pi f?>c</string>\n"
                + "<key>i</key><!-- g --><integer>1<!-- h -->2</integer><key>t</key><true><!-- i --></true></dict><!-- j --></plist>"
        )
        #expect(PlistCanonical.text(node) == "{s(\"i\"):i(12),s(\"st\"):s(\"abc\"),s(\"t\"):b(true)}")
    }

    @Test("containers nested exactly to the limit are read; one more level is refused with its line")
    func nestingAtTheLimit() throws {
        let limit = PlistNode.maxNesting
        let deepest = String(repeating: "<array>", count: limit) + String(repeating: "</array>", count: limit)
        var node = try Self.parse(deepest)
        var depth = 0
        while case .array(let inner) = node {
            depth += 1
            guard let first = inner.first else { break }
            node = first
        }
        #expect(depth == limit)
        let tooDeep = String(repeating: "<array>\n", count: limit + 1) + String(repeating: "</array>", count: limit + 1)
        #expect(Self.message(tooDeep) == Self.structural(limit + 1, "containers nested deeper than \(limit) levels"))
        // Inside a <plist> root, libxml2's own limit on nested elements (the root counts) is met first.
        let inPlist =
            "<plist>" + String(repeating: "<array>", count: limit) + String(repeating: "</array>", count: limit)
            + "</plist>"
        #expect(throws: Never.self) { try Self.parse(inPlist) }
        let valueTooDeep =
            "<plist>" + String(repeating: "<dict><key>k</key>", count: limit) + "<true/>"
            + String(repeating: "</dict>", count: limit) + "</plist>"
        let libxml2Limit = "line 1: nesting too deep or a parser limit reached (libxml2 error 1)"
        #expect(Self.message(valueTooDeep) == "the file is \(PlistParseError(.xmlMalformed).what) (\(libxml2Limit))")
        let pastPlist =
            "<plist>" + String(repeating: "<array>", count: limit + 1) + String(repeating: "</array>", count: limit + 1)
            + "</plist>"
        #expect(Self.message(pastPlist) == "the file is \(PlistParseError(.xmlMalformed).what) (\(libxml2Limit))")
    }

    @Test("a <key> without a value: before another key, and at the end of a <dict>")
    func keyWithoutValue() {
        #expect(
            Self.message("<plist><dict>\n<key>a</key>\n<key>b</key><true/></dict></plist>")
                == Self.structural(3, "a <key> without a value"))
        #expect(
            Self.message("<plist><array><true/>\n<dict><key>a</key><true/><key>b</key>\n</dict></array></plist>")
                == Self.structural(2, "a <key> without a value at the end of a <dict>"))
        #expect(
            Self.message("<plist><dict><true/></dict></plist>")
                == Self.structural(1, "a value without a <key> in a <dict>"))
    }

    @Test("stray text: inside containers and the root, split by comments, in CDATA; white space alone is fine")
    func strayText() throws {
        #expect(
            Self.message("<plist><array>\n<true/>\n  x\n</array></plist>")
                == Self.structural(4, "text or a reference inside <array>"))
        #expect(
            Self.message("<plist><dict>  <!-- c -->\n x<key>a</key><true/></dict></plist>")
                == Self.structural(2, "text or a reference inside <dict>"))
        // CDATA has the line of the node before it, as libxml2's tree gives it: here the element, then the white space.
        #expect(
            Self.message("<plist><array>\n<true/><![CDATA[ ]]></array></plist>")
                == Self.structural(2, "text or a reference inside <array>"))
        #expect(
            Self.message("<plist><array><true/>\n\n<![CDATA[ ]]></array></plist>")
                == Self.structural(3, "text or a reference inside <array>"))
        #expect(
            Self.message("<plist><array/>\n\nx</plist>") == Self.structural(3, "text or a reference inside <plist>"))
        #expect(
            PlistCanonical.text(try Self.parse("<plist>\n\t<array>\r\n <true/> \n</array>\n</plist>")) == "[b(true)]")
        // Text where only text may be, but with an element inside: the element's line.
        #expect(
            Self.message("<plist><string>a\n<b/></string></plist>")
                == Self.structural(2, "<string> holds an element or a reference, not only text"))
    }

    @Test("an error after many items names its line; the rest of the value is skipped, not read")
    func errorAfterManyItems() {
        let items = String(repeating: "<dict>\n<key>svce</key>\n<string>s</string>\n</dict>\n", count: 5000)
        let xml =
            "<plist>\n<array>\n" + items
            + "<dict><key>n</key><integer>x</integer><foo/></dict>\n<dict/></array></plist>"
        #expect(Self.message(xml) == Self.structural(2 + 5000 * 4 + 1, "an <integer> that is not a 64-bit integer"))
    }

    @Test("a document that is not well-formed names the line and the kind of libxml2's first error, and no text of it")
    func notWellFormedNamesTheLine() {
        let truncated = "<plist>\n<dict>\n<key>token</key>\n<string>s3cr3t-value</string>\n<key>other</key>\n"
        #expect(
            Self.message(truncated)
                == "the file is \(PlistParseError(.xmlMalformed).what) (line 6: the document ends inside an element "
                + "(truncated?) (libxml2 error 77))")
        #expect(
            Self.message(truncated + "<str")
                == "the file is \(PlistParseError(.xmlMalformed).what) (line 6: a tag is not closed with '>' "
                + "(truncated?) (libxml2 error 73))")
        let mismatched = "<plist>\n<dict>\n<key>token</key>\n<string>s3cr3t-value</dat>\n</dict>\n</plist>"
        let message = Self.message(mismatched)
        #expect(message.contains("(line 4: an end tag does not match its start tag (libxml2 error 76))"), "\(message)")
        #expect(!message.contains("s3cr3t") && !message.contains("token"), "\(message)")
        // A namespace error earlier in the document is not what ended the parse: the fatal error is named.
        let prefixed = "<plist>\n<dict>\n<key>k</key>\n<a:b/>\n" + truncated.dropFirst("<plist>\n<dict>\n".count)
        #expect(
            Self.message(prefixed).hasSuffix(
                "(line 8: the document ends inside an element (truncated?) (libxml2 error 77))"),
            "\(Self.message(prefixed))")
    }

    @Test("errors come in the order a walk over the whole document finds them")
    func errorOrder() {
        // libxml2's own errors win over anything found before them.
        #expect(
            Self.message("<plist><array><foo/></array><array></plist>")
                == "the file is \(PlistParseError(.xmlMalformed).what) (line 1: an end tag does not match its start tag "
                + "(libxml2 error 76))")
        // Among the root's children, a second value or stray text wins over an error inside the first value.
        #expect(
            Self.message("<plist><array><foo/></array>\n<array/></plist>")
                == Self.structural(2, "the <plist> element holds more than one value"))
        #expect(
            Self.message("<plist><array><foo/></array>\nx</plist>")
                == Self.structural(2, "text or a reference inside <plist>"))
        #expect(
            Self.message("<plist><!-- only a comment -->\n</plist>")
                == Self.structural(1, "the <plist> element holds no value"))
        // Inside the value, the first problem in document order.
        #expect(
            Self.message("<plist><array><integer>x</integer>\n<foo/></array></plist>")
                == Self.structural(1, "an <integer> that is not a 64-bit integer"))
        // What is inside <true/> is never read.
        #expect(PlistCanonical.text((try? Self.parse("<plist><true>x<foo/></true></plist>")) ?? .null) == "b(true)")
    }

    @Test("element names: a prefix without a namespace is part of the name; a declared namespace is not")
    func prefixedNames() throws {
        #expect(
            Self.message("<plist><x:string>a</x:string></plist>").contains(
                "an element that is not a plist value: <x:string>"))
        #expect(
            PlistCanonical.text(try Self.parse("<p:plist xmlns:p=\"u\"><p:string>a</p:string></p:plist>")) == "s(\"a\")"
        )
    }
}

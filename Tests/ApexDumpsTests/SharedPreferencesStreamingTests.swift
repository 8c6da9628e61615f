import CLibXML2
import Foundation
import Testing

@testable import ApexDumps

/// What a SharedPreferences reader gives for one input, as text that compares exactly: strings by their Unicode
/// scalars (Swift's `==` on `String` treats canonically equivalent text as equal), numbers by their bits.
private func outcome(_ read: () throws(DumpError) -> [PreferenceEntry]) -> String {
    do {
        return try read().map { entry in escaped(entry.name) + " = " + describe(entry.value) }.joined(separator: "\n")
    } catch {
        return "error \(error.kind) \(escaped(error.path)): \(escaped(error.message))"
    }
}

private func describe(_ value: PreferenceValue) -> String {
    switch value {
    case .string(let text): "string " + escaped(text)
    case .stringSet(let strings): "set [" + strings.map(escaped).joined(separator: ", ") + "]"
    case .boolean(let flag): "boolean \(flag)"
    case .int(let number): "int \(number)"
    case .long(let number): "long \(number)"
    case .float(let number): "float \(number) 0x" + String(number.bitPattern, radix: 16)
    case .double(let number): "double \(number) 0x" + String(number.bitPattern, radix: 16)
    case .bytes(let data): "bytes " + data.map { String(format: "%02x", $0) }.joined()
    }
}

/// `text` in ASCII: anything else as `\u{…}`, so that two texts are equal exactly when their scalars are.
private func escaped(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        if scalar.value >= 0x20, scalar.value < 0x7F, scalar != "\\", scalar != "\"" {
            out.unicodeScalars.append(scalar)
        } else {
            out += "\\u{" + String(scalar.value, radix: 16) + "}"
        }
    }
    return out + "\""
}

private func streaming(_ data: Data, _ path: String = "/dumps/prefs.xml") -> String {
    outcome { () throws(DumpError) in try SharedPreferencesReader.read(data, path: path) }
}

private func tree(_ data: Data, _ path: String = "/dumps/prefs.xml") -> String {
    outcome { () throws(DumpError) in try SharedPreferencesDOMReference.read(data, path: path) }
}

/// Expects both readers to give the same for `data`; returns whether they did.
@discardableResult
private func expectSame(
    _ data: Data, _ label: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    let expected = tree(data)
    var actual = streaming(data)
    // Read in chunks as small as libxml2 reads with, it must give what it gives from one buffer.
    for limit in [256, 300, 1000] where actual == expected {
        actual = outcome { () throws(DumpError) in
            try SharedPreferencesReader.read(data, path: "/dumps/prefs.xml", chunkLimit: limit)
        }
    }
    guard actual != expected else { return true }
    Issue.record(
        "\(label()): the streaming reader gave\n\(actual.prefix(600))\nwhere the tree gave\n\(expected.prefix(600))",
        sourceLocation: sourceLocation)
    return false
}

private func xml(_ body: String) -> String {
    "<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map>\n\(body)\n</map>\n"
}

/// A small deterministic generator (xorshift64*), so that the mutated documents are the same on every run.
private struct Generator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

/// The streaming SharedPreferences reader against the tree walk it replaced (``SharedPreferencesDOMReference``):
/// every fixture, whole and truncated, a catalogue of edge and malformed inputs, and seeded mutations of them must
/// give the same entries or the same error (kind, path and message, line included).
@Suite("SharedPreferences streaming")
struct SharedPreferencesStreamingTests {
    // MARK: Fixtures

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every SharedPreferences file among the repository's test fixtures (real-world ones included) and samples.
    static func fixtures() throws -> [(path: String, data: Data)] {
        var urls: [URL] = []
        for folder in [repository.appendingPathComponent("Tests"), repository.appendingPathComponent("samples")] {
            let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
            while let url = files?.nextObject() as? URL {
                if url.pathExtension == "xml" { urls.append(url) }
            }
        }
        return try urls.sorted { $0.path < $1.path }.compactMap { url in
            let data = try Data(contentsOf: url)
            return SharedPreferencesReader.looksLike(data) ? (url.path, data) : nil
        }
    }

    @Test("every SharedPreferences fixture reads the same, whole and cut off at many offsets", .timeLimit(.minutes(5)))
    func fixturesWholeAndTruncated() throws {
        let fixtures = try Self.fixtures()
        #expect(fixtures.count >= 20, "found only \(fixtures.map(\.path))")
        var read = 0
        for (path, data) in fixtures {
            guard expectSame(data, path) else { continue }
            if case .some = try? SharedPreferencesReader.read(data, path: path) { read += 1 }
            // Every offset of a small file; about 2,000 of a larger one, plus the last 64.
            let stride = max(1, data.count / 2000)
            let offsets = Set(Swift.stride(from: 0, to: data.count, by: stride)).union(
                max(0, data.count - 64)..<data.count)
            for offset in offsets.sorted() where !expectSame(data.prefix(offset), "\(path) cut at \(offset)") { break }
        }
        #expect(read == fixtures.count, "every fixture reads")
    }

    // MARK: Edge and malformed inputs

    struct Input: CustomStringConvertible, Sendable {
        var description: String
        var data: Data
    }

    static let edgeInputs: [Input] = {
        var inputs: [Input] = []
        func add(_ name: String, _ text: String) { inputs.append(Input(description: name, data: Data(text.utf8))) }
        func addData(_ name: String, _ data: Data) { inputs.append(Input(description: name, data: data)) }

        // White space, comments, processing instructions.
        add("empty map", "<map/>")
        add("empty map with end tag", "<map></map>")
        add(
            "CR LF and tabs",
            "<?xml version='1.0'?>\r\n<map>\r\n\t<string name=\"a\">x\r\ny</string>\r\n\t<int name=\"b\" value=\"1\"/>\r\n</map>\r\n"
        )
        add(
            "comments and PIs everywhere",
            "<!-- before --><?pi before?>\n<map><!-- c --><?pi x?>\n<string name=\"s\">a<!-- c -->b<?pi y?>c</string>\n"
                + "<int name=\"i\" value=\"2\"><!-- c --><?pi?></int>\n"
                + "<set name=\"t\"><!-- c --><string>x<!--c--></string><?pi?></set><!-- end --></map><!-- after --><?pi after?>"
        )
        add("comment between white space", xml("  <!-- c -->  \n  <string name=\"a\">v</string>"))
        add(
            "character references that are white space in the map",
            xml("&#32;&#10;&#13;&#9; <string name=\"a\">v</string>"))
        add("a character reference that is text in the map", xml("<string name=\"a\">v</string>&#65;"))
        add("a predefined entity in the map", xml("<string name=\"a\">v</string>\n&amp;"))
        add("text split by a comment in the map", xml("<string name=\"a\">v</string>\n  a<!-- c -->b"))
        add("white space then text after a comment", xml("<!-- c -->\n \n x <string name=\"a\">v</string>"))
        add("text before the first entry", "<map>\n\nloose\n<string name=\"a\">v</string></map>")
        add("text at the end of the map", xml("<string name=\"a\">v</string>\n  tail  "))
        add("text in a set", xml("<set name=\"s\">\n <string>a</string>\n x\n</set>"))
        add("white space in a set", xml("<set name=\"s\">\n <string>a</string>\n \t\n</set>"))
        add("text in an int", xml("<int name=\"n\" value=\"1\">\n 1 \n</int>"))
        add("white space in an int", xml("<int name=\"n\" value=\"1\">\n \n</int>"))
        add("text in a boolean before an element", xml("<boolean name=\"b\" value=\"true\">x<y/></boolean>"))
        add("an element in an int before text", xml("<int name=\"n\" value=\"1\">\n<y/>x</int>"))
        add("text in an int without a value", xml("<int name=\"n\">x</int>"))
        add("an element in an int without a value", xml("<int name=\"n\"><x/></int>"))
        add("an element in a float with a bad value", xml("<float name=\"n\" value=\"q\">\n\n<x/></float>"))

        // CDATA.
        add("CDATA in a string", xml("<string name=\"s\"><![CDATA[<raw> & ]]> tail</string>"))
        add("CDATA only", xml("<string name=\"s\"><![CDATA[x]]></string>"))
        add("empty CDATA in a string", xml("<string name=\"s\"><![CDATA[]]></string>"))
        add("adjacent CDATA sections", xml("<string name=\"s\">a<![CDATA[b]]><![CDATA[c]]>d<![CDATA[]]></string>"))
        add("CDATA in the map after an element", xml("<string name=\"s\">v</string><![CDATA[x]]>"))
        add("CDATA in the map after white space", xml("<string name=\"s\">v</string>\n\n  <![CDATA[x]]>"))
        add("CDATA first in the map", "<map><![CDATA[x]]></map>")
        add("CDATA first in the map on a later line", "<map\n\n><![CDATA[x]]></map>")
        add("empty CDATA in the map", "<map>\n<![CDATA[]]></map>")
        add("CDATA in the map after a comment", "<map>\n<!-- c\n -->\n<![CDATA[ ]]></map>")
        add("CDATA in the map after a PI", "<map>\n<?pi\n?><![CDATA[ ]]></map>")
        add("CDATA in a set", xml("<set name=\"s\">\n<string>a</string><![CDATA[x]]></set>"))
        add("CDATA first in a set", xml("<set name=\"s\"><![CDATA[x]]></set>"))
        add("CDATA in an int", xml("<int name=\"n\" value=\"1\">\n<![CDATA[]]></int>"))
        add("CDATA in a set's string", xml("<set name=\"s\"><string>a<![CDATA[<b>]]>c</string></set>"))

        // References.
        add(
            "escapes in text",
            xml("<string name=\"e\">&lt;a href=&quot;x&quot;&gt; &amp; &apos;q&apos; &#233;&#x263A;&#10;&#13;</string>")
        )
        add(
            "references in names",
            xml("<string name=\"a&amp;b &lt;&gt;&quot;&apos; &#38; &#x26; &amp;#38; &#233;\">v</string>"))
        add("white space and references in a name", xml("<string name=\"a\tb\nc\r\nd &#9;&#10;&#13; e\">v</string>"))
        add("non-ASCII name", xml("<string name=\"naïve ☺ 日本\">x</string>"))
        add("empty name", xml("<string name=\"\">x</string>"))
        add(
            "reference in a value attribute",
            xml("<int name=\"n\" value=\"&#49;&#50;\"/><boolean name=\"b\" value=\"&#116;rue\"/>"))
        add("ampersand in a value attribute", xml("<int name=\"n\" value=\"1&amp;\"/>"))
        add("undeclared entity in text", xml("<string name=\"s\">&secret;</string>"))
        add("undeclared entity in a name", xml("<string name=\"&secret;\">v</string>"))
        add("undeclared entity in the map", xml("&secret;"))
        add("character reference to an invalid character", xml("<string name=\"s\">&#0;</string>"))
        add("character reference past Unicode", xml("<string name=\"s\">&#x110000;</string>"))

        // Entries.
        add("missing name on every kind", xml("<string>x</string>"))
        add("missing name on a boolean", xml("<boolean value=\"true\"/>"))
        add("missing name on a set", xml("<set><string>x</string></set>"))
        add("prefixed name attribute, declared", "<map xmlns:a=\"urn:a\"><string a:name=\"x\">v</string></map>")
        add("prefixed name attribute, undeclared", xml("<string a:name=\"x\">v</string>"))
        add("xml:name attribute", xml("<string xml:name=\"x\">v</string>"))
        add("name and a prefixed name", xml("<string a:name=\"x\" name=\"y\">v</string>"))
        add(
            "extra attributes",
            xml("<string name=\"s\" value=\"ignored\" other=\"o\">v</string><int other=\"o\" value=\"3\" name=\"n\"/>"))
        add("missing value", xml("<long name=\"n\"/>"))
        add(
            "duplicate names",
            xml("<string name=\"d\">1</string><int name=\"d\" value=\"2\"/><string name=\"d\">3</string>"))
        add("duplicate attributes", xml("<string name=\"a\" name=\"b\">v</string>"))
        add("unknown element", xml("<byte-array name=\"b\">00</byte-array>"))
        add("unknown element with a long name", xml("<\(String(repeating: "x", count: 60))/>"))
        add("unknown element with a long non-ASCII name", xml("<\(String(repeating: "é", count: 50)) name=\"n\"/>"))
        add(
            "unknown element after entries",
            xml("<string name=\"a\">v</string>\n<null name=\"n\"/>\n<string name=\"b\">v</string>"))
        add("namespaced entry, declared prefix", "<map xmlns:a=\"urn:x\"><a:string name=\"s\">v</a:string></map>")
        add("namespaced entry, undeclared prefix", xml("<a:string name=\"s\">v</a:string>"))
        add(
            "namespaced entry, long prefix",
            xml(
                "<\(String(repeating: "p", count: 45)):string name=\"s\">v</\(String(repeating: "p", count: 45)):string>"
            ))
        add("entry in a default namespace", xml("<string xmlns=\"urn:x\" name=\"s\">v</string>"))
        add("entry with xml: prefix", xml("<xml:string name=\"s\">v</xml:string>"))
        add("entry undeclaring the default namespace", xml("<string xmlns=\"\" name=\"s\">v</string>"))
        add("root in a default namespace", "<map xmlns=\"urn:x\"><string name=\"s\">v</string></map>")
        add("root with a declared prefix", "<p:map xmlns:p=\"urn:x\"/>")
        add("root with an undeclared prefix", "<p:map/>")
        add("root undeclaring the default namespace", "<map xmlns=\"\"><string name=\"s\">v</string></map>")
        add("root plist", "<plist version=\"1.0\"><dict/></plist>")
        add("root with a long name", "<\(String(repeating: "r", count: 41))/>")
        add("root map with attributes", "<map version=\"1\" name=\"x\"><string name=\"s\">v</string></map>")

        // Nesting.
        add("element in a string", xml("<string name=\"s\">a<b/>c</string>"))
        add(
            "element in a string after a comment on another line", xml("<string name=\"s\"><!-- c -->\n\n<b/></string>")
        )
        add("element in a set's string", xml("<set name=\"s\"><string>a\n<b/></string></set>"))
        add("set in a set", xml("<set name=\"s\"><set name=\"t\" /></set>"))
        add("namespaced string in a set", "<map xmlns:a=\"u\"><set name=\"s\"><a:string>x</a:string></set></map>")
        add("unknown element in a set", xml("<set name=\"s\"><string>a</string>\n<int name=\"i\" value=\"1\"/></set>"))
        add(
            "string in a set with attributes",
            xml("<set name=\"s\"><string name=\"ignored\" value=\"v\">a</string><string/></set>"))
        add("element in an int", xml("<int name=\"n\" value=\"1\"><x/></int>"))
        add(
            "deep nesting in an unknown element",
            xml(
                "<unknown>" + String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100)
                    + "</unknown>"))
        add(
            "nesting past libxml2's limit in a string",
            xml(
                "<string name=\"s\">" + String(repeating: "<a>", count: 300) + String(repeating: "</a>", count: 300)
                    + "</string>"))
        add(
            "nesting past libxml2's limit in the map",
            String(repeating: "<map>", count: 300) + String(repeating: "</map>", count: 300))

        // Values.
        for (type, values) in [
            ("boolean", ["true", "false", "TRUE", "False", "yes", "", " true", "1"]),
            ("int", ["0", "-0", "+5", "2147483647", "-2147483648", "2147483648", " 1", "1 ", "0x10", "", "1.0", "٣"]),
            ("long", ["9223372036854775807", "-9223372036854775808", "9223372036854775808", "1e3", "+0", "-"]),
            (
                "float",
                [
                    "1.5", "1.0E10", "NaN", "Infinity", "-Infinity", "+Infinity", "inf", "nan", "0x1p3", "1e", ".5",
                    "5.", "-0.0", "1E-45", "3.4028236E38", "e", "+", "",
                ]
            ),
            ("double", ["0.1", "1.7976931348623157E308", "1e309", "4.9E-324", "NaN", "-", "1..2", "1e5e5"]),
        ] {
            for value in values {
                add("\(type) value \(value.debugDescription)", xml("<\(type) name=\"n\" value=\"\(value)\" />"))
            }
        }

        // Encodings and bytes.
        addData(
            "UTF-16 with a byte order mark",
            Data([0xFF, 0xFE]) + xml("<string name=\"s\">é</string>").data(using: .utf16LittleEndian)!)
        addData(
            "Latin-1",
            Data("<?xml version='1.0' encoding='ISO-8859-1'?><map><string name=\"s\">".utf8) + Data([0xE9, 0xFF])
                + Data("</string></map>".utf8))
        addData(
            "invalid UTF-8",
            Data("<map><string name=\"s\">".utf8) + Data([0xC3, 0x28, 0xFF]) + Data("</string></map>".utf8))
        addData(
            "invalid UTF-8 in a name",
            Data("<map><string name=\"".utf8) + Data([0xFF]) + Data("\">v</string></map>".utf8))
        addData("NUL byte", Data("<map><string name=\"s\">a".utf8) + Data([0]) + Data("b</string></map>".utf8))
        addData("byte order mark", Data([0xEF, 0xBB, 0xBF]) + Data("<map><string name=\"s\">v</string></map>".utf8))
        add("unsupported encoding", "<?xml version='1.0' encoding='x-no-such-charset'?><map />")

        // Documents.
        add("whitespace only", " \n ")
        add("declaration only", "<?xml version='1.0'?>")
        add("two roots", "<map /><map />")
        add("text after the root", "<map />x")
        add("unknown root then a WF error", "<other><x></other>")
        add("mismatched tags", xml("<string name=\"s\">v</int>"))
        add("unclosed map", "<map><string name=\"s\">v</string>")
        add("DOCTYPE", "<!DOCTYPE map><map />")
        add(
            "DOCTYPE with an entity",
            "<?xml version='1.0'?>\n<!DOCTYPE map [<!ENTITY e \"x\">]>\n<map><string name=\"s\">&e;</string></map>")
        add("DOCTYPE after the root", "<map/><!DOCTYPE map>")
        add("CDATA end in text", xml("<string name=\"s\">a]]>b</string>"))
        add("stray less-than in an attribute", xml("<string name=\"a<b\">v</string>"))

        // Errors after the first one.
        add("two structural errors", xml("<x/>\n<string>no name</string>"))
        add("a structural error, then an ill-formed document", xml("<x/>\n<string name=\"s\">v</int>"))
        add("a structural error, then an undeclared entity", xml("<x/>\n<string name=\"s\">&e;</string>"))
        add(
            "a structural error in an entry's children before its value",
            xml("<int name=\"n\" value=\"bad\">\n<x/></int>"))
        add(
            "an error in a set's string before the next entry's", xml("<set name=\"s\"><string><x/></string></set><y/>")
        )

        // libxml2's tree builder: xml:id values.
        add("xml:id valid", xml("<string name=\"s\" xml:id=\"a\">v</string>"))
        add("xml:id not a name", xml("<string name=\"s\" xml:id=\"1 2\">v</string>"))
        add(
            "xml:id not a name, then an ill-formed document",
            xml("<string name=\"s\" xml:id=\"1\">v</string>\n<string name=\"t\">v</int>"))
        add(
            "xml:id with spaces around a name, then an ill-formed document",
            xml("<string name=\"s\" xml:id=\"  a  \">v</string>\n</x>"))
        add("xml:id empty, then an ill-formed document", xml("<string name=\"s\" xml:id=\"\">v</string>\n</x>"))
        add(
            "xml:id with a reference, then an ill-formed document",
            xml("<string name=\"s\" xml:id=\"a&amp;b\">v</string>\n</x>"))
        add(
            "xml:id twice, then an ill-formed document",
            xml("<string name=\"s\" xml:id=\"a\">v</string>\n<int name=\"i\" value=\"1\" xml:id=\"a\"/>\n</x>"))
        add("xml:id twice", xml("<string name=\"s\" xml:id=\"a\">v</string><int name=\"i\" value=\"1\" xml:id=\"a\"/>"))
        add(
            "xml:id on the root, then an ill-formed document",
            "<map xml:id=\"-\">\n<string name=\"s\">v</string>\n</mapx>")
        add("xml:id in skipped content, then an ill-formed document", xml("<unknown><a xml:id=\"7\"/></unknown>\n<b>"))
        add("xml:id after a namespace error", xml("<p:x xml:id=\"7\"/>\n<b>"))
        add("id without the xml prefix", xml("<string name=\"s\" id=\"1 2\">v</string>\n</x>"))
        return inputs
    }()

    @Test("edge and malformed inputs read the same", arguments: edgeInputs)
    func edgeInput(_ input: Input) {
        expectSame(input.data, input.description)
    }

    @Test("every edge input cut off at every offset reads the same", .timeLimit(.minutes(5)))
    func edgeInputsTruncated() {
        for input in Self.edgeInputs where input.data.count <= 4096 {
            for offset in 0..<input.data.count
            where !expectSame(input.data.prefix(offset), "\(input.description) cut at \(offset)") {
                break
            }
        }
    }

    @Test("seeded mutations of the inputs read the same", .timeLimit(.minutes(5)))
    func mutations() throws {
        let tokens = [
            "<", ">", "/", "&", "&amp;", "&#38;", "&#65;", "&#10;", "&x;", "<![CDATA[x]]>", "<![CDATA[]]>", "<!--c-->",
            "<?pi d?>",
            "<x/>", "<string>", "</string>", "<set name=\"q\">", "</set>", "<int name=\"i\" value=\"1\"/>", "\n",
            "\n\n\n", " ",
            "name=\"q\"", "value=\"1\"", "value=\"x\"", "xml:id=\"a\"", "xml:id=\"1\"", "a:", "xmlns:a=\"u\"", "é", "☺",
            "\"", "'",
            "]]>", "\u{0}", "\r\n", "<map>", "</map>", "<!DOCTYPE map>",
        ].map { Array($0.utf8) }
        var bases = try Self.fixtures().map { [UInt8]($0.data) }.filter { $0.count < 20_000 }
        bases += Self.edgeInputs.map { [UInt8]($0.data) }.filter { $0.count < 4096 }
        var generator = Generator(state: 0x9E37_79B9_7F4A_7C15)
        var failures = 0
        for round in 0..<6000 {
            var bytes = bases[generator.below(bases.count)]
            for _ in 0...generator.below(3) {
                let at = bytes.isEmpty ? 0 : generator.below(bytes.count)
                switch generator.below(4) {
                case 0:
                    bytes.removeSubrange(at..<min(bytes.count, at + 1 + generator.below(8)))
                case 1:
                    bytes.insert(contentsOf: tokens[generator.below(tokens.count)], at: at)
                case 2:
                    if !bytes.isEmpty { bytes[at] = UInt8(truncatingIfNeeded: generator.next()) }
                default:
                    let end = min(bytes.count, at + 1 + generator.below(40))
                    bytes.insert(contentsOf: bytes[at..<end], at: end)
                }
            }
            if !expectSame(
                Data(bytes), "mutant \(round): \(String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription)")
            {
                failures += 1
                if failures >= 5 { break }
            }
        }
    }

    @Test("a big file: 30,000 entries of every kind, and an error after all of them", .timeLimit(.minutes(2)))
    func bigFile() {
        var body = ""
        for index in 0..<5000 {
            body +=
                "    <string name=\"key\(index)\">AQIvZ0rae6csEKp09v5UvJfWyehtBM3rtPHsRJIPVxHy\(index)=\n    </string>\n"
            body += "    <boolean name=\"b\(index)\" value=\"\(index.isMultiple(of: 2))\" />\n"
            body += "    <int name=\"i\(index)\" value=\"\(index - 2500)\" />\n"
            body += "    <long name=\"l\(index)\" value=\"\(index * 1_000_000_007)\" />\n"
            body += "    <float name=\"f\(index)\" value=\"\(Float(index) / 7)\" />\n"
            body +=
                "    <set name=\"s\(index)\">\n        <string>a\(index)</string>\n        <string>é\(index)</string>\n    </set>\n"
        }
        let good = Data(xml(body).utf8)
        #expect(expectSame(good, "30,000 entries"))
        #expect((try? SharedPreferencesReader.read(good, path: "big.xml"))?.count == 30_000)
        #expect(
            expectSame(Data(xml(body + "    <int name=\"bad\" value=\"x\" />").utf8), "an error after 30,000 entries"))
        #expect(
            expectSame(
                Data(xml(body + "    <int name=\"bad\" value=\"1\">text</int>").utf8), "text after 30,000 entries"))
        #expect(expectSame(Data(xml(body + "</string>").utf8), "an ill-formed end after 30,000 entries"))
    }

    // MARK: What streaming newly risks

    @Test(
        "text that libxml2 hands over in many pieces is joined exactly: long, non-ASCII, references and CDATA between")
    func textInPieces() throws {
        var expected = ""
        var escaped = ""
        for index in 0..<3000 {
            let part = "é日😀\(index)"
            expected += part + "<&>\"'A\n"
            escaped += part + "&lt;&amp;&gt;&quot;&apos;&#65;<![CDATA[\n]]>"
        }
        let ascii = String(repeating: "abcdefghij", count: 50_000)
        let wrapped = String(repeating: "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=\n    ", count: 20_000)
        let data = Data(
            xml(
                "<string name=\"s\">\(escaped)</string><string name=\"a\">\(ascii)</string><set name=\"t\"><string>\(escaped)</string><string>\(wrapped)</string></set>"
            )
            .utf8)
        let entries = try SharedPreferencesReader.read(data, path: "pieces.xml")
        #expect(entries.count == 3)
        guard entries.count == 3, case .string(let first) = entries[0].value,
            case .string(let second) = entries[1].value,
            case .stringSet(let strings) = entries[2].value
        else { return }
        #expect(Array(first.unicodeScalars) == Array(expected.unicodeScalars))
        #expect(second == ascii)
        #expect(
            strings.map { Array($0.unicodeScalars) } == [Array(expected.unicodeScalars), Array(wrapped.unicodeScalars)])
        #expect(expectSame(data, "text in pieces"))
        // Loose text in many pieces is one text node, named by the line of its first piece.
        let loose = Data(xml("<string name=\"a\">v</string>\n\n" + String(repeating: "é&amp;\n", count: 2000)).utf8)
        #expect(streaming(loose).hasSuffix("line 5: unexpected text or content inside <map>\""))
        #expect(expectSame(loose, "loose text in pieces"))
    }

    @Test("the first problem in document order is the error; an ill-formed document wins over any of them")
    func errorsAfterTheFirst() {
        func message(_ body: String) -> String { streaming(Data(xml(body).utf8)) }
        #expect(message("<x/>\n<string>no name</string>").contains("line 3: unknown element <x>"))
        #expect(message("<string>no name</string>\n<x/>").contains("line 3: <string> has no name attribute"))
        // A number's value is checked after its children, as a walk over the tree does.
        #expect(
            message("<int name=\"n\" value=\"bad\">\n<x/></int>").contains(
                "line 4: <int> holds an element; it must be empty"))
        #expect(
            message("<int name=\"n\" value=\"bad\">\n</int>\nx").contains(
                "line 3: the value of <int> is not a valid int"))
        // Whatever was found first, a document that turns out ill-formed is refused as such.
        #expect(
            message("<x/>\n<string name=\"s\">v</int>").contains(
                "not a well-formed XML file: an end tag does not match its start tag"))
        #expect(message("<x/>\n&undeclared;").contains("reference to an undeclared entity"))
        // Nothing after the first problem is read: a later entry's problem never replaces it.
        let many = (0..<2000).map { "<int name=\"n\($0)\" value=\"\($0)\" />" }.joined(separator: "\n")
        #expect(
            message(many + "\n<int name=\"x\" value=\"x\" />\n<y/>\n<string/>").contains(
                "line 2003: the value of <int> is not a valid int"))
    }

    @Test("lines past 65,535 are the element's own, where the tree named a neighbouring node's")
    func linesPastTheShortLimit() {
        let lines = String(repeating: "\n", count: 70_000)
        // A text node keeps its exact line in libxml2's tree, so both agree.
        let text = Data("<map>\(lines)x<int name=\"n\" value=\"1\"/></map>".utf8)
        #expect(expectSame(text, "text past line 65,535"))
        #expect(streaming(text).contains("line 70001: unexpected text or content inside <map>"))
        // An element past line 65,535 has no line of its own in libxml2's tree: the walk named its first child's,
        // else its next sibling's, else its previous sibling's. The streaming reader names the element's.
        let element = Data("<map>\(lines)<int name=\"n\" value=\"x\" />\n\n</map>".utf8)
        #expect(streaming(element).contains("line 70001: the value of <int> is not a valid int"))
        #expect(tree(element).contains("line 70003: the value of <int> is not a valid int"))
        let last = Data("<map>\(lines)<int name=\"n\" value=\"x\" /></map>".utf8)
        #expect(expectSame(last, "a last element past line 65,535"))
    }

    @Test(
        "a text node past libxml2's 10 MB tree limit is read whole, and what follows it too (a tree cut it short and dropped the rest)",
        .timeLimit(.minutes(2)))
    func textNodeLimit() throws {
        let limit = 10_000_000
        func document(_ body: String) -> Data { Data(xml(body).utf8) }
        func read(_ data: Data) throws -> [String] {
            try SharedPreferencesReader.read(data, path: "big.xml").map { entry in
                switch entry.value {
                case .string(let text): "\(entry.name)=\(text.utf8.count)"
                case .stringSet(let strings):
                    "\(entry.name)=" + strings.map { "\($0.utf8.count)" }.joined(separator: ",")
                default: "\(entry.name)=\(entry.value)"
                }
            }
        }
        let big = String(repeating: "a", count: limit - 4)
        // In pieces (the reference is one), past the limit: all of it, and the entry after it.
        let pastLimit = document("<string name=\"s\">" + big + "&amp;bbbb</string>\n<string name=\"t\">kept</string>")
        #expect(try read(pastLimit) == ["s=\(limit + 1)", "t=4"])
        #expect(tree(pastLimit).hasPrefix("\"s\" = string") && !tree(pastLimit).contains("\"t\" = "))
        let inSet = document(
            "<set name=\"t\"><string>x</string><string>" + big + "&amp;bbbb</string><string>y</string></set>")
        #expect(try read(inSet) == ["t=1,\(limit + 1),1"])
        let cdata = document(
            "<string name=\"s\"><![CDATA[" + String(repeating: "c", count: 6_000_000) + "]]><![CDATA["
                + String(repeating: "c", count: 6_000_000) + "]]></string>")
        #expect(try read(cdata) == ["s=12000000"])
        let space = document(
            String(repeating: " ", count: 6_000_000) + "&#32;" + String(repeating: " ", count: 6_000_000)
                + "<int name=\"n\" value=\"1\"/>")
        #expect(try read(space) == ["n=\(PreferenceValue.int(1))"])
        // Text that is not white space where only elements may be is refused, however long.
        let inInt = document("<int name=\"n\" value=\"1\">\n" + big + "&amp;bbbb</int>")
        #expect(streaming(inInt).contains("line 4: unexpected text or content inside <int>"))
    }

    @Test(
        "libxml2's tree builder checks xml:id values: streaming reads as the tree does, and an ill-formed document reports its fatal error"
    )
    func xmlIDs() {
        let invalid = Data(xml("<string name=\"s\" xml:id=\"1\">v</string>\n<string name=\"t\">v</int>").utf8)
        #expect(expectSame(invalid, "an xml:id that is not a name"))
        #expect(
            streaming(invalid).contains(
                "line 4: not a well-formed XML file: an end tag does not match its start tag (libxml2 error 76)"))
        let twice = Data(
            xml("<string name=\"s\" xml:id=\"a\">v</string>\n<int name=\"i\" value=\"1\" xml:id=\"a\"/>\n</x>").utf8)
        #expect(expectSame(twice, "an xml:id twice"))
        #expect(
            streaming(twice).contains(
                "line 5: not a well-formed XML file: an end tag does not match its start tag (libxml2 error 76)"))
        // In a well-formed document they change nothing.
        let wellFormed = Data(
            xml("<string name=\"s\" xml:id=\"1\">v</string><string name=\"t\" xml:id=\"1\">w</string>").utf8)
        #expect(expectSame(wellFormed, "xml:ids in a well-formed document"))
        #expect(streaming(wellFormed) == "\"s\" = string \"v\"\n\"t\" = string \"w\"")
    }
}

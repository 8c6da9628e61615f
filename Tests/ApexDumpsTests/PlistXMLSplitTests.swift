import Foundation
import Testing

@testable import ApexDumps

/// A large XML plist is parsed in pieces on several cores (``PlistXMLSplit``). The value must be the one the
/// whole document parses to, and any error the one the whole document gives: pinned here by comparing the two
/// parses on awkward documents, cut everywhere, and on thousands of mutations of them.
@Suite("XML plist split parse")
struct PlistXMLSplitTests {
    /// The value exactly as parsed: dictionary entries in file order, repeated keys kept (the canonical text
    /// of the other tests sorts entries and keeps one per key, which would hide a splice in the wrong entry).
    static func exact(_ node: PlistNode) -> String {
        switch node {
        case .array(let elements): "[" + elements.map(exact).joined(separator: ",") + "]"
        case .dictionary(let dictionary):
            "{" + dictionary.entries.map { exact($0.key) + ":" + exact($0.value) }.joined(separator: ",") + "}"
        default: PlistCanonical.text(node)
        }
    }

    /// The exact text of the value a parse gives, or its error message.
    static func outcome(_ data: Data, _ splitting: PlistXMLParser.Splitting?) -> String {
        do throws(PlistParseError) {
            return exact(try PlistXMLParser.parse(data, splitting: splitting))
        } catch {
            return "error: " + error.message
        }
    }

    static func plan(_ xml: String, pieces: Int = 4, granularity: Int = 1) -> PlistXMLSplit? {
        Data(xml.utf8).withUnsafeBytes { PlistXMLSplit.plan($0, pieces: pieces, granularity: granularity) }
    }

    /// The canonical text of the value the pieces of `xml` parse to, without falling back to a whole parse; nil
    /// when the document is not cut or a piece fails.
    static func piecesOutcome(_ xml: String, pieces: Int = 4) -> String? {
        guard let plan = plan(xml, pieces: pieces) else { return nil }
        return PlistXMLParser.parse(Data(xml.utf8), plan).map(exact)
    }

    /// Item `index` of a generated dump, varied: strings, data, dates, integers, booleans, nested containers.
    static func item(_ index: Int) -> String {
        var xml = "\t\t<dict>\n\t\t\t<key>svce</key>\n\t\t\t<string>service-\(index % 7) &amp; more</string>\n"
        xml += "\t\t\t<key>acct</key>\n\t\t\t<data>\(Data("account-\(index)".utf8).base64EncodedString())</data>\n"
        xml += "\t\t\t<key>cdat</key>\n\t\t\t<date>2024-03-01T09:30:\(String(format: "%02d", index % 60))Z</date>\n"
        xml += "\t\t\t<key>sync</key>\n\t\t\t<integer>\(index % 2)</integer>\n"
        if index % 3 == 0 { xml += "\t\t\t<key>flag</key>\n\t\t\t<true/>\n" }
        if index % 5 == 0 {
            xml +=
                "\t\t\t<key>nested</key>\n\t\t\t<array><dict><key>a</key><real>1.5</real></dict><array/><false/></array>\n"
        }
        return xml + "\t\t</dict>\n"
    }

    static func items(_ range: Range<Int>) -> String { range.map(item).joined() }

    static let prolog = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">

        """

    /// A document with what a byte-level scan could stumble on: markup-like text in comments, CDATA, processing
    /// instructions, quoted root attributes and escaped text; items that are empty, not dictionaries, or hold
    /// containers; comments and instructions between items.
    static let awkward =
        prolog + """
            <!-- before the root: </dict></array><dict> > -->
            <plist version="1.0" note='a > b "q" /' other="x/>y">
            <dict>
            \t<key>keybag-uuid</key><data>AAEC</data>
            \t<key>genp</key>
            \t<array>
            \(items(0..<6))\t\t<!-- between items: </dict></array></plist> -->
            \t\t<?pi </array> > ?>
            \t\t<dict><key>svce</key><string><![CDATA[</dict></array><dict> ]]]]></string></dict>
            \t\t<dict/>
            \t\t<true/>
            \t\t<string>text &lt;/dict&gt; &#60;/array&#62;</string>
            \t\t<array><dict/><dict><key>k</key><string>v</string></dict></array>
            \(items(6..<14))\t</array>
            \t<key>inet</key>
            \t<array>
            \(items(100..<103))\t</array>
            </dict>
            </plist>
            <!-- after the root -->
            <?after it?>

            """

    /// A dump as tools write it: the array form, or the dictionary form by class.
    static func dump(_ count: Int, byClass: Bool) -> String {
        if byClass {
            return prolog
                + "<plist version=\"1.0\">\n<dict>\n\t<key>genp</key>\n\t<array>\n\(items(0..<count))\t</array>\n"
                + "\t<key>inet</key>\n\t<array>\n\(items(0..<3))\t</array>\n</dict>\n</plist>\n"
        }
        return prolog + "<plist version=\"1.0\">\n<array>\n\(items(0..<count))</array>\n</plist>\n"
    }

    // MARK: The plan

    @Test("a dump is cut between items into pieces of about equal size that together cover the array")
    func piecesCoverTheArray() throws {
        let xml = Self.dump(1000, byClass: false)
        let plan = try #require(Self.plan(xml, pieces: 4, granularity: 1))
        let bytes = Array(xml.utf8)
        let arrayStart = try #require(xml.utf8.firstRange(of: "<array>".utf8)).upperBound
        let arrayEnd = try #require(xml.utf8.ranges(of: "</array>".utf8).last).lowerBound
        #expect(plan.pieces.count == 4)
        #expect(plan.pieces.first?.lowerBound == xml.utf8.distance(from: xml.utf8.startIndex, to: arrayStart))
        #expect(plan.pieces.last?.upperBound == xml.utf8.distance(from: xml.utf8.startIndex, to: arrayEnd))
        for (piece, next) in zip(plan.pieces, plan.pieces.dropFirst()) {
            #expect(piece.upperBound == next.lowerBound)
            #expect(Array(bytes[piece.upperBound - 7..<piece.upperBound]) == Array("</dict>".utf8))
        }
        #expect(plan.counts.reduce(0, +) == 1000)
        let sizes = plan.pieces.map(\.count)
        let smallest = try #require(sizes.min())
        let largest = try #require(sizes.max())
        #expect(largest < 2 * smallest)
        for (piece, count) in zip(plan.pieces, plan.counts) {
            let text = String(decoding: bytes[piece], as: UTF8.self)
            #expect(text.components(separatedBy: "\t\t<dict>\n").count - 1 == count)
        }
        #expect(plan.rootIsPlist)
        #expect(plan.containers == 1)
        #expect(plan.path.isEmpty)
        #expect(Self.outcome(Data(xml.utf8), .init(pieces: 4, granularity: 1)) == Self.outcome(Data(xml.utf8), nil))
    }

    @Test("the array cut is the one with the most bytes, found by its place in the tree")
    func whereTheArrayIs() throws {
        let byClass = try #require(Self.plan(Self.dump(200, byClass: true)))
        #expect(byClass.path == [0])
        #expect(byClass.containers == 2)
        #expect(byClass.rootIsPlist)

        let awkward = try #require(Self.plan(Self.awkward))
        #expect(awkward.path == [1])
        #expect(awkward.containers == 2)
        #expect(awkward.counts.reduce(0, +) == 19)  // 6 generated, 5 awkward, 8 generated

        let bare = "<array><string>a</string>\(Self.items(0..<50))</array>"
        let barePlan = try #require(Self.plan(bare))
        #expect(!barePlan.rootIsPlist)
        #expect(barePlan.containers == 1)
        #expect(barePlan.path.isEmpty)

        let deep =
            "<plist><array><string/><dict><key>a</key><true/><key>b</key><array>\(Self.items(0..<40))</array></dict></array></plist>"
        let deepPlan = try #require(Self.plan(deep))
        #expect(deepPlan.path == [1, 1])
        #expect(deepPlan.containers == 3)

        for xml in [Self.dump(200, byClass: true), Self.awkward, bare, deep] {
            #expect(Self.outcome(Data(xml.utf8), .init(pieces: 3, granularity: 1)) == Self.outcome(Data(xml.utf8), nil))
        }
    }

    @Test("documents that cutting could change, or that the scan does not understand, are not cut")
    func noPlan() {
        let items = Self.items(0..<20)
        let refused = [
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><plist><array>\(items)</array></plist>",
            "<?xml version=\"1.1\"?><plist><array>\(items)</array></plist>",
            "<?xml version=\"1.0\" other=\"x\"?><plist><array>\(items)</array></plist>",
            "<!DOCTYPE plist [<!ENTITY e \"x\">]><plist><array>\(items)</array></plist>",
            "<plist><array>\(items)<dict id=\"1\"></dict></array></plist>",
            "<plist xmlns:p=\"urn:x\"><array>\(items)<p:dict></p:dict></array></plist>",
            "<plist><array>\(items)<other/></array></plist>",
            "<plist><array>\(items)<string><b/></string></array></plist>",
            "<plist><array>\(items)</array></plist><plist/>",
            "<plist><array>\(items)</array>",
            "<plist><array>\(items)</array></plist></plist>",
            "<plist><array>\(items)<!-- unterminated </array></plist>",
            "<plist><array>\(items)<plist/></array></plist>",
            "<string>\(items)</string>",
            "<plist><dict><key>a</key><string>b</string></dict></plist>",
            "<plist><array><dict/></array></plist>",
        ]
        for xml in refused {
            #expect(Self.plan(xml) == nil, "\(xml.prefix(60))…")
        }
        // UTF-16 is never cut.
        var utf16 = Data([0xFF, 0xFE])
        utf16.append(("<plist><array>\(items)</array></plist>").data(using: .utf16LittleEndian)!)
        #expect(utf16.withUnsafeBytes { PlistXMLSplit.plan($0, pieces: 4, granularity: 1) } == nil)
        // Items closer together than the granularity are not cut.
        #expect(Self.plan("<plist><array>\(items)</array></plist>", granularity: 100_000) == nil)
    }

    // MARK: The same value and the same error

    @Test("cut into any number of pieces, at any item, the value is the whole document's")
    func sameValueEverywhere() throws {
        var documents = [Self.awkward, Self.dump(60, byClass: false), Self.dump(60, byClass: true)]
        for name in [
            "generated-ios/keychain-by-class.plist", "generated/expo-secure-store/ios/keychain.plist",
            "generated/react-native-keychain/ios/keychain.plist",
        ] {
            let url = try #require(Bundle.module.resourceURL).appendingPathComponent("Fixtures/\(name)")
            documents.append(String(decoding: try Data(contentsOf: url), as: UTF8.self))
        }
        for xml in documents {
            let data = Data(xml.utf8)
            let whole = Self.outcome(data, nil)
            #expect(!whole.hasPrefix("error"))
            let total = try #require(Self.plan(xml, pieces: 2)?.counts.reduce(0, +))
            for pieces in Array(2...6) + [total] {
                // The pieces themselves give the value, with no whole parse to fall back on.
                #expect(Self.piecesOutcome(xml, pieces: pieces) == whole, "\(pieces) pieces")
                #expect(Self.outcome(data, .init(pieces: pieces, granularity: 1)) == whole, "\(pieces) pieces")
            }
            // A document that is a slice of a larger buffer is cut by its own offsets.
            let sliced = (Data("junk".utf8) + data).dropFirst(4)
            #expect(Self.outcome(sliced, .init(pieces: 3, granularity: 1)) == whole)
        }
    }

    @Test("a `]]>` in a piece's text fails the piece wherever it falls (libxml2 misses it across a callback read)")
    func textEndingCDATA() {
        // One piece per item: the string's piece is `<plist><array>`, the item, `</array></plist>`, so sliding
        // the padding moves the `]]>` across offset 4000, where a read through libxml2's callback would end.
        for padding in 3960..<4010 {
            let xml =
                "<plist><array>\(Self.items(0..<3))<string>\(String(repeating: "a", count: padding))]]>q</string>"
                + "\(Self.items(3..<6))</array></plist>"
            let data = Data(xml.utf8)
            let whole = Self.outcome(data, nil)
            #expect(whole.hasPrefix("error"))
            #expect(Self.piecesOutcome(xml, pieces: 7) == nil, "padding \(padding)")
            #expect(Self.outcome(data, .init(pieces: 7, granularity: 1)) == whole, "padding \(padding)")
        }
    }

    @Test("an error in any piece gives the whole document's error and line")
    func sameErrorEverywhere() {
        let before = Self.items(0..<10)
        let after = Self.items(10..<20)
        let broken = [
            "<dict><key>a</key></dict>",  // a key without a value
            "<dict><string>x</string></dict>",  // a value without a key
            "<integer>12x</integer>",
            "<date>yesterday</date>",
            "<dict><key>a</key><string>x</strin></dict>",  // not well-formed
            "<dict><key>a</key><string>&undeclared;</string></dict>",
            "stray text",
        ]
        for fault in broken {
            for place in 0..<3 {
                var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<array>\n"
                xml +=
                    place == 0 ? fault + before + after : place == 1 ? before + fault + after : before + after + fault
                xml += "</array>\n</plist>\n"
                let data = Data(xml.utf8)
                let whole = Self.outcome(data, nil)
                #expect(whole.hasPrefix("error"), "\(fault)")
                #expect(Self.outcome(data, .init(pieces: 4, granularity: 1)) == whole, "\(fault) at \(place)")
            }
        }
        // An error in the document around the array (the first piece) too.
        let outside = "<plist><array>\(before)\(after)</array><string>second value</string></plist>"
        #expect(
            Self.outcome(Data(outside.utf8), .init(pieces: 4, granularity: 1)) == Self.outcome(Data(outside.utf8), nil))
    }

    @Test("names that overflow libxml2's dictionary in the whole document, but in no piece, fail as the whole does")
    func dictionaryLimit() throws {
        // Every processing-instruction target is a name of its own in libxml2's dictionary, capped at 10 MB a parse.
        var xml = "<plist><array>"
        for index in 0..<340 { xml += "<?p\(index)" + String(repeating: "a", count: 31_000) + "?><string/>" }
        xml += "</array></plist>"
        let data = Data(xml.utf8)
        let whole = Self.outcome(data, nil)
        #expect(
            whole
                == "error: the file is \(PlistParseError(.xmlMalformed).what) (line 1: not well-formed (libxml2 error 46))"
        )
        let plan = try #require(Self.plan(xml, pieces: 2))
        // Each piece alone parses: only the dictionaries' size tells the pieces' value apart from the whole's.
        let pieces = (0..<plan.pieces.count).map { try? PlistXMLParser.parseCounting(plan.document($0, of: data)) }
        #expect(pieces.allSatisfy { $0 != nil })
        #expect(pieces.reduce(0) { $0 + ($1?.dictionaryBytes ?? 0) } > PlistXMLParser.dictionaryBudget)
        #expect(PlistXMLParser.parse(data, plan) == nil)
        #expect(Self.outcome(data, .init(pieces: 2, granularity: 1)) == whole)
        // A plist's own names take little room.
        let dump = Self.dump(200, byClass: true)
        let small = try? PlistXMLParser.parseCounting(Data(dump.utf8)).dictionaryBytes
        #expect((small ?? .max) < 16_384)
    }

    @Test("items sit as deep in their piece as in the document: nesting limits are met at the same level")
    func nestingLimits() {
        // Items in the class array sit in <plist><dict><array>: the deepest container inside an item that the
        // whole document reads is at depth maxNesting, and one more is refused, with its line.
        for extra in [0, 1] {
            let levels = PlistNode.maxNesting - 3 + extra
            let deepItem =
                "<dict><key>n</key>" + String(repeating: "<array>", count: levels)
                + String(repeating: "</array>", count: levels) + "</dict>\n"
            let xml =
                "<plist><dict><key>genp</key><array>\n\(Self.items(0..<10))\(deepItem)\(Self.items(10..<20))</array></dict></plist>"
            let data = Data(xml.utf8)
            let whole = Self.outcome(data, nil)
            #expect(whole.hasPrefix("error") == (extra == 1))
            // The piece holding the deep item reads it exactly when the whole document does.
            #expect(Self.piecesOutcome(xml) == (extra == 1 ? nil : whole))
            #expect(Self.outcome(data, .init(pieces: 4, granularity: 1)) == whole)
        }
    }

    @Test("thousands of mutations of an awkward document parse the same cut and whole")
    func mutations() {
        var generator = DumpTestRandom(seed: 0x5EED_5117)
        let original = Array(Self.awkward.utf8)
        let alphabet = Array("<>/!?-[]&;\"' =\n\tadkeyrstngui".utf8)
        var cut = 0
        var cutAndRead = 0
        for round in 0..<3000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[index] = alphabet.randomElement(using: &generator)!
                case 1: bytes.remove(at: index)
                case 2: bytes.insert(alphabet.randomElement(using: &generator)!, at: index)
                default:
                    // Move a run of bytes elsewhere: whole elements change places.
                    let length = min(Int.random(in: 1...40, using: &generator), bytes.count - index)
                    let run = Array(bytes[index..<index + length])
                    bytes.removeSubrange(index..<index + length)
                    bytes.insert(contentsOf: run, at: Int.random(in: 0...bytes.count, using: &generator))
                }
            }
            let data = Data(bytes)
            let whole = Self.outcome(data, nil)
            for pieces in [2, 5] {
                let split = Self.outcome(data, .init(pieces: pieces, granularity: 1))
                #expect(split == whole, "round \(round), \(pieces) pieces")
            }
            if data.withUnsafeBytes({ PlistXMLSplit.plan($0, pieces: 5, granularity: 1) }) != nil {
                cut += 1
                if !whole.hasPrefix("error") { cutAndRead += 1 }
            }
        }
        // Many mutants are still cut, so the comparison above runs the pieces, and many of those read.
        #expect(cut > 600)
        #expect(cutAndRead > 150)
    }
}

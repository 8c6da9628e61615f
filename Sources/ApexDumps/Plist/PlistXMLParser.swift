import CLibXML2
import Foundation

/// Parses an XML property list with libxml2 into a ``PlistNode`` tree.
///
/// The document is a `<plist>` root holding one value (a bare value element as the root is also read), where a
/// value is `<string>`, `<data>` (Base64, strictly: see ``base64(_:)``; text that is not is ``PlistNode/damagedData(_:)``),
/// `<date>` (ISO 8601), `<integer>` (decimal, or hexadecimal after `0x`), `<real>`, `<true/>`, `<false/>`,
/// `<array>` or `<dict>` (`<key>` and value elements in turn). Text is taken as libxml2 unescaped it; comments and
/// processing instructions are skipped everywhere.
///
/// The parse streams: libxml2's SAX2 callbacks build the values on an explicit stack as the elements end, and no
/// DOM is ever allocated. The checks and their order are those of a walk over the finished document: libxml2's
/// own errors (a document that is not well-formed) come first, then, in a `<plist>` root, what is wrong among the
/// root's children, then the first problem inside its value in document order. A large document is cut between
/// items and its pieces parsed on every core (see ``PlistXMLSplit``), with the same value or the same error as
/// one parse.
///
/// The input is untrusted. libxml2 reads it without network access, without entity substitution and without
/// loading the DTD that the usual `<!DOCTYPE plist …>` names; a document whose DOCTYPE declares anything (an
/// entity, element, attribute list or notation) is refused as soon as the declaration is seen, which answers
/// entity-expansion and external-entity attacks. libxml2 limits element nesting to 256 levels and prints
/// nothing: its errors are kept in the parse state and turned into ``PlistParseError`` values that name a line,
/// never a value. The safety setup is that of ``SafeXML/parse(_:documentTypes:user:content:)`` with
/// ``SafeXML/DocumentTypes/bareOnly`` (its options, refusing callbacks and silenced thread handler), around this
/// parser's own content callbacks.
enum PlistXMLParser {
    /// How a document is cut to be parsed on several cores (see ``PlistXMLSplit``): into up to `pieces` pieces,
    /// between items at least `granularity` bytes apart.
    struct Splitting {
        var pieces: Int
        var granularity: Int

        /// Pieces of at least 512 KiB, one per core; nil (one piece) on one core or for a smaller document.
        static func automatic(byteCount: Int) -> Splitting? {
            let pieces = min(ProcessInfo.processInfo.activeProcessorCount, byteCount / (512 * 1024))
            guard pieces > 1 else { return nil }
            return Splitting(pieces: pieces, granularity: max(4096, byteCount / (pieces * 64)))
        }
    }

    /// Parses `data`, a document that starts (after a byte order mark and white space) with `<`: a large one in
    /// pieces on the machine's cores, when it can be cut (see ``PlistXMLSplit``), else in one piece.
    static func parse(_ data: Data) throws(PlistParseError) -> PlistNode {
        try parse(data, splitting: .automatic(byteCount: data.count))
    }

    /// Parses `data` in the pieces `splitting` asks for, when it can be cut so; else, or when any piece fails to
    /// parse, in one piece, which gives the error and line of the whole document. The value is the same either
    /// way.
    static func parse(_ data: Data, splitting: Splitting?) throws(PlistParseError) -> PlistNode {
        if let splitting,
            let plan = data.withUnsafeBytes({
                PlistXMLSplit.plan($0, pieces: splitting.pieces, granularity: splitting.granularity)
            }),
            let value = parse(data, plan)
        {
            return value
        }
        return try parseCounting(data).value
    }

    /// The value of `data` parsed in the pieces of `plan` at once, or nil when a piece fails to parse or is not
    /// shaped as the plan says.
    static func parse(_ data: Data, _ plan: PlistXMLSplit) -> PlistNode? {
        // libxml2 2.9 sets itself up on the first call, which must not race with another thread's.
        xmlInitParser()
        let values = concurrentMap(count: plan.pieces.count, minimumChunk: 1) { piece in
            try? parseCounting(plan.document(piece, of: data))
        }
        // libxml2 caps each parse's dictionary of names at 10 MB, which the whole document may reach where no
        // piece does. Every name of the whole is a name of some piece, so when the pieces' dictionaries took at
        // most 1 MiB together, the whole document's names take less, and its dictionary (whose pools grow
        // fourfold) stays far below the cap; else the whole document is parsed, to fail as it would.
        guard values.reduce(0, { $0 + ($1?.dictionaryBytes ?? 0) }) <= Self.dictionaryBudget else { return nil }
        guard let first = values[0]?.value else { return nil }
        var rest: [[PlistNode]] = []
        for piece in 1..<values.count {
            guard let value = values[piece]?.value, let items = plan.items(piece, in: value) else { return nil }
            rest.append(items)
        }
        return plan.joined(first, rest)
    }

    /// The most bytes the pieces' dictionaries of names may take together for their value to be trusted (see
    /// ``parse(_:_:)``): a plist's names fit in the dictionary's first kilobyte.
    static let dictionaryBudget = 1 << 20
}

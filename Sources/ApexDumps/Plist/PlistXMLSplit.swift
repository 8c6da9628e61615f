import Foundation

/// Where a large XML property list can be cut so that its pieces parse on several cores at once.
///
/// A keychain dump is one long array of item dictionaries (or a few, one per class). The plan finds the array
/// whose items let cuts share out the most bytes, and cuts its content between items into pieces of about equal
/// size:
/// - the first piece is the whole document with the other pieces' items cut out;
/// - every other piece is its items inside as many `<array>` elements as there are containers around them in
///   the document, under a `<plist>` when the document has one, so that the items sit exactly as deep as in
///   the document and meet the same nesting limits.
///
/// A plan is made only for documents that cutting can't change: UTF-8 (no byte order mark but UTF-8's, no
/// declared encoding but UTF-8), XML 1.0, a DOCTYPE without an internal subset, the plist tags only, and no
/// attribute except on the root. Entities can't be declared, so a piece reads every reference as the whole
/// document does; prefixed names are refused, so no piece depends on a namespace declared outside it. Anything
/// else, or anything the scan doesn't understand, gives no plan, and the document is parsed in one piece.
///
/// The scan checks no more than it needs to cut between whole elements. Whatever is malformed is found by the
/// parse of the piece that holds it, and then ``PlistXMLParser`` parses the whole document again in one piece
/// for the error and line that parse gives. It does so too when the pieces come near a limit that libxml2
/// counts over a whole parse and that each piece could stay under: the size of its dictionary of names (see
/// ``PlistXMLParser/parse(_:_:)``).
struct PlistXMLSplit: Equatable {
    /// The byte ranges of the pieces' items. The first starts right after the array's start tag, each other
    /// starts right after an item's end tag, and the last ends where the array's end tag starts.
    var pieces: [Range<Int>]
    /// How many items (elements inside the array) each piece holds.
    var counts: [Int]
    /// Whether the document's root element is `<plist>`.
    var rootIsPlist: Bool
    /// How many containers (`<array>` and `<dict>`) enclose the items, the array itself included.
    var containers: Int
    /// Where the array is in the tree: for each container below the root value on the way down to it, the
    /// index of that container in its parent (an entry's index in a dictionary). Empty when the array is the
    /// root value.
    var path: [Int]

    /// The plan for `bytes` in up to `pieces` pieces, cut only at item ends at least `granularity` bytes apart;
    /// nil when the document is not one that can be cut (see the type's documentation) or has no array with
    /// items far enough apart.
    static func plan(_ bytes: UnsafeRawBufferPointer, pieces wanted: Int, granularity: Int) -> PlistXMLSplit? {
        // libxml2 takes at most Int32.max bytes in one buffer, and a whole document longer than that fails.
        guard wanted > 1, bytes.count > 0, bytes.count <= Int(Int32.max) else { return nil }
        var scanner = Scanner(bytes: bytes, granularity: max(1, granularity))
        guard let array = scanner.run() else { return nil }

        // Cut at the first recorded item end past each even share of the array's bytes.
        var pieces: [Range<Int>] = []
        var counts: [Int] = []
        var start = array.contentStart
        var before = 0
        var mark = 0
        for share in 1..<wanted {
            let target = array.contentStart + (array.end - array.contentStart) * share / wanted
            while mark < array.marks.count, array.marks[mark] < target || array.marks[mark] <= start { mark += 1 }
            guard mark < array.marks.count, array.markCounts[mark] < array.total else { break }
            pieces.append(start..<array.marks[mark])
            counts.append(array.markCounts[mark] - before)
            start = array.marks[mark]
            before = array.markCounts[mark]
        }
        guard !pieces.isEmpty else { return nil }
        pieces.append(start..<array.end)
        counts.append(array.total - before)
        return PlistXMLSplit(
            pieces: pieces, counts: counts, rootIsPlist: scanner.rootIsPlist, containers: array.containers,
            path: array.path)
    }

    /// The document of piece `index` of `data`, as the ranges libxml2 reads in turn (``XMLChunkedInput``): slices
    /// of `data`, which share its bytes, and the wrapping tags.
    func document(_ index: Int, of data: Data) -> [Data] {
        if index == 0 {
            // The document up to the end of the first piece's items, then from the array's end tag on.
            return [
                data[data.startIndex..<data.startIndex + pieces[0].upperBound],
                data[(data.startIndex + pieces[pieces.count - 1].upperBound)...],
            ]
        }
        let open = (rootIsPlist ? "<plist>" : "") + String(repeating: "<array>", count: containers)
        let close = String(repeating: "</array>", count: containers) + (rootIsPlist ? "</plist>" : "")
        let range = pieces[index]
        return [
            Data(open.utf8), data[(data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)],
            Data(close.utf8),
        ]
    }

    /// The items of piece `index` (not the first) from the value its document parsed to: the innermost of the
    /// wrapping arrays; nil when the value is not shaped so or holds another count of items.
    func items(_ index: Int, in value: PlistNode) -> [PlistNode]? {
        var node = value
        for _ in 1..<containers {
            guard case .array(let elements) = node, elements.count == 1 else { return nil }
            node = elements[0]
        }
        guard case .array(let elements) = node, elements.count == counts[index] else { return nil }
        return elements
    }

    /// The first piece's tree with every piece's items in the array, in order; nil when the array is not where
    /// the plan says or holds another count of items.
    func joined(_ first: PlistNode, _ rest: [[PlistNode]]) -> PlistNode? {
        var root = first
        let joined = Self.modifyArray(&root, at: path[...]) { elements in
            guard elements.count == counts[0] else { return false }
            elements.reserveCapacity(counts.reduce(0, +))
            for items in rest { elements.append(contentsOf: items) }
            return true
        }
        return joined ? root : nil
    }

    /// Runs `body` on the elements of the array at `path` inside `node`, modified in place (the tree's containers
    /// along the path are taken out of it while they change, so that no array is copied).
    private static func modifyArray(
        _ node: inout PlistNode, at path: ArraySlice<Int>, _ body: (inout [PlistNode]) -> Bool
    ) -> Bool {
        switch node {
        case .array(var elements):
            node = .null
            defer { node = .array(elements) }
            guard let index = path.first else { return body(&elements) }
            guard elements.indices.contains(index) else { return false }
            return modifyArray(&elements[index], at: path.dropFirst(), body)
        case .dictionary(var dictionary):
            node = .null
            defer { node = .dictionary(dictionary) }
            guard let index = path.first, dictionary.entries.indices.contains(index) else { return false }
            return modifyArray(&dictionary.entries[index].value, at: path.dropFirst(), body)
        default:
            return false
        }
    }
}

// MARK: The scan

extension PlistXMLSplit {
    /// The array found to cut: where its content starts and ends, its items, and the item ends recorded.
    fileprivate struct Candidate {
        var contentStart: Int
        var end: Int
        var total: Int
        /// Offsets right after item end tags, at least the granularity apart, and how many items end by each.
        var marks: [Int]
        var markCounts: [Int]
        /// The bytes that cuts can share out (see ``Scanner/consider(_:end:)``).
        var shared: Int
        var containers: Int
        var path: [Int]
    }

    /// What an element is to the scan.
    fileprivate enum Kind {
        case plist, array, dict, text
    }

    /// An open `<plist>` root or container.
    fileprivate struct Open {
        var kind: Kind
        /// Its index in the container that holds it (an entry's index in a dictionary).
        var index: Int
        /// Where its content starts, how many elements it holds so far, and (for an array) the item ends
        /// recorded.
        var contentStart: Int
        var children = 0
        var marks: [Int] = []
        var markCounts: [Int] = []
    }

    /// A byte-level pass over the document that tracks open elements and nothing else.
    fileprivate struct Scanner {
        let bytes: Bytes
        let granularity: Int
        /// The open root and containers; a key or scalar element open inside the innermost is `inText`.
        var open: [Open] = []
        var inText = false
        var rootSeen = false
        var rootIsPlist = false
        var best: Candidate?

        init(bytes: UnsafeRawBufferPointer, granularity: Int) {
            self.bytes = Bytes(reader: ByteReader(bytes))
            self.granularity = granularity
        }

        /// The array whose cuts can share out the most bytes (see ``consider(_:end:)``), or nil when the document
        /// can't be cut.
        mutating func run() -> Candidate? {
            // UTF-16 is never cut (a piece would be read as UTF-8).
            guard !bytes.starts(with: [0xFE, 0xFF]), !bytes.starts(with: [0xFF, 0xFE]) else { return nil }
            var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            if bytes.starts(with: "<?xml", at: index), let after = bytes[index + 5], bytes.isSpace(after) {
                guard let end = bytes.find("?>", from: index + 5), declarationIsPlain(index + 5..<end) else {
                    return nil
                }
                index = end + 2
            }
            while let less = bytes.find(UInt8(ascii: "<"), from: index) {
                guard let next = bytes[less + 1] else { return nil }
                switch next {
                case UInt8(ascii: "/"):
                    guard let greater = bytes.find(UInt8(ascii: ">"), from: less + 2) else { return nil }
                    index = greater + 1
                    if inText {
                        inText = false
                    } else {
                        guard let closed = open.popLast() else { return nil }
                        if closed.kind == .array { consider(closed, end: less) }
                    }
                    ended(at: index)
                case UInt8(ascii: "?"):
                    guard let end = bytes.find("?>", from: less + 2) else { return nil }
                    index = end + 2
                case UInt8(ascii: "!"):
                    guard let next = markup(at: less) else { return nil }
                    index = next
                default:
                    guard !inText, let next = startTag(at: less) else { return nil }
                    index = next
                }
            }
            guard rootSeen, open.isEmpty, !inText else { return nil }
            return best
        }

        /// A comment, CDATA section or DOCTYPE at `less`; the offset after it, or nil for anything else.
        private func markup(at less: Int) -> Int? {
            if bytes.starts(with: "<!--", at: less) {
                return bytes.find("-->", from: less + 4).map { $0 + 3 }
            }
            if bytes.starts(with: "<![CDATA[", at: less) {
                return bytes.find("]]>", from: less + 9).map { $0 + 3 }
            }
            guard bytes.starts(with: "<!DOCTYPE", at: less), !rootSeen else { return nil }
            // A bare DOCTYPE: quoted identifiers, and no internal subset.
            var index = less + 9
            while let byte = bytes[index] {
                switch byte {
                case UInt8(ascii: ">"): return index + 1
                case UInt8(ascii: "["): return nil
                case UInt8(ascii: "\""), UInt8(ascii: "'"):
                    guard let close = bytes.find(byte, from: index + 1) else { return nil }
                    index = close + 1
                default: index += 1
                }
            }
            return nil
        }

        /// A start tag at `less`: the element is opened (or, written `<name/>`, opened and ended); the offset
        /// after the tag, or nil when the element is not one the plan allows.
        private mutating func startTag(at less: Int) -> Int? {
            var index = less + 1
            while let byte = bytes[index], !bytes.isSpace(byte), byte != UInt8(ascii: "/"), byte != UInt8(ascii: ">") {
                index += 1
            }
            guard let kind = kind(less + 1..<index) else { return nil }
            let isRoot = !rootSeen
            // Only the root may have attributes, and the scan steps over their quoted values.
            while let byte = bytes[index], byte != UInt8(ascii: ">") {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    guard isRoot, let close = bytes.find(byte, from: index + 1) else { return nil }
                    index = close
                } else if !isRoot, !bytes.isSpace(byte), byte != UInt8(ascii: "/") {
                    return nil
                }
                index += 1
            }
            guard index < bytes.count else { return nil }
            let empty = bytes[index - 1] == UInt8(ascii: "/")
            let after = index + 1

            var position = 0
            if let parent = open.indices.last {
                guard kind != .plist else { return nil }
                position = open[parent].kind == .dict ? open[parent].children / 2 : open[parent].children
                open[parent].children += 1
            } else {
                // One root, and one that can hold an array.
                guard isRoot, kind != .text else { return nil }
                rootSeen = true
                rootIsPlist = kind == .plist
            }
            if empty {
                ended(at: after)
            } else if kind == .text {
                inText = true
            } else {
                open.append(Open(kind: kind, index: position, contentStart: after))
            }
            return after
        }

        /// An element inside the innermost open one ended right before `offset`: recorded when that is an array
        /// and the last record is at least the granularity back.
        private mutating func ended(at offset: Int) {
            guard let top = open.indices.last, open[top].kind == .array else { return }
            guard offset - (open[top].marks.last ?? open[top].contentStart) >= granularity else { return }
            open[top].marks.append(offset)
            open[top].markCounts.append(open[top].children)
        }

        /// An array that closed at `end` (its end tag's `<`), kept when it has the most bytes that cuts can share
        /// out so far: its bytes less the longest stretch between two recorded item ends (or its start or end),
        /// which no cut divides.
        private mutating func consider(_ array: Open, end: Int) {
            var longest = end - (array.marks.last ?? array.contentStart)
            var previous = array.contentStart
            for mark in array.marks {
                longest = max(longest, mark - previous)
                previous = mark
            }
            let shared = end - array.contentStart - longest
            guard shared > (best?.shared ?? 0) else { return }
            let values = open.filter { $0.kind != .plist }
            best = Candidate(
                contentStart: array.contentStart, end: end, total: array.children, marks: array.marks,
                markCounts: array.markCounts, shared: shared, containers: values.count + 1,
                path: values.isEmpty ? [] : values.dropFirst().map(\.index) + [array.index])
        }

        /// The plist tags, each name packed into a word as ``Bytes/packed(_:)`` packs it.
        private static let tags: [(name: UInt64, kind: Kind)] = [
            ("key", .text), ("string", .text), ("data", .text), ("date", .text), ("integer", .text), ("dict", .dict),
            ("array", .array), ("true", .text), ("false", .text), ("real", .text), ("plist", .plist),
        ].map { name, kind in
            (name.utf8.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, kind)
        }

        /// The plist tag named by the bytes in `range`, or nil for any other name.
        private func kind(_ range: Range<Int>) -> Kind? {
            guard let name = bytes.packed(range) else { return nil }
            for tag in Self.tags where tag.name == name { return tag.kind }
            return nil
        }

        /// Whether the XML declaration's pseudo-attributes (the bytes in `range`) are a version of 1.0 and, if
        /// any, an encoding of UTF-8 and a standalone flag.
        private func declarationIsPlain(_ range: Range<Int>) -> Bool {
            guard let declaration = try? bytes.reader.window(range) else { return false }
            let text = String(decoding: declaration.unsafeBytes, as: UTF8.self)
            var rest = Substring(text)
            var found: [String: String] = [:]
            while true {
                rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
                guard !rest.isEmpty else { break }
                let name = rest.prefix { $0.isLetter }
                rest = rest.dropFirst(name.count).drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
                guard rest.first == "=" else { return false }
                rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
                guard let quote = rest.first, quote == "\"" || quote == "'" else { return false }
                rest = rest.dropFirst()
                guard let close = rest.firstIndex(of: quote) else { return false }
                found[String(name)] = String(rest[..<close])
                rest = rest[rest.index(after: close)...]
            }
            guard found["version"] == "1.0" else { return false }
            let known: Set<String> = ["version", "encoding", "standalone"]
            guard found.keys.allSatisfy(known.contains) else { return false }
            if let encoding = found["encoding"], !["utf-8", "utf8"].contains(encoding.lowercased()) { return false }
            return true
        }

    }
}

/// The document's bytes, read through a `ByteReader`, with the few searches the scan makes (a trivial value,
/// cheap to pass around).
private struct Bytes {
    let reader: ByteReader

    var count: Int { reader.count }

    /// The byte at `index`, or nil outside the document.
    subscript(index: Int) -> UInt8? { try? reader.u8(at: index) }

    func starts(with prefix: [UInt8]) -> Bool { reader.unsafeBytes.starts(with: prefix) }

    func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    func starts(with text: StaticString, at index: Int) -> Bool {
        let count = text.utf8CodeUnitCount
        guard let window = try? reader.window(at: index, count: count), let base = window.unsafeBytes.baseAddress else {
            return false
        }
        return memcmp(base, text.utf8Start, count) == 0
    }

    /// The bytes in `range`, one to eight of them, as a word with the first in its lowest byte; nil for other
    /// lengths.
    func packed(_ range: Range<Int>) -> UInt64? {
        try? reader.uint(at: range.lowerBound, width: range.count, .littleEndian)
    }

    /// The offset of the first `byte` at or after `index`.
    func find(_ byte: UInt8, from index: Int) -> Int? {
        // Most runs between tags are a few bytes: a loop finds those faster than a call.
        var index = index
        let near = min(count, index + 16)
        while index < near {
            if self[index] == byte { return index }
            index += 1
        }
        guard let rest = try? reader.window(at: index, count: count - index), let base = rest.unsafeBytes.baseAddress,
            let found = memchr(base, Int32(byte), rest.count)
        else { return nil }
        return index + (UnsafeRawPointer(found) - base)
    }

    /// The offset of the first occurrence of `text` at or after `index`.
    func find(_ text: StaticString, from index: Int) -> Int? {
        var index = index
        while let first = find(text.utf8Start.pointee, from: index) {
            if starts(with: text, at: first) { return first }
            index = first + 1
        }
        return nil
    }
}

// Plist/: the project's own property-list parsers, XML and binary, and the tree they give. PlistParser (this file)
// picks the parser: PlistXMLParser (libxml2, streaming; PlistXMLBuilder, PlistXMLScalars), which PlistXMLSplit
// cuts into pieces for several cores, or PlistBinaryParser, on the layout BinaryPlistCheck reads from the trailer
// and checks. Both give a PlistNode tree; PlistNodeText writes its values out as the text `extra` keeps, within
// an ExpansionBudget.

import Foundation

/// Reads a property list, XML or binary, into a ``PlistNode`` tree with the project's own parsers:
/// ``PlistBinaryParser`` for `bplist00` files and ``PlistXMLParser`` (libxml2) for XML.
///
/// Other input is refused with a message that tells text (such as an OpenStep plist, which is not read) from
/// other bytes. No message holds a value from the file.
package enum PlistParser {
    /// The tree of `data`.
    ///
    /// - Throws: ``PlistParseError`` saying what kind of file this is and what is wrong with it.
    static func parse(_ data: Data) throws(PlistParseError) -> PlistNode {
        try ByteReader.reading(data) { file throws(PlistParseError) in try parse(file, data) }
    }

    /// Parses `data` and drops the tree: the benchmark's way to time the parsers apart from the readers'
    /// item conversion (`apex-keychain-bench readers`, line `bplist parse`).
    package static func parseDiscardingTree(_ data: Data) throws {
        _ = try parse(data)
    }

    private static func parse(_ file: ByteReader, _ data: Data) throws(PlistParseError) -> PlistNode {
        let bytes = file.unsafeBytes
        if bytes.starts(with: Array("bplist".utf8)) {
            guard bytes.count >= BinaryPlistCheck.minimumSize || !isText(bytes) else { throw notAPlist(bytes) }
            guard bytes.starts(with: BinaryPlistCheck.magic) else {
                throw PlistParseError(.binaryMalformed, detail: "a format version other than 00")
            }
            return try PlistBinaryParser.parse(file)
        }
        guard startsLikeXML(file) else { throw notAPlist(bytes) }
        do {
            return try PlistXMLParser.parse(data)
        } catch {
            guard error.kind == .xmlMalformed, !IOSPlistReader.looksLike(data.prefix(1024)) else { throw error }
            throw PlistParseError(.notAPlist)
        }
    }

    /// Whether the bytes start, after an optional byte order mark and white space, with `<`; or with a UTF-16
    /// byte order mark (libxml2 reads the encoding).
    private static func startsLikeXML(_ file: ByteReader) -> Bool {
        let bytes = file.unsafeBytes
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) { return true }
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while let byte = try? file.u8(at: index), [0x20, 0x09, 0x0A, 0x0D].contains(byte) { index += 1 }
        return (try? file.u8(at: index)) == UInt8(ascii: "<")
    }

    /// The error for a file that is neither form: text (which Foundation would have read as an OpenStep plist,
    /// a form no keychain dump uses) or other bytes.
    private static func notAPlist(_ bytes: UnsafeRawBufferPointer) -> PlistParseError {
        PlistParseError(isText(bytes) ? .textNotAPlist : .notAPlist)
    }

    /// Whether the bytes are UTF-8 text without control characters other than tab, line feed and carriage return.
    private static func isText(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let controls = bytes.contains { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D || $0 == 0x7F }
        return !controls && String(validating: bytes, as: UTF8.self) != nil
    }
}

import CLibXML2
import Foundation

/// A document as libxml2 reads it through its input callback: one or more byte ranges read in turn, as if one
/// buffer, a chunk at a time. libxml2 then keeps only the chunks it has yet to parse, instead of a copy of the
/// whole document beside the caller's bytes, and a document cut from a larger one (``PlistXMLSplit``) is read
/// from the larger one's bytes, without a copy of its own.
///
/// A chunk ends only where libxml2 reads the same either way:
/// - libxml2 2.9.14's pull parser misses a `]]>` in text when the first `]` is the last byte it has read so far
///   (it looks at the bytes after it without reading more), so a document that is not well-formed would pass:
///   no chunk has a `]` among its last ``bracketMargin`` bytes (more than any character's encoded length).
/// - Its quick scan of text hands over the text read so far when it meets the end of what it has read, as it
///   does when it meets a character that ends a run of plain text (markup, a reference, a carriage return,
///   anything outside printable ASCII). A chunk ends between two plain bytes (printable ASCII other than `<`, `&`
///   and `]`, a tab or a line feed), so that a callback that ends at the end of what was read is one that
///   reading the whole at once would have gone on from (see ``endsAtEndOfInput(_:_:)``: the readers take a run
///   of text's line from the callback that reading at once would have made first).
///
/// Where a read has no such place in the second half of what libxml2 asked for (text dense with markup or `]`),
/// the parse stops there, marked ``needsOneBuffer``, and ``SafeXML/stream(_:documentTypes:inChunks:chunkLimit:builder:content:finish:)``
/// parses the document again from one buffer.
/// libxml2 asks for about 4 KB at a time and expects a read to give what it asks when the input has it: a limit
/// below its smallest ask (250 bytes) is not one it can read with.
final class XMLChunkedInput {
    /// The ranges, in order.
    private let parts: [Data]
    /// The most bytes one read gives (libxml2 asks for about 4 KB at a time).
    private let chunkLimit: Int
    private var part = 0
    private var offset = 0
    /// Whether a read had to end where libxml2 may read otherwise than from one buffer.
    private(set) var needsOneBuffer = false

    /// How many bytes before the end of a chunk hold no `]`: more than any character's encoded length.
    static let bracketMargin = 8

    init(_ parts: [Data], chunkLimit: Int = 16 * 1024) {
        self.parts = parts
        self.chunkLimit = max(256, chunkLimit)
    }

    /// Whether libxml2 can read `first`, a document's first bytes, in chunks: a document in UTF-8 (after an
    /// optional byte order mark, `<` in ASCII, and an XML declaration, if any, naming no other encoding). Other
    /// encodings go through a converter whose output may end where its input does not, and are read from one
    /// buffer.
    static func readsInChunks(_ first: Data) -> Bool {
        var bytes = [UInt8](first.prefix(1024))
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        guard bytes.first == UInt8(ascii: "<") else { return false }
        guard bytes.starts(with: Array("<?xml".utf8)) else { return true }
        guard let end = bytes.firstRange(of: Array("?>".utf8)) else { return false }
        let declaration = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).lowercased()
        guard let named = declaration.range(of: "encoding") else { return true }
        let rest = declaration[named.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "'" }
        return rest.hasPrefix("utf-8\"") || rest.hasPrefix("utf-8'") || rest.hasPrefix("utf8\"")
            || rest.hasPrefix("utf8'")
    }

    /// Copies the next bytes into `buffer` (at most `capacity`); how many, 0 at the end, -1 to stop the parse.
    func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int {
        let wanted = min(capacity, chunkLimit)
        var count = 0
        while count < wanted, part < parts.count {
            let data = parts[part]
            let taken = min(wanted - count, data.count - offset)
            data.withUnsafeBytes { bytes in
                (buffer + count).update(
                    from: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset, count: taken)
            }
            count += taken
            offset += taken
            if offset == data.count { (part, offset) = (part + 1, 0) }
        }
        guard part < parts.count else { return count }
        // Not the end: end the chunk at the last place where libxml2 reads as it would from one buffer.
        // libxml2 asks for more only when it is short, and takes what one read gives as enough: a chunk keeps at
        // least half of what it was asked for, else the parse stops here, to be done from one buffer.
        let next = nextByte
        var end = count
        while end > 0, end * 2 >= count, !Self.endsAChunk(buffer, end, next: end == count ? next : buffer[end]) {
            end -= 1
        }
        guard end > 0, end * 2 >= count else {
            needsOneBuffer = true
            return -1
        }
        unread(count - end)
        return end
    }

    /// Whether a chunk may end after `buffer[..<end]`, with `next` the byte after it.
    private static func endsAChunk(_ buffer: UnsafeMutablePointer<UInt8>, _ end: Int, next: UInt8?) -> Bool {
        guard let next, isPlain(next), isPlain(buffer[end - 1]) else { return false }
        return !(max(0, end - bracketMargin)..<end).contains { buffer[$0] == UInt8(ascii: "]") }
    }

    /// Printable ASCII other than `<`, `&` and `]`, a tab or a line feed: bytes libxml2's quick scan of text reads
    /// on past.
    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x09, 0x0A: true
        case UInt8(ascii: "<"), UInt8(ascii: "&"), UInt8(ascii: "]"): false
        default: byte >= 0x20 && byte < 0x7F
        }
    }

    /// The byte at the current position, if there is one (the next part's first when this one is read out).
    private var nextByte: UInt8? {
        var (index, at) = (part, offset)
        while index < parts.count, at >= parts[index].count { (index, at) = (index + 1, 0) }
        guard index < parts.count else { return nil }
        return parts[index][parts[index].startIndex + at]
    }

    /// Steps back `count` bytes, across parts.
    private func unread(_ count: Int) {
        var left = count
        while left > 0 {
            if offset == 0 {
                part -= 1
                offset = parts[part].count
            }
            let step = min(left, offset)
            offset -= step
            left -= step
        }
    }

    /// libxml2's read callback over an input behind `context`.
    static let readCallback: xmlInputReadCallback = { context, buffer, length in
        guard let context, let buffer, length > 0 else { return 0 }
        let input = Unmanaged<XMLChunkedInput>.fromOpaque(context).takeUnretainedValue()
        let raw = UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: UInt8.self)
        return Int32(input.read(into: raw, capacity: Int(length)))
    }

    /// Whether a text callback's `bytes` end where libxml2's input ends so far: its quick scan met the end of
    /// what was read, and goes on with the next callback, where reading at once would have gone on in this one.
    static func endsAtEndOfInput(_ context: UnsafeMutableRawPointer, _ bytes: UnsafeBufferPointer<xmlChar>) -> Bool {
        guard let base = bytes.baseAddress,
            let input = context.assumingMemoryBound(to: xmlParserCtxt.self).pointee.input
        else { return false }
        return base + bytes.count == input.pointee.end
    }
}

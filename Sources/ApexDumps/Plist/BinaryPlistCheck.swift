import Foundation

/// The layout of a binary property list (`bplist00`), read from its trailer and checked against the file.
///
/// The file is the 8-byte magic, the objects, the offset table (one big-endian offset of `offsetSize` bytes per
/// object) and a 32-byte trailer: 6 unused bytes, the offset size, the object-reference size, then the object
/// count, the top object's number and the offset table's position as 8-byte big-endian integers.
struct BinaryPlistLayout {
    /// Bytes per object reference inside arrays, sets and dictionaries (1 to 8).
    var referenceSize: Int
    /// The number of the top object.
    var topObject: Int
    /// Where the offset table starts; every object lies before it.
    var tableOffset: Int
    /// Where each object starts, by object number; each is at least 8 and before ``tableOffset``.
    var offsets: [Int]
}

/// Reads and checks a binary plist's trailer and offset table before any object is decoded.
///
/// Every offset is checked to point inside the object area, and a file whose offset table points at a set marker
/// (`0xC?`) is refused whether or not the set is reachable from the top object: Foundation on Linux crashed on
/// such a file (a fuzzer found it), and no keychain dump holds a set.
enum BinaryPlistCheck {
    /// The magic and version a binary plist starts with.
    static let magic = Array("bplist00".utf8)
    /// The magic's 8 bytes and the trailer's 32: the smallest file that can hold a binary plist.
    static let minimumSize = 8 + 32

    /// The layout of `file`, a whole file that starts with ``magic`` and is at least ``minimumSize`` long.
    static func layout(_ file: ByteReader) throws(PlistParseError) -> BinaryPlistLayout {
        let trailer = file.count - 32
        guard let offsetSize = try? Int(file.u8(at: trailer + 6)),
            let referenceSize = try? Int(file.u8(at: trailer + 7)),
            (1...8).contains(offsetSize), (1...8).contains(referenceSize),
            let count = int(file, at: trailer + 8, width: 8),
            let top = int(file, at: trailer + 16, width: 8),
            let table = int(file, at: trailer + 24, width: 8),
            table >= 8, table <= trailer, count >= 1, count <= (trailer - table) / offsetSize, top < count
        else { throw PlistParseError(.binaryMalformed, detail: "its trailer does not fit the file") }
        // Every object takes at least its marker byte: more objects than bytes means offsets that alias, which no
        // writer makes and which would multiply the memory a small file takes.
        guard count <= table - 8 else {
            throw PlistParseError(.binaryMalformed, detail: "it declares more objects than its objects take bytes")
        }
        var offsets: [Int] = []
        offsets.reserveCapacity(count)
        var position = table
        for _ in 0..<count {
            guard let offset = int(file, at: position, width: offsetSize), offset >= 8, offset < table,
                let marker = try? file.u8(at: offset)
            else {
                throw PlistParseError(.binaryMalformed, detail: "its offset table points outside its objects")
            }
            if BinaryPlistMarker(byte: marker) == .set {
                throw PlistParseError(.binaryHoldsSet)
            }
            offsets.append(offset)
            position += offsetSize
        }
        return BinaryPlistLayout(referenceSize: referenceSize, topObject: top, tableOffset: table, offsets: offsets)
    }

    /// The unsigned big-endian integer of `width` bytes (1 to 8) at `start`, when it lies inside `file` and fits
    /// in `Int`.
    private static func int(_ file: ByteReader, at start: Int, width: Int) -> Int? {
        guard let value = try? file.uint(at: start, width: width) else { return nil }
        return Int(exactly: value)
    }
}

/// The object types of a binary plist, by the high nibble of an object's marker byte (the low nibble holds a
/// size, or the singleton's value).
enum BinaryPlistMarker: UInt8 {
    /// `null`, `false`, `true` (0x00, 0x08, 0x09) and fill bytes.
    case singleton = 0x0
    /// An integer of 2^n bytes.
    case integer = 0x1
    /// A real of 2^n bytes.
    case real = 0x2
    /// A date: an 8-byte real, seconds since 2001-01-01.
    case date = 0x3
    /// Bytes.
    case data = 0x4
    /// An ASCII string.
    case asciiString = 0x5
    /// A UTF-16 (big-endian) string.
    case utf16String = 0x6
    /// A UID (keyed archives).
    case uid = 0x8
    /// An array of object references.
    case array = 0xA
    /// A set (no keychain dump has one).
    case set = 0xC
    /// A dictionary: key references, then value references.
    case dictionary = 0xD

    /// The type of the object whose marker byte is `byte`; nil for a type the format doesn't define.
    init?(byte: UInt8) { self.init(rawValue: byte >> 4) }
}

import Foundation

/// Decodes the objects of a binary property list (`bplist00`) into a ``PlistNode`` tree.
///
/// Each object starts with a marker byte: the high nibble is its type, the low nibble its size or, when it is
/// `0xF`, a sign that an integer object giving the size follows. The types read are null (`0x00`), false and true
/// (`0x08`, `0x09`), integers (`0x1n`: 2ⁿ bytes; 1, 2 and 4 bytes unsigned, 8 bytes signed, 16 bytes a 128-bit
/// value that must fit in 64 bits), reals (`0x22` float, `0x23` double), dates (`0x33`: a double, seconds since
/// 2001-01-01 UTC), data (`0x4n`), ASCII strings (`0x5n`), UTF-16BE strings (`0x6n`, n code units), UIDs (`0x8n`:
/// n + 1 bytes), arrays (`0xAn`: n object references) and dictionaries (`0xDn`: n key references, then n value
/// references). Sets (`0xCn`), fill bytes, unknown markers and UTF-16 strings with a lone surrogate are refused.
///
/// Every length, count and reference is checked against the file with checked arithmetic, and every byte is read
/// through a `ByteReader` whose window is the object area, so an object must end before the offset table. An
/// object that refers to itself through its children (a cycle) is refused, and so is nesting deeper than
/// ``PlistNode/maxNesting``. Each object is decoded once: an object referred to many times
/// (Apple's writer shares equal keys and values) is decoded on first use and shared afterwards, which also keeps a
/// file whose references fan out exponentially from taking exponential time.
struct PlistBinaryParser {
    /// The object area: from the magic's end to the offset table.
    private let objects: ByteReader
    private let layout: BinaryPlistLayout
    /// Objects already decoded, by number.
    private var decoded: [PlistNode?]
    /// Containers being decoded: referring to one of them again is a cycle.
    private var open: [Bool]
    /// How many containers deep each decoded object reaches (0 for a scalar): a shared object reused deeper down
    /// must still fit under ``PlistNode/maxNesting``.
    private var heights: [Int]

    /// Parses a whole file that starts with `bplist00`.
    static func parse(_ file: ByteReader) throws(PlistParseError) -> PlistNode {
        guard file.count >= BinaryPlistCheck.minimumSize, file.unsafeBytes.starts(with: BinaryPlistCheck.magic) else {
            throw PlistParseError(.binaryMalformed, detail: "shorter than its header and trailer")
        }
        let layout = try BinaryPlistCheck.layout(file)
        guard let objects = try? file.window(BinaryPlistCheck.magic.count..<layout.tableOffset) else {
            throw PlistParseError(.binaryMalformed, detail: "its trailer does not fit the file")
        }
        var parser = PlistBinaryParser(objects: objects, layout: layout)
        return try parser.object(parser.layout.topObject, depth: 0)
    }

    private init(objects: ByteReader, layout: BinaryPlistLayout) {
        self.objects = objects
        self.layout = layout
        decoded = Array(repeating: nil, count: layout.offsets.count)
        open = Array(repeating: false, count: layout.offsets.count)
        heights = Array(repeating: 0, count: layout.offsets.count)
    }

    private func failure(_ detail: String) -> PlistParseError {
        PlistParseError(.binaryMalformed, detail: detail)
    }

    // MARK: Objects

    /// Object number `number`, decoded or taken from ``decoded``; `depth` is the number of containers around it.
    private mutating func object(_ number: Int, depth: Int) throws(PlistParseError) -> PlistNode {
        if let node = decoded[number] {
            guard depth + heights[number] <= PlistNode.maxNesting else {
                throw failure("containers nested deeper than \(PlistNode.maxNesting) levels")
            }
            return node
        }
        guard !open[number] else { throw failure("object \(number) contains itself") }
        let offset = layout.offsets[number]
        guard let marker = try? objects.u8(at: offset) else { throw failure("an object past the end of the objects") }
        let node: PlistNode
        guard let type = BinaryPlistMarker(byte: marker) else {
            throw failure("an object of unknown type 0x\(String(marker >> 4, radix: 16, uppercase: true))")
        }
        switch type {
        case .singleton: node = try singleton(marker)
        case .integer: node = try integer(at: offset + 1, widthExponent: Int(marker & 0x0F))
        case .real: node = .real(try real(at: offset + 1, widthExponent: Int(marker & 0x0F)))
        case .date:
            guard marker == 0x33 else { throw failure("a date object that is not 8 bytes") }
            node = .date(Date(timeIntervalSinceReferenceDate: try real(at: offset + 1, widthExponent: 3)))
        case .data: node = .data(try payload(at: offset, marker, unitSize: 1).data)
        case .asciiString: node = .string(try asciiString(try payload(at: offset, marker, unitSize: 1)))
        case .utf16String: node = .string(try utf16String(try payload(at: offset, marker, unitSize: 2)))
        case .uid:
            guard let value = uint(at: offset + 1, width: Int(marker & 0x0F) + 1) else {
                throw failure("a UID object larger than 8 bytes or past the end of the objects")
            }
            node = .uid(value)
        case .array, .dictionary:
            guard depth < PlistNode.maxNesting else {
                throw failure("containers nested deeper than \(PlistNode.maxNesting) levels")
            }
            open[number] = true
            let (container, height) =
                type == .array
                ? try array(at: offset, marker, depth: depth + 1) : try dictionary(at: offset, marker, depth: depth + 1)
            node = container
            heights[number] = height
            open[number] = false
        case .set: throw PlistParseError(.binaryHoldsSet)
        }
        decoded[number] = node
        return node
    }

    /// Null, false or true.
    private func singleton(_ marker: UInt8) throws(PlistParseError) -> PlistNode {
        switch marker {
        case 0x00: return .null
        case 0x08: return .boolean(false)
        case 0x09: return .boolean(true)
        default: throw failure("a fill byte or an unknown marker where an object should be")
        }
    }

    /// An integer of 2^`widthExponent` bytes at `start`: 1, 2 and 4 bytes are unsigned, 8 bytes are two's
    /// complement, and 16 bytes are a 128-bit two's-complement value that must fit in `Int64` or `UInt64`.
    private func integer(at start: Int, widthExponent: Int) throws(PlistParseError) -> PlistNode {
        switch widthExponent {
        case 0, 1, 2:
            guard let value = uint(at: start, width: 1 << widthExponent) else {
                throw failure("an integer past the end of the objects")
            }
            return .integer(Int64(value))
        case 3:
            guard let value = uint(at: start, width: 8) else { throw failure("an integer past the end of the objects") }
            return .integer(Int64(bitPattern: value))
        case 4:
            guard let high = uint(at: start, width: 8), let low = uint(at: start + 8, width: 8) else {
                throw failure("an integer past the end of the objects")
            }
            if high == 0 {
                return low <= UInt64(Int64.max) ? .integer(Int64(low)) : .unsignedInteger(low)
            }
            guard high == UInt64.max, low > UInt64(Int64.max) else {
                throw failure("a 128-bit integer that does not fit in 64 bits")
            }
            return .integer(Int64(bitPattern: low))
        default:
            throw failure("an integer wider than 16 bytes")
        }
    }

    /// A float (`widthExponent` 2) or double (3) at `start`, as a `Double`.
    private func real(at start: Int, widthExponent: Int) throws(PlistParseError) -> Double {
        switch widthExponent {
        case 2:
            guard let bits = uint(at: start, width: 4) else { throw failure("a real past the end of the objects") }
            return Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits)))
        case 3:
            guard let bits = uint(at: start, width: 8) else { throw failure("a real past the end of the objects") }
            return Double(bitPattern: bits)
        default:
            throw failure("a real that is neither 4 nor 8 bytes")
        }
    }

    /// Text of 7-bit ASCII bytes.
    private func asciiString(_ payload: ByteReader) throws(PlistParseError) -> String {
        let slice = payload.unsafeBytes
        guard slice.allSatisfy({ $0 < 0x80 }) else { throw failure("an ASCII string with a byte above 0x7F") }
        return String(decoding: slice, as: UTF8.self)
    }

    /// Text of big-endian UTF-16 code units. A lone surrogate is refused, as libxml2 refuses bad UTF-8 in an XML
    /// plist: replaced by U+FFFD, it would make two different names one.
    private func utf16String(_ payload: ByteReader) throws(PlistParseError) -> String {
        var payload = payload
        var units: [UInt16] = []
        units.reserveCapacity(payload.count / 2)
        while !payload.isAtEnd {
            guard let unit = try? payload.readU16(.bigEndian) else {
                throw failure("a UTF-16 string of an odd number of bytes")
            }
            units.append(unit)
        }
        guard let text = String(validating: units, as: UTF16.self) else {
            throw failure("a UTF-16 string with a lone surrogate, which is not text")
        }
        return text
    }

    /// The elements of the array at `offset`, and how many containers deep it reaches; `depth` is the array's own
    /// depth.
    private mutating func array(
        at offset: Int, _ marker: UInt8, depth: Int
    ) throws(PlistParseError) -> (PlistNode, height: Int) {
        let references = try payload(at: offset, marker, unitSize: layout.referenceSize)
        var elements: [PlistNode] = []
        elements.reserveCapacity(references.count / layout.referenceSize)
        var height = 1
        let positions = references.bounds
        for position in stride(from: positions.lowerBound, to: positions.upperBound, by: layout.referenceSize) {
            let number = try reference(at: position, in: references)
            elements.append(try object(number, depth: depth))
            height = max(height, heights[number] + 1)
        }
        return (.array(elements), height)
    }

    /// The entries of the dictionary at `offset` (all key references, then all value references), and how many
    /// containers deep it reaches.
    private mutating func dictionary(
        at offset: Int, _ marker: UInt8, depth: Int
    ) throws(PlistParseError) -> (PlistNode, height: Int) {
        let references = try payload(at: offset, marker, unitSize: 2 * layout.referenceSize)
        let count = references.count / (2 * layout.referenceSize)
        let keysStart = references.bounds.lowerBound
        let valuesStart = keysStart + count * layout.referenceSize
        var entries: [(key: PlistNode, value: PlistNode)] = []
        entries.reserveCapacity(count)
        var height = 1
        for index in 0..<count {
            let keyNumber = try reference(at: keysStart + index * layout.referenceSize, in: references)
            let key = try object(keyNumber, depth: depth)
            let valueNumber = try reference(at: valuesStart + index * layout.referenceSize, in: references)
            let value = try object(valueNumber, depth: depth)
            entries.append((key, value))
            height = max(height, heights[keyNumber] + 1, heights[valueNumber] + 1)
        }
        return (.dictionary(PlistDictionary(entries)), height)
    }

    // MARK: Bytes

    /// The bytes of a sized object (data, string, array, dictionary) whose marker `marker` is at `offset`: its count
    /// comes from the marker's low nibble, or from the integer object that follows when the nibble is `0xF`; each unit
    /// is `unitSize` bytes. The window is checked to end before the offset table.
    private func payload(at offset: Int, _ marker: UInt8, unitSize: Int) throws(PlistParseError) -> ByteReader {
        var count = Int(marker & 0x0F)
        var start = offset + 1
        if count == 0x0F {
            guard let lengthMarker = try? objects.u8(at: start) else {
                throw failure("an object's length is past the end of the objects")
            }
            let width = 1 << Int(lengthMarker & 0x0F)
            guard BinaryPlistMarker(byte: lengthMarker) == .integer, width <= 8,
                let length = uint(at: start + 1, width: width),
                let fitting = Int(exactly: length)
            else { throw failure("an object's length is not a valid integer") }
            count = fitting
            start += 1 + width
        }
        let (size, overflow) = count.multipliedReportingOverflow(by: unitSize)
        guard !overflow, let payload = try? objects.window(at: start, count: size) else {
            throw failure("an object's length runs past the end of the objects")
        }
        return payload
    }

    /// The object number in the reference at `position` of the container's `references`, checked against the
    /// object count.
    private func reference(at position: Int, in references: ByteReader) throws(PlistParseError) -> Int {
        guard let value = try? references.uint(at: position, width: layout.referenceSize),
            value < UInt64(layout.offsets.count)
        else {
            throw failure("an object reference to an object that does not exist")
        }
        return Int(value)
    }

    /// The unsigned big-endian integer of `width` bytes (1 to 8) at `start`, when it ends before the offset table.
    private func uint(at start: Int, width: Int) -> UInt64? {
        try? objects.uint(at: start, width: width)
    }
}

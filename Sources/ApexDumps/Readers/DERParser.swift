import Foundation

extension AccessControlDecoder {
    /// A bounded reader of the DER that `der_plist` writes: SET (0x31) of SEQUENCE {key, value} for dictionaries,
    /// SEQUENCE (0x30) for arrays, UTF8String, OCTET STRING, INTEGER, BOOLEAN, NULL and GeneralizedTime. Every byte
    /// is read through a `ByteReader`: a container's contents are a window, so a value can't run past its
    /// container, and offsets in errors are the data's. Shared by the access-control decoder and a backup's keychain
    /// items, so its messages name the DER, never a caller: each caller says what the data was.
    enum DERParser {
        /// The one value `data` holds; trailing bytes are an error.
        static func parse(_ data: Data) throws(DecodingError) -> Node {
            try ByteReader.reading(data) { bytes throws(DecodingError) in
                guard bytes.count > 0 else { throw DecodingError("the DER data is empty") }
                var reader = bytes
                let node = try element(&reader, depth: 1)
                guard reader.isAtEnd else {
                    throw DecodingError("trailing bytes after the DER value at byte \(reader.position)")
                }
                return node
            }
        }

        /// The value at `reader`'s cursor; the cursor moves past it.
        private static func element(_ reader: inout ByteReader, depth: Int) throws(DecodingError) -> Node {
            let start = reader.position
            guard let tag = try? reader.readU8() else {
                throw DecodingError("DER truncated: a value is missing at byte \(start)")
            }
            var content = try contents(&reader)
            switch tag {
            case 0x31, 0x30:
                guard depth <= DumpLimits.maxDepth else {
                    throw DecodingError("DER nests deeper than \(DumpLimits.maxDepth) levels at byte \(start)")
                }
                if tag == 0x31 { return try dictionary(&content, depth: depth) }
                return try array(&content, depth: depth)
            case 0x0C:
                guard let text = String(validating: content.unsafeBytes, as: UTF8.self) else {
                    throw DecodingError("a DER string at byte \(start) is not valid UTF-8")
                }
                return .string(text)
            case 0x04:
                return .data(content.data)
            case 0x02:
                return .integer(try integer(content, at: start))
            case 0x01:
                guard content.count == 1, let byte = try? content.readU8() else {
                    throw DecodingError("a DER boolean at byte \(start) has length \(content.count), expected 1")
                }
                return .boolean(byte != 0)
            case 0x05:
                guard content.count == 0 else {
                    throw DecodingError("a DER null at byte \(start) has a non-zero length")
                }
                return .null
            case 0x18:
                guard content.count <= 64,
                    let date = IOSAttributes.date(generalizedTime: String(decoding: content.unsafeBytes, as: UTF8.self))
                else {
                    throw DecodingError("a DER time at byte \(start) is not a GeneralizedTime")
                }
                return .date(date)
            default:
                throw DecodingError(
                    "DER tag 0x\(String(tag, radix: 16, uppercase: true)) at byte \(start) is not one der_plist writes")
            }
        }

        /// The contents after a tag: the definite length at the cursor, then that many bytes of what is left of the
        /// container, as a window; the cursor moves past both.
        private static func contents(_ reader: inout ByteReader) throws(DecodingError) -> ByteReader {
            let lengthStart = reader.position
            guard let first = try? reader.readU8() else {
                throw DecodingError("DER truncated: a length is missing at byte \(lengthStart)")
            }
            var length = 0
            if first < 0x80 {
                length = Int(first)
            } else {
                let count = Int(first & 0x7F)
                guard count > 0, count <= 8 else {
                    throw DecodingError(
                        "DER length form 0x\(String(first, radix: 16, uppercase: true)) at byte \(lengthStart) is not supported"
                    )
                }
                guard count <= reader.remaining else {
                    throw DecodingError("DER truncated inside a length at byte \(lengthStart)")
                }
                for _ in 0..<count {
                    guard length <= (Int.max >> 8) else {
                        throw DecodingError("DER length at byte \(reader.position) overflows")
                    }
                    guard let byte = try? reader.readU8() else {
                        throw DecodingError("DER truncated inside a length at byte \(lengthStart)")
                    }
                    length = length << 8 | Int(byte)
                }
            }
            let contentStart = reader.position
            guard let content = try? reader.read(count: length) else {
                throw DecodingError("DER length \(length) at byte \(contentStart) runs past the end of its container")
            }
            return content
        }

        /// The SEQUENCE {key, value} pairs of a SET's `content`.
        private static func dictionary(_ content: inout ByteReader, depth: Int) throws(DecodingError) -> Node {
            var entries: [(key: String, value: Node)] = []
            var keys: Set<String> = []
            while !content.isAtEnd {
                let pairStart = content.position
                guard (try? content.readU8()) == 0x30 else {
                    throw DecodingError("a DER dictionary entry at byte \(pairStart) is not a SEQUENCE")
                }
                var pair = try contents(&content)
                guard depth + 1 <= DumpLimits.maxDepth else {
                    throw DecodingError("DER nests deeper than \(DumpLimits.maxDepth) levels at byte \(pairStart)")
                }
                guard case .string(let key) = try element(&pair, depth: depth + 2) else {
                    throw DecodingError("a DER dictionary key at byte \(pairStart) is not a string")
                }
                let value = try element(&pair, depth: depth + 2)
                guard pair.isAtEnd else {
                    throw DecodingError("a DER dictionary entry at byte \(pairStart) holds more than a key and a value")
                }
                guard keys.insert(key).inserted else {
                    throw DecodingError("a DER dictionary has a duplicate key at byte \(pairStart)")
                }
                entries.append((key, value))
            }
            return .dictionary(entries)
        }

        /// The values of a SEQUENCE's `content`.
        private static func array(_ content: inout ByteReader, depth: Int) throws(DecodingError) -> Node {
            var elements: [Node] = []
            while !content.isAtEnd {
                elements.append(try element(&content, depth: depth + 1))
            }
            return .array(elements)
        }

        /// A two's-complement INTEGER that fits in `Int64`; a ninth byte is allowed only as a leading 0x00.
        private static func integer(_ content: ByteReader, at start: Int) throws(DecodingError) -> Int64 {
            let bytes = content.unsafeBytes
            guard let first = bytes.first else { throw DecodingError("a DER integer at byte \(start) is empty") }
            let tooLarge = DecodingError("a DER integer at byte \(start) does not fit in 64 bits")
            if bytes.count == 9 {
                guard first == 0, let second = try? content.u8(at: content.bounds.lowerBound + 1), second < 0x80 else {
                    throw tooLarge
                }
                return bytes.dropFirst().reduce(0) { $0 << 8 | Int64($1) }
            }
            guard bytes.count <= 8 else { throw tooLarge }
            return bytes.reduce(first >= 0x80 ? -1 : 0) { $0 << 8 | Int64($1) }
        }
    }
}

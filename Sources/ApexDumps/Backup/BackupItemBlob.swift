import ApexNettle

/// One keychain item of a backup's `keychain-backup.plist`: its version-3 `v_Data` (`ios-encrypted-backups.md`
/// §1.7). A little-endian header (version 3, the key's protection class, the wrapped key's length), the item's
/// key wrapped under that class's key (RFC 3394), then the AES-256-GCM ciphertext of the item's DER attributes
/// and secret, under the item's key with an empty IV and no AAD, and its 16-byte tag.
public struct BackupItemBlob: Sendable, Equatable {
    /// The protection class whose key wraps the item's (6–11: `ak ck dk aku cku dku`).
    public var protectionClass: UInt32
    /// The item's key, wrapped under the class key.
    public var wrappedKey: [UInt8]
    /// The ciphertext of the item's DER dictionary.
    public var ciphertext: [UInt8]
    /// The GCM tag.
    public var tag: [UInt8]

    /// Why an item can't be read or opened. The message never holds a key or a value.
    public enum Failure: Error, Sendable, Equatable {
        /// The bytes are not a version-3 item: what is wrong.
        case malformed(String)
        /// The class's key is not open: the ThisDeviceOnly classes (9–11) are wrapped by the phone's own key too,
        /// and a backup without a password has every class so.
        case classNotOpen(UInt32)
        /// The class key doesn't unwrap the item's key, or the tag doesn't match: the item is damaged.
        case damaged(String)
    }

    /// Reads an item's bytes.
    public init(_ bytes: [UInt8]) throws(Failure) {
        self = try ByteReader.reading(bytes) { reader throws(Failure) in try Self.read(reader) }
    }

    /// The item's DER dictionary, opened with the backup's open class keys (``BackupKeybag/classKeys(passwordKey:)``).
    /// The caller wipes it.
    public func open(classKeys: [UInt32: [UInt8]]) throws(Failure) -> [UInt8] {
        guard let classKey = classKeys[protectionClass] else { throw .classNotOpen(protectionClass) }
        guard var itemKey = Nettle.aes256KeyUnwrap(kek: classKey, wrapped: wrappedKey), itemKey.count == 32 else {
            throw .damaged("the item's key does not unwrap under its class key")
        }
        defer { Nettle.wipe(&itemKey) }
        guard let plaintext = Nettle.aes256GCMDecrypt(key: itemKey, iv: [], ciphertext: ciphertext, tag: tag) else {
            throw .damaged("the item's tag does not match: its bytes were changed")
        }
        return plaintext
    }

    /// The item's bytes.
    public var bytes: [UInt8] {
        Self.le32bytes(3) + Self.le32bytes(protectionClass) + Self.le32bytes(UInt32(wrappedKey.count)) + wrappedKey
            + ciphertext + tag
    }

    /// An item sealed as a backup seals it: `plaintext` under `itemKey`, that key wrapped under `classKey`.
    public static func seal(
        _ plaintext: [UInt8], protectionClass: UInt32, classKey: [UInt8], itemKey: [UInt8]
    ) -> BackupItemBlob {
        let sealed = Nettle.aes256GCMEncrypt(key: itemKey, iv: [], plaintext: plaintext)
        return BackupItemBlob(
            protectionClass: protectionClass, wrappedKey: Nettle.aes256KeyWrap(kek: classKey, key: itemKey),
            ciphertext: sealed.ciphertext, tag: sealed.tag)
    }

    private init(protectionClass: UInt32, wrappedKey: [UInt8], ciphertext: [UInt8], tag: [UInt8]) {
        self.protectionClass = protectionClass
        self.wrappedKey = wrappedKey
        self.ciphertext = ciphertext
        self.tag = tag
    }

    /// An item read from `bytes` through the reader: the header, then the wrapped key, the ciphertext and the
    /// tag, each a read that is checked against the item's length.
    private static func read(_ bytes: ByteReader) throws(Failure) -> BackupItemBlob {
        var reader = bytes
        let version: UInt32
        let flags: UInt32
        let length: Int
        do throws(ByteReadError) {
            version = try reader.readU32(.littleEndian)
            flags = try reader.readU32(.littleEndian)
            length = try Int(reader.readU32(.littleEndian))
        } catch {
            throw .malformed("\(bytes.count) bytes, shorter than the 12-byte header")
        }
        guard version == 3 else {
            throw .malformed("version \(version & 0x7FFF_FFFF), not 3 (a backup holds version-3 items only)")
        }
        guard length >= 24, length % 8 == 0 else { throw .malformed("a wrapped key of \(length) bytes") }
        do throws(ByteReadError) {
            let wrappedKey = try reader.read(count: length)
            // A negative count (fewer bytes left than the tag) is refused as a read outside the item.
            let ciphertext = try reader.read(count: reader.remaining - Nettle.tagSize)
            let tag = try reader.read(count: Nettle.tagSize)
            return BackupItemBlob(
                protectionClass: flags & 0xF, wrappedKey: Array(wrappedKey.unsafeBytes),
                ciphertext: Array(ciphertext.unsafeBytes), tag: Array(tag.unsafeBytes))
        } catch {
            throw .malformed("\(bytes.count) bytes, too short for its \(length)-byte wrapped key and the tag")
        }
    }

    /// The little-endian 32-bit integer at `at` (a backup's class prefixes), read through a ``ByteReader``. The
    /// caller has checked that its four bytes are there: a read outside `bytes` is a programming error and stops
    /// the program, as an index out of range does.
    static func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        do throws(ByteReadError) {
            return try ByteReader.reading(bytes) { reader throws(ByteReadError) in
                try reader.u32(at: at, .littleEndian)
            }
        } catch {
            preconditionFailure("BackupItemBlob.le32: \(error)")
        }
    }

    private static func le32bytes(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
}

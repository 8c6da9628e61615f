import ApexNettle

/// The `BackupKeyBag` of an encrypted Finder/iTunes backup's `Manifest.plist`: the key derivation's salts and
/// rounds, and one wrapped key per protection class (`ios-encrypted-backups.md` §1.3, §1.4).
///
/// A TLV list: each element a 4-byte ASCII tag, a big-endian 32-bit length and the value; a 4-byte value is a
/// big-endian integer. The header runs up to the second `UUID`; every `UUID` from there starts a class record.
public struct BackupKeybag: Sendable, Equatable {
    /// The keybag's version (`VERS`): 3 before iOS 10.2, 5 since.
    public var version: UInt32
    /// `TYPE`, without its flag bits: 1 for a backup keybag.
    public var type: UInt32
    /// The PBKDF2-HMAC-SHA1 salt (`SALT`) and rounds (`ITER`).
    public var salt: [UInt8], iterations: UInt32
    /// The PBKDF2-HMAC-SHA256 salt (`DPSL`) and rounds (`DPIC`), since iOS 10.2; nil before.
    public var passwordSalt: [UInt8]?, passwordIterations: UInt32?
    /// The class records, in order.
    public var classes: [ClassKey]

    /// One protection class's wrapped key.
    public struct ClassKey: Sendable, Equatable {
        /// The protection class (`CLAS`): 1–5 files, 6–11 keychain (`ak ck dk aku cku dku`).
        public var protectionClass: UInt32
        /// `WRAP`: bit 1 (2) wrapped by the password's key, bit 0 (1) also by the device's key (0x835), which
        /// no machine but the phone has.
        public var wrap: UInt32
        /// `KTYP`: 0 AES (nil when absent).
        public var keyType: UInt32?
        /// `WPKY`: the wrapped key (40 bytes).
        public var wrappedKey: [UInt8]

        /// Whether the password's key alone opens it (`WRAP` is exactly 2): a class wrapped by the device's key
        /// too (the ThisDeviceOnly classes) can't be opened off the phone.
        public var opensWithPassword: Bool { wrap == 2 }
    }

    /// Why a keybag can't be read or opened. The message never holds a key or the password.
    public enum Failure: Error, Sendable, Equatable {
        /// The bytes are not a backup keybag: what is wrong, and where.
        case malformed(String)
        /// The password's key does not unwrap the class keys (their integrity check fails).
        case wrongPassword
    }

    /// Reads a keybag's bytes.
    public init(_ bytes: [UInt8]) throws(Failure) {
        let (header, records) = try ByteReader.reading(bytes) { reader throws(Failure) in try Self.elements(reader) }
        func number(_ fields: [String: [UInt8]], _ tag: String, _ what: String) throws(Failure) -> UInt32? {
            guard let value = fields[tag] else { return nil }
            guard value.count == 4, let number = Self.bigEndian32(value) else {
                throw .malformed("\(what) '\(tag)' is \(value.count) bytes, not 4")
            }
            return number
        }
        guard let version = try number(header, "VERS", "the header's") else {
            throw .malformed("no 'VERS' in the header: not a keybag")
        }
        guard let salt = header["SALT"], !salt.isEmpty, let iterations = try number(header, "ITER", "the header's"),
            iterations > 0
        else { throw .malformed("no 'SALT' and 'ITER' in the header: the password's key can't be derived") }
        self.version = version
        type = (try number(header, "TYPE", "the header's") ?? 0) & 0x3FFF_FFFF
        self.salt = salt
        self.iterations = iterations
        passwordSalt = header["DPSL"]
        passwordIterations = try number(header, "DPIC", "the header's")
        if (passwordSalt == nil) != (passwordIterations == nil) {
            throw .malformed("the header has one of 'DPSL' and 'DPIC' without the other")
        }
        if passwordIterations == 0 { throw .malformed("'DPIC' is 0") }
        var classes: [ClassKey] = []
        for (number_, record) in records.enumerated() {
            let what = "class record \(number_ + 1)'s"
            guard let protectionClass = try number(record, "CLAS", what), let wrap = try number(record, "WRAP", what),
                let wrapped = record["WPKY"]
            else { throw .malformed("class record \(number_ + 1) lacks 'CLAS', 'WRAP' or 'WPKY'") }
            guard wrapped.count >= 24, wrapped.count % 8 == 0 else {
                throw .malformed("\(what) 'WPKY' is \(wrapped.count) bytes, not a wrapped key")
            }
            classes.append(
                ClassKey(
                    protectionClass: protectionClass, wrap: wrap, keyType: try number(record, "KTYP", what),
                    wrappedKey: wrapped))
        }
        self.classes = classes
    }

    /// The key the password derives (`ios-encrypted-backups.md` §1.4): PBKDF2-HMAC-SHA1 over SALT and ITER of,
    /// since iOS 10.2 (when the keybag has DPSL and DPIC), PBKDF2-HMAC-SHA256 of the password over them; else of
    /// the password itself. 32 bytes; the caller wipes it.
    public func passwordKey(_ password: [UInt8]) -> [UInt8] {
        guard let passwordSalt, let passwordIterations else {
            return Nettle.pbkdf2SHA1(password: password, salt: salt, iterations: Int(iterations), length: 32)
        }
        var first = Nettle.pbkdf2SHA256(
            password: password, salt: passwordSalt, iterations: Int(passwordIterations), length: 32)
        defer { Nettle.wipe(&first) }
        return Nettle.pbkdf2SHA1(password: first, salt: salt, iterations: Int(iterations), length: 32)
    }

    /// The class keys the password's key opens, by protection class: every class whose `WRAP` is exactly 2. The
    /// others (the device's key wraps them too) are left out: their items can't be opened off the phone.
    /// - Throws: ``Failure/wrongPassword`` when a class that opens with the password fails its integrity check;
    ///   ``Failure/malformed(_:)`` when no class opens with the password alone.
    public func classKeys(passwordKey: [UInt8]) throws(Failure) -> [UInt32: [UInt8]] {
        var keys: [UInt32: [UInt8]] = [:]
        for record in classes where record.opensWithPassword {
            guard let key = Nettle.aes256KeyUnwrap(kek: passwordKey, wrapped: record.wrappedKey) else {
                for index in keys.keys { Nettle.wipe(&keys[index]!) }
                throw .wrongPassword
            }
            keys[record.protectionClass] = key
        }
        if keys.isEmpty {
            throw .malformed("no class key is wrapped by the password alone (WRAP 2): a backup made without a password")
        }
        return keys
    }

    /// The elements' values by tag: the header's (up to the second `UUID`), then each class record's. Every
    /// element is read through `reader`, so a length that runs past the keybag is an error, never a read past it.
    private static func elements(
        _ reader: ByteReader
    ) throws(Failure) -> (header: [String: [UInt8]], records: [[String: [UInt8]]]) {
        var reader = reader
        var header: [String: [UInt8]] = [:]
        var records: [[String: [UInt8]]] = []
        var uuids = 0
        while !reader.isAtEnd {
            let offset = reader.position
            let left = reader.remaining
            let tagBytes: ByteReader
            let length: UInt32
            do throws(ByteReadError) {
                tagBytes = try reader.read(count: 4)
                length = try reader.readU32(.bigEndian)
            } catch {
                throw .malformed("a truncated element at byte \(offset) (\(left) bytes left)")
            }
            guard tagBytes.unsafeBytes.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                throw .malformed("the element at byte \(offset) has no ASCII tag")
            }
            let tag = String(decoding: tagBytes.unsafeBytes, as: UTF8.self)
            let value: [UInt8]
            do throws(ByteReadError) {
                value = try Array(reader.read(count: Int(length)).unsafeBytes)
            } catch {
                throw .malformed("element '\(tag)' at byte \(offset) is \(length) bytes long, past the end")
            }
            if tag == "UUID" {
                uuids += 1
                if uuids >= 2 { records.append([:]) }
            }
            if records.isEmpty {
                header[tag] = value
            } else {
                records[records.count - 1][tag] = value
            }
        }
        return (header, records)
    }

    /// The big-endian 32-bit integer that is `value`'s first four bytes; nil when it is shorter.
    private static func bigEndian32(_ value: [UInt8]) -> UInt32? {
        ByteReader.reading(value) { reader in try? reader.u32(at: 0, .bigEndian) }
    }
}

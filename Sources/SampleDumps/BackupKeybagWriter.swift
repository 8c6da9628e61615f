import ApexNettle
import Foundation

/// Writes a `BackupKeyBag` as an encrypted Finder backup's `Manifest.plist` holds it (`ios-encrypted-backups.md`
/// §1.3, §1.4), from a known password: the header (VERS 5, TYPE 1, UUID, HMCK, WRAP 0, SALT, ITER, DPWT, DPIC,
/// DPSL), then one record per class (UUID, CLAS, WRAP, KTYP, WPKY). Written from the format alone, by this
/// project's own code; the keys and salts come from a seeded generator, so the same seed gives the same bytes.
public struct BackupKeybagWriter: Sendable {
    /// The password (UTF-8).
    public var password: String
    /// PBKDF2-HMAC-SHA1 rounds (`ITER`) and PBKDF2-HMAC-SHA256 rounds (`DPIC`; nil for a pre-10.2 keybag).
    public var iterations: UInt32, passwordIterations: UInt32?
    /// The classes and their `WRAP`: 2 for classes 1–8 (the password's key alone), 3 for 9–11 (the device's key
    /// too), as a backup with a password has them.
    public var classes: [(protectionClass: UInt32, wrap: UInt32)]
    /// The generator's seed.
    public var seed: UInt64

    /// A writer with a backup's usual classes and small round counts (tests stay fast).
    public init(
        password: String, iterations: UInt32 = 10, passwordIterations: UInt32? = 100, seed: UInt64 = 1,
        classes: [(protectionClass: UInt32, wrap: UInt32)] = (1...11).map { ($0, $0 >= 9 ? 3 : 2) }
    ) {
        self.password = password
        self.iterations = iterations
        self.passwordIterations = passwordIterations
        self.classes = classes
        self.seed = seed
    }

    /// The keybag's bytes, and the class keys it wraps, by class (those of WRAP 3 wrapped by the password's key
    /// only here: the device's second step can't be made off a phone, and it is never undone off one either).
    public func write() -> (keybag: [UInt8], classKeys: [UInt32: [UInt8]]) {
        var random = SampleRandom(seed: seed)
        func bytes(_ count: Int) -> [UInt8] { Array(random.bytes(count)) }
        let salt = bytes(20)
        let passwordSalt = bytes(20)
        var out: [UInt8] = []
        func element(_ tag: String, _ value: [UInt8]) {
            out += Array(tag.utf8)
            out += Self.be32(UInt32(value.count))
            out += value
        }
        element("VERS", Self.be32(passwordIterations == nil ? 3 : 5))
        element("TYPE", Self.be32(1))
        element("UUID", bytes(16))
        element("HMCK", [UInt8](repeating: 0, count: 40))
        element("WRAP", Self.be32(0))
        element("SALT", salt)
        element("ITER", Self.be32(iterations))
        if let passwordIterations {
            element("DPWT", Self.be32(1))
            element("DPIC", Self.be32(passwordIterations))
            element("DPSL", passwordSalt)
        }
        // The password's key, derived as a phone does (§1.4).
        let password = Array(self.password.utf8)
        let first =
            passwordIterations.map {
                Nettle.pbkdf2SHA256(password: password, salt: passwordSalt, iterations: Int($0), length: 32)
            } ?? password
        let key = Nettle.pbkdf2SHA1(password: first, salt: salt, iterations: Int(iterations), length: 32)
        var classKeys: [UInt32: [UInt8]] = [:]
        for (protectionClass, wrap) in classes {
            let classKey = bytes(32)
            classKeys[protectionClass] = classKey
            element("UUID", bytes(16))
            element("CLAS", Self.be32(protectionClass))
            element("WRAP", Self.be32(wrap))
            element("KTYP", Self.be32(0))
            element("WPKY", Nettle.aes256KeyWrap(kek: key, key: classKey))
        }
        return (out, classKeys)
    }

    static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }

    static func be32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

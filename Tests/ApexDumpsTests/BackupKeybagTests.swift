import ApexDumps
import Foundation
import SampleDumps
import Testing

/// Issue 32, the first step of an encrypted backup: its keybag, read and opened with the password
/// (`ios-encrypted-backups.md` §1.3, §1.4). The keybags are this project's writer's, from a known password; the
/// derivation's result is checked against Python's `hashlib` in `NettleKnownAnswerTests`.
@Suite("Encrypted backups: the keybag")
struct BackupKeybagTests {
    static let written = BackupKeybagWriter(password: "sample-backup-password").write()

    @Test("the header and the class records are read as written")
    func reads() throws {
        let keybag = try BackupKeybag(Self.written.keybag)
        #expect(keybag.version == 5 && keybag.type == 1)
        #expect(keybag.iterations == 10 && keybag.passwordIterations == 100)
        #expect(keybag.salt.count == 20 && keybag.passwordSalt?.count == 20)
        #expect(keybag.classes.map(\.protectionClass) == Array(1...11))
        #expect(keybag.classes.filter(\.opensWithPassword).map(\.protectionClass) == Array(1...8))
    }

    @Test("the password opens the classes wrapped by its key alone; the ThisDeviceOnly classes stay shut")
    func opens() throws {
        let keybag = try BackupKeybag(Self.written.keybag)
        let keys = try keybag.classKeys(passwordKey: keybag.passwordKey(Array("sample-backup-password".utf8)))
        #expect(keys.keys.sorted() == Array(1...8))
        for (protectionClass, key) in keys { #expect(key == Self.written.classKeys[protectionClass]) }
    }

    @Test("a wrong password fails the key unwrap's integrity check")
    func wrongPassword() throws {
        let keybag = try BackupKeybag(Self.written.keybag)
        #expect(throws: BackupKeybag.Failure.wrongPassword) {
            try keybag.classKeys(passwordKey: keybag.passwordKey(Array("sample-backup-passwore".utf8)))
        }
    }

    @Test("a keybag before iOS 10.2 (no DPSL, DPIC) derives the key with PBKDF2-SHA1 alone")
    func beforeTenTwo() throws {
        let written = BackupKeybagWriter(password: "old", passwordIterations: nil).write()
        let keybag = try BackupKeybag(written.keybag)
        #expect(keybag.version == 3 && keybag.passwordSalt == nil)
        let keys = try keybag.classKeys(passwordKey: keybag.passwordKey(Array("old".utf8)))
        #expect(keys[6] == written.classKeys[6])
    }

    @Test("a backup made without a password (every class WRAP 3) says so")
    func noPassword() throws {
        let written = BackupKeybagWriter(password: "", classes: (1...11).map { ($0, 3) }).write()
        let keybag = try BackupKeybag(written.keybag)
        #expect(throws: BackupKeybag.Failure.self) { try keybag.classKeys(passwordKey: keybag.passwordKey([])) }
        do {
            _ = try keybag.classKeys(passwordKey: keybag.passwordKey([]))
        } catch {
            #expect(error != .wrongPassword)
        }
    }

    /// The real defaults of a backup since iOS 10.2: 10,000,000 rounds of PBKDF2-SHA256, then 10,000 of
    /// PBKDF2-SHA1; the key is Python's `hashlib` for the same password and salts.
    @Test("the real default rounds derive the key Python's hashlib derives")
    func realDefaultRounds() throws {
        func element(_ tag: String, _ value: [UInt8]) -> [UInt8] {
            Array(tag.utf8) + withUnsafeBytes(of: UInt32(value.count).bigEndian) { Array($0) } + value
        }
        func number(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
        var bytes =
            element("VERS", number(5)) + element("TYPE", number(1)) + element("UUID", Array(repeating: 1, count: 16))
        bytes += element("SALT", Array(100..<120)) + element("ITER", number(10_000))
        bytes += element("DPIC", number(10_000_000)) + element("DPSL", Array(0..<20))
        bytes +=
            element("UUID", Array(repeating: 2, count: 16)) + element("CLAS", number(6)) + element("WRAP", number(2))
        bytes += element("WPKY", Array(repeating: 3, count: 40))
        let keybag = try BackupKeybag(bytes)
        #expect(keybag.passwordIterations == 10_000_000 && keybag.iterations == 10_000)
        let key = keybag.passwordKey(Array("sample-backup-password".utf8))
        let expected = "5844e96702f6e7a5817a10ad64ed6f6ac71df1997e579d609b18dab7d9de870e"
        #expect(key.map { String(format: "%02x", $0) }.joined() == expected)
    }

    @Test("a truncated keybag, or one that is not a keybag, is malformed with where and what")
    func malformed() {
        let bytes = Self.written.keybag
        for cut in [3, 8, 30, bytes.count - 1] {
            #expect(throws: BackupKeybag.Failure.self, "cut at \(cut)") { try BackupKeybag(Array(bytes.prefix(cut))) }
        }
        #expect(throws: BackupKeybag.Failure.malformed("no 'VERS' in the header: not a keybag")) {
            try BackupKeybag([])
        }
        var binary = bytes
        binary[0] = 0x01
        #expect(throws: BackupKeybag.Failure.malformed("the element at byte 0 has no ASCII tag")) {
            try BackupKeybag(binary)
        }
        // VERS and TYPE are 12 bytes each, then the first UUID's 8-byte head and 16-byte value.
        #expect(throws: BackupKeybag.Failure.malformed("a truncated element at byte 0 (3 bytes left)")) {
            try BackupKeybag(Array(bytes.prefix(3)))
        }
        #expect(throws: BackupKeybag.Failure.malformed("a truncated element at byte 24 (6 bytes left)")) {
            try BackupKeybag(Array(bytes.prefix(30)))
        }
        #expect(throws: BackupKeybag.Failure.malformed("element 'UUID' at byte 24 is 16 bytes long, past the end")) {
            try BackupKeybag(Array(bytes.prefix(40)))
        }
        let longVersion = Array("VERS".utf8) + [0, 0, 0, 5, 0, 0, 0, 0, 5]
        #expect(throws: BackupKeybag.Failure.malformed("the header's 'VERS' is 5 bytes, not 4")) {
            try BackupKeybag(longVersion)
        }
    }
}

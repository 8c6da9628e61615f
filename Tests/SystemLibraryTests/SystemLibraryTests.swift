import CLibXML2
import CNettle
import CSQLite
import CSodium
import Foundation
import Testing

/// The four system libraries link and answer: a fresh machine that lacks one fails here, by name.
@Suite("System libraries")
struct SystemLibraryTests {
    @Test("Nettle derives a PBKDF2-HMAC-SHA256 key")
    func nettleDerives() {
        var out = [UInt8](repeating: 0, count: 32)
        let password = Array("password".utf8)
        let salt = Array("salt".utf8)
        nettle_pbkdf2_hmac_sha256(password.count, password, 1, salt.count, salt, out.count, &out)
        #expect(out.prefix(4) == [0x12, 0x0f, 0xb6, 0xcf])
    }

    @Test("libsodium initialises and seals with XChaCha20-Poly1305")
    func sodiumSeals() {
        #expect(sodium_init() >= 0)
        var key = [UInt8](repeating: 7, count: Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES))
        var nonce = [UInt8](repeating: 1, count: Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES))
        let message = Array("canary".utf8)
        var sealed = [UInt8](repeating: 0, count: message.count + Int(crypto_aead_xchacha20poly1305_ietf_ABYTES))
        var sealedLength: UInt64 = 0
        let rc = crypto_aead_xchacha20poly1305_ietf_encrypt(
            &sealed, &sealedLength, message, UInt64(message.count), nil, 0, nil, &nonce, &key)
        #expect(rc == 0)
        #expect(Int(sealedLength) == message.count + 16)
        #expect(Array(sealed.prefix(message.count)) != message)
    }

    @Test("SQLite opens an in-memory database and runs a statement")
    func sqliteRuns() {
        var db: OpaquePointer?
        #expect(sqlite3_open(":memory:", &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        #expect(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", nil, nil, nil) == SQLITE_OK)
        #expect(sqlite3_changes(db) == 1)
    }

    @Test("libxml2 parses a document without network or entity expansion")
    func libxmlParses() {
        let xml = "<map><string name=\"k\">v</string></map>"
        let doc = xml.withCString {
            xmlReadMemory($0, Int32(strlen($0)), "t.xml", nil, Int32(XML_PARSE_NONET.rawValue))
        }
        #expect(doc != nil)
        if let doc { xmlFreeDoc(doc) }
    }
}

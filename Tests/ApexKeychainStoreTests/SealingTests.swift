import ApexKeychain
import ApexKeychainStore
import ApexTestSupport
import Foundation
import Testing

/// Values are sealed: no plaintext reaches the disk, and a sealed value opens only in the row, and under the
/// protection, it was written for.
@Suite("Sealing")
struct SealingTests {
    let scratch: ScratchFolder
    let store: TestStore

    init() throws {
        scratch = try ScratchFolder("store-test")
        store = TestStore(scratch)
    }

    // MARK: No plaintext on disk

    /// Distinctive values that must never be found in any file.
    struct Canaries {
        let strings: [String] = ["CANARY-alpha-5f0c1e9a-string", "CANARY-ünïcødé-€-🔑-b7d2", Canaries.long]
        let bytes: [Data] = [
            Data("CANARY-bytes-0x9d41aa".utf8) + Data([0x00, 0xFF, 0x10, 0xC3, 0x28, 0xFE]),
            Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 13) }),
        ]
        /// Overwritten later: the first value of an item that gets a new one.
        let overwritten = "CANARY-overwritten-first-value-3c8e"
        /// Removed later.
        let removed = "CANARY-removed-value-e41b"
        /// A credentials password.
        let password = "CANARY-password-hunter2-77aa"

        /// A value of about 200 KB (spills into SQLite overflow pages), no window of which repeats.
        static let long: String = (0..<10_000).map { String(format: "LONG-CANARY-%06d|", $0) }.joined()

        /// Every byte string that must not occur in a file: each canary's UTF-8 and UTF-16LE, and for the
        /// long one windows from its start, middle and end.
        var needles: [(String, Data)] {
            var result: [(String, Data)] = []
            for (index, string) in (strings + [overwritten, removed, password]).enumerated() {
                let utf8 = Data(string.utf8)
                if utf8.count > 64 {
                    for start in [0, utf8.count / 2, utf8.count - 48] {
                        result.append(("string \(index) window \(start)", utf8.subdata(in: start..<start + 48)))
                    }
                } else {
                    result.append(("string \(index)", utf8))
                }
                var utf16 = Data()
                for unit in string.prefix(24).utf16 {
                    utf16.append(contentsOf: [UInt8(unit & 0xFF), UInt8(unit >> 8)])
                }
                result.append(("string \(index) as UTF-16", utf16))
            }
            for (index, data) in bytes.enumerated() {
                if data.count > 64 {
                    for start in [0, data.count / 2, data.count - 32] {
                        result.append(("bytes \(index) window \(start)", data.subdata(in: start..<start + 32)))
                    }
                } else {
                    result.append(("bytes \(index)", data))
                }
            }
            return result
        }
    }

    /// Every file in the store's folder, by name.
    func filesInFolder() throws -> [(String, Data)] {
        try scratch.names().map { ($0, try Data(contentsOf: scratch.file($0))) }
    }

    func expectNoCanary(_ canaries: Canaries, _ moment: String) throws {
        let files = try filesInFolder()
        #expect(files.contains { $0.0 == "store.db" })
        #expect(files.contains { $0.0 == "store.db.key" })
        for (name, contents) in files {
            for (what, needle) in canaries.needles where contains(contents, needle) {
                Issue.record("\(moment): \(what) found in \(name)")
            }
        }
    }

    @Test("no value, old or removed, reaches any file in the store's folder, before or after closing")
    func noPlaintextOnDisk() async throws {
        let canaries = Canaries()
        do {
            let db = try store.create()
            let kc = try keychain(db)
            for (index, value) in canaries.strings.enumerated() {
                try await kc.setItem("string-\(index)", value, SetOptions(label: "label \(index)"))
            }
            for (index, value) in canaries.bytes.enumerated() {
                try await kc.setBytes("bytes-\(index)", value)
            }
            try await kc.setItem("guarded", canaries.strings[0], SetOptions(accessControl: .biometryAny))
            try await kc.setItem("renewed", canaries.overwritten)
            try await kc.setItem("renewed", "plain new value")
            try await kc.setItem("staged-renewed", canaries.overwritten, SetOptions(accessControl: .biometryAny))
            try await kc.setItem("staged-renewed", "plain newer value", SetOptions(accessControl: .biometryAny))
            try await kc.setItem("gone", canaries.removed)
            try await kc.removeItem("gone")
            try await kc.setCredentials(Credentials(username: "user", password: canaries.password))

            // The values are really there and read back (so the store is not simply empty).
            #expect(try await kc.getItem("string-0") == canaries.strings[0])
            #expect(try await kc.getItem("guarded") == canaries.strings[0])
            #expect(try await kc.getItem(String("string-\(canaries.strings.count - 1)")) == Canaries.long)
            #expect(try await kc.getBytes("bytes-0") == canaries.bytes[0])
            #expect(try await kc.getItem("renewed") == "plain new value")
            #expect(try await kc.getItem("gone") == nil)

            // While the store is open: the WAL holds the recent pages.
            #expect(try scratch.names().contains("store.db-wal"))
            try expectNoCanary(canaries, "while open")
        }
        try expectNoCanary(canaries, "after closing")

        // The same scan finds a value that is not sealed: a canary written in the clear as a label.
        do {
            let db = try store.open()
            try await keychain(db).setItem("control", "x", SetOptions(label: canaries.removed))
        }
        #expect(try filesInFolder().contains { contains($0.1, Data(canaries.removed.utf8)) })
    }

    @Test("the key in the key file does not appear in the store")
    func keyNotInStore() async throws {
        do {
            let db = try store.create()
            try await keychain(db).setItem("k", "v")
        }
        let text = try String(contentsOf: store.keyFile, encoding: .utf8)
        let key = try #require(Data(base64Encoded: String(text.dropFirst("apex-keychain key v1\n".count).dropLast())))
        for name in try scratch.names() where name != "store.db.key" {
            #expect(!contains(try Data(contentsOf: scratch.file(name)), key), "the key file's key is in \(name)")
        }
    }

    @Test("every sealed value has a fresh random nonce: the same value sealed 64 times shares no nonce")
    func freshNonces() async throws {
        try await populate((0..<64).map { ("k\($0)", "same value") })
        let nonces = try store.raw().rows("SELECT hex(substr(data, 1, 24)) FROM items").map { $0[0] ?? "" }
        #expect(nonces.count == 64)
        #expect(Set(nonces).count == 64, "two values were sealed with the same nonce")
        #expect(!nonces.contains(String(repeating: "0", count: 48)), "a nonce was left zero")
        let db = try store.open()
        for index in [0, 63] { #expect(try await keychain(db).getItem("k\(index)") == "same value") }
    }

    // MARK: Tampering with the file

    /// Writes `items` (key → value) with `service`'s keychain on a new store, and closes it.
    func populate(_ items: [(String, String)], service: String = "s", _ options: SetOptions = SetOptions()) async throws
    {
        let db = try store.create()
        let kc = try keychain(db, service: service)
        for (key, value) in items { try await kc.setItem(key, value, options) }
    }

    /// Edits the closed store from outside with `sql`, checking that it changed exactly `rows` rows.
    func tamper(_ sql: String, rows: Int = 1) throws {
        let raw = try store.raw()
        try raw.execute(sql)
        #expect(raw.changes == rows, "the edit '\(sql)' changed \(raw.changes) rows")
    }

    /// Reads `key` through the core and expects INTERNAL "damaged", no value, and no value in the message.
    func expectDamaged(
        _ kc: Keychain, _ key: String, notMentioning secrets: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let error = await #expect(throws: KeychainError.self, sourceLocation: sourceLocation) {
            let value = try await kc.getBytes(key)
            Issue.record(
                "the read returned \(value.map { "\($0.count) bytes" } ?? "nil")", sourceLocation: sourceLocation)
        }
        #expect(error?.code == .INTERNAL, sourceLocation: sourceLocation)
        #expect(error?.message.contains("damaged") == true, "\(error?.message ?? "")", sourceLocation: sourceLocation)
        for secret in secrets where error?.message.contains(secret) == true {
            Issue.record("the message gives a value away: \(error?.message ?? "")", sourceLocation: sourceLocation)
        }
    }

    @Test("a value copied into another row does not open there: the read fails as damaged and returns nothing")
    func valueMovedToAnotherRow() async throws {
        try await populate([("a", "secret-of-a"), ("b", "secret-of-b")])
        try tamper("UPDATE items SET data = (SELECT data FROM items WHERE acct = 'a') WHERE acct = 'b'")
        let kc = try keychain(try store.open())
        await expectDamaged(kc, "b", notMentioning: ["secret-of-a", "secret-of-b"])
        #expect(try await kc.getItem("a") == "secret-of-a")
        #expect(try await kc.hasItem("b"), "the damaged item is reported, not silently dropped")
    }

    @Test("a value copied to an item of another service, under the same key, does not open there")
    func valueMovedToAnotherService() async throws {
        do {
            let db = try store.create()
            try await keychain(db, service: "one").setItem("k", "secret-one")
            try await keychain(db, service: "two").setItem("k", "secret-two")
        }
        try tamper("UPDATE items SET data = (SELECT data FROM items WHERE svce = 'one') WHERE svce = 'two'")
        let db = try store.open()
        await expectDamaged(try keychain(db, service: "two"), "k", notMentioning: ["secret-one", "secret-two"])
        #expect(try await keychain(db, service: "one").getItem("k") == "secret-one")
    }

    @Test("two rows whose values were swapped both fail as damaged")
    func valuesSwapped() async throws {
        try await populate([("a", "secret-of-a"), ("b", "secret-of-b")])
        let raw = try store.raw()
        try raw.execute(
            """
            CREATE TEMP TABLE saved AS SELECT acct, data FROM items;
            UPDATE items SET data = (SELECT data FROM saved WHERE saved.acct = CASE items.acct WHEN 'a' THEN 'b' ELSE 'a' END);
            """)
        let kc = try keychain(try store.open())
        await expectDamaged(kc, "a", notMentioning: ["secret-of-a", "secret-of-b"])
        await expectDamaged(kc, "b", notMentioning: ["secret-of-a", "secret-of-b"])
    }

    @Test(
        "an item whose accessible class (pdmn) was edited does not open",
        arguments: [("ak", "ck"), ("ak", "aku"), ("ck", "ak")])
    func protectionDomainEdited(_ edit: (String, String)) async throws {
        let accessible: Accessible = edit.0 == "ak" ? .whenUnlocked : .afterFirstUnlock
        try await populate([("a", "secret-of-a"), ("b", "secret-of-b")], SetOptions(accessible: accessible))
        try tamper("UPDATE items SET pdmn = '\(edit.1)' WHERE acct = 'b' AND pdmn = '\(edit.0)'")
        let db = try store.open()
        let kc = try keychain(db)
        await expectDamaged(kc, "b", notMentioning: ["secret-of-b"])
        #expect(try await kc.getItem("a") == "secret-of-a")
    }

    @Test("an item whose access control (accc) was edited does not open")
    func accessControlEdited() async throws {
        try await populate([("a", "secret-of-a"), ("b", "secret-of-b")])
        try tamper("UPDATE items SET accc = 2 WHERE acct = 'b' AND accc = 0")
        let db = try store.open()
        await expectDamaged(try keychain(db), "b", notMentioning: ["secret-of-b"])
        let key = try #require(try db.attributes(matching: ItemQuery(account: "b")).first).primaryKey
        let error = #expect(throws: KeychainDatabaseError.self) { _ = try db.value(for: key) }
        #expect(error?.status == .damaged)
    }

    @Test("a biometry item downgraded in the file to no access control does not open, and shows no prompt")
    func accessControlDowngraded() async throws {
        try await populate([("a", "secret-of-a"), ("b", "secret-of-b")], SetOptions(accessControl: .biometryAny))
        // Remove the access control from the row and from the package's metadata alike, as an attacker would.
        try tamper(
            """
            UPDATE items SET accc = 0,
              gena = CAST(replace(CAST(gena AS TEXT), 'ac=biometryAny', 'ac=none') AS BLOB)
            WHERE acct = 'b'
            """)
        let db = try store.open()
        #expect(try db.attributes(matching: ItemQuery(account: "b")).first?.accessControl == [])
        let device = try #require(db.makeDevice() as? SimulatedDevice)
        let kc = try Keychain(KeychainOptions(service: "s"), database: db, device: device)
        #expect(try await kc.getItemInfo("b")?.accessControl == AccessControl.none, "the edit took effect")
        await expectDamaged(kc, "b", notMentioning: ["secret-of-b"])
        #expect(device.promptCount == 0)
        #expect(try await kc.getItem("a") == "secret-of-a")
        #expect(device.promptCount == 1)
    }

    @Test("an item whose creator (crtr) was edited does not open")
    func creatorEdited() async throws {
        try await populate([("a", "secret-of-a")])
        try tamper("UPDATE items SET crtr = crtr + 1 WHERE acct = 'a'")
        let db = try store.open()
        let key = try #require(try db.attributes(matching: ItemQuery(account: "a")).first).primaryKey
        let error = #expect(throws: KeychainDatabaseError.self) { _ = try db.value(for: key) }
        #expect(error?.status == .damaged)
        #expect(error?.message.contains("secret-of-a") == false)
    }

    @Test("an item moved to another key (acct edited) no longer opens, and the old key is gone")
    func accountEdited() async throws {
        try await populate([("a", "secret-of-a"), ("b", "secret-of-b")])
        try tamper("UPDATE items SET acct = 'z' WHERE acct = 'a'")
        let db = try store.open()
        let kc = try keychain(db)
        #expect(try await kc.getAllKeys() == ["b", "z"])
        await expectDamaged(kc, "z", notMentioning: ["secret-of-a"])
        #expect(try await kc.getItem("a") == nil)
        #expect(try await kc.getItem("b") == "secret-of-b")
    }

    @Test("an item moved to another service (svce edited) no longer opens")
    func serviceEdited() async throws {
        try await populate([("a", "secret-of-a")])
        try tamper("UPDATE items SET svce = 'other' WHERE acct = 'a'")
        let db = try store.open()
        await expectDamaged(try keychain(db, service: "other"), "a", notMentioning: ["secret-of-a"])
        #expect(try await keychain(db).getItem("a") == nil)
    }

    /// Edits of the sealed value of item `a`: a changed byte in the nonce, the ciphertext and the tag; cut short;
    /// emptied; lengthened.
    static let sealedValueEdits = [
        "CAST((CASE WHEN substr(data, 1, 1) = x'00' THEN x'01' ELSE x'00' END) || substr(data, 2) AS BLOB)",
        "CAST(substr(data, 1, 29) || (CASE WHEN substr(data, 30, 1) = x'00' THEN x'01' ELSE x'00' END) || substr(data, 31) AS BLOB)",
        "CAST(substr(data, 1, length(data) - 1) || (CASE WHEN substr(data, -1) = x'00' THEN x'01' ELSE x'00' END) AS BLOB)",
        "CAST(substr(data, 1, 30) AS BLOB)",
        "x''",
        "CAST(data || x'00' AS BLOB)",
    ]

    @Test("a changed, cut or lengthened sealed value fails as damaged", arguments: sealedValueEdits)
    func sealedValueDamaged(_ edit: String) async throws {
        try await populate([("a", "secret-of-a"), ("b", "secret-of-b")])
        let before = try store.raw().text("SELECT hex(data) FROM items WHERE acct = 'a'")
        try tamper("UPDATE items SET data = \(edit) WHERE acct = 'a'")
        let after = try store.raw().text("SELECT hex(data) FROM items WHERE acct = 'a'")
        try #require(before != after, "the edit changed nothing")
        let kc = try keychain(try store.open())
        await expectDamaged(kc, "a", notMentioning: ["secret-of-a"])
        #expect(try await kc.getItem("b") == "secret-of-b")
    }

    @Test("an edit made by another program while the store is open is seen, and refused, by the open store")
    func editWhileOpen() async throws {
        let db = try store.create()
        let kc = try keychain(db)
        try await kc.setItem("a", "secret-of-a")
        try await kc.setItem("b", "secret-of-b")
        try tamper("UPDATE items SET data = (SELECT data FROM items WHERE acct = 'a') WHERE acct = 'b'")
        await expectDamaged(kc, "b", notMentioning: ["secret-of-a", "secret-of-b"])
        #expect(try await kc.getItem("a") == "secret-of-a")
    }
}

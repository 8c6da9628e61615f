import ApexKeychain
import ApexKeychainStore
import Foundation
import Testing

/// The label (a credentials item's username), the generic attribute and the dates are bound to the sealed value
/// too: edited in the file, the value no longer opens.
extension SealingTests {
    @Test(
        "a credentials item whose username (labl) was edited in the file does not open: the password is not served with it"
    )
    func usernameEdited() async throws {
        do {
            let db = try store.create()
            let kc = try keychain(db)
            try await kc.setCredentials(Credentials(username: "alice", password: "password-of-alice"))
            try await kc.setItem("other", "secret-other")
        }
        try tamper("UPDATE items SET labl = 'mallory' WHERE acct = 'credentials'")
        let db = try store.open()
        let kc = try keychain(db)
        #expect(try await kc.getItemInfo("credentials")?.label == "mallory", "the edit took effect")
        let error = await #expect(throws: KeychainError.self) {
            let credentials = try await kc.getCredentials()
            Issue.record("the password was served with the username '\(credentials?.username ?? "")'")
        }
        #expect(error?.code == .INTERNAL)
        #expect(error?.message.contains("damaged") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("password-of-alice") == false)
        await expectDamaged(kc, "credentials", notMentioning: ["password-of-alice"])
        #expect(try await kc.getItem("other") == "secret-other")
    }

    /// Edits of item `a`'s label: another, emptied, removed; and one added to item `b`, which has none.
    static let labelEdits = [
        ("a", "labl = 'other label'"), ("a", "labl = ''"), ("a", "labl = NULL"), ("b", "labl = 'added'"),
    ]

    @Test("a label edited, emptied, removed or added in the file makes the value fail to open", arguments: labelEdits)
    func labelEdited(_ edit: (String, String)) async throws {
        do {
            let kc = try keychain(try store.create())
            try await kc.setItem("a", "secret-of-a", SetOptions(label: "label of a"))
            try await kc.setItem("b", "secret-of-b")
        }
        try tamper("UPDATE items SET \(edit.1) WHERE acct = '\(edit.0)'")
        let kc = try keychain(try store.open())
        await expectDamaged(kc, edit.0, notMentioning: ["secret-of-a", "secret-of-b"])
        let untouched = edit.0 == "a" ? "b" : "a"
        #expect(try await kc.getItem(untouched) == "secret-of-\(untouched)")
    }

    @Test(
        "an item whose creation or modification date was edited does not open",
        arguments: ["cdat = cdat - 86400", "mdat = mdat + 1"])
    func dateEdited(_ edit: String) async throws {
        try await populate([("a", "secret-of-a"), ("b", "secret-of-b")])
        try tamper("UPDATE items SET \(edit) WHERE acct = 'a'")
        let kc = try keychain(try store.open())
        await expectDamaged(kc, "a", notMentioning: ["secret-of-a"])
        #expect(try await kc.getItem("b") == "secret-of-b")
    }

    @Test("an item whose generic attribute (the package's metadata, gena) was edited does not open")
    func genericEdited() async throws {
        try await populate([("a", "secret-of-a")], SetOptions(accessControl: .biometryAny, authValidity: 0))
        // A longer authValidity would keep the item open without a prompt.
        try tamper(
            "UPDATE items SET gena = CAST(replace(CAST(gena AS TEXT), 'av=0', 'av=600') AS BLOB) WHERE acct = 'a'")
        let db = try store.open()
        #expect(
            try db.attributes(matching: ItemQuery(account: "a")).first?.generic.map {
                String(decoding: $0, as: UTF8.self)
            }?
            .contains("av=600") == true, "the edit took effect")
        await expectDamaged(try keychain(db), "a", notMentioning: ["secret-of-a"])
    }

    @Test("a row whose seal binding was set back to 1 in the file does not open")
    func bindingDowngraded() async throws {
        try await populate([("a", "secret-of-a"), ("b", "secret-of-b")], SetOptions(label: "label"))
        #expect(try store.raw().text("SELECT group_concat(seal) FROM items") == "2,2")
        try tamper("UPDATE items SET seal = 1 WHERE acct = 'a'")
        let kc = try keychain(try store.open())
        await expectDamaged(kc, "a", notMentioning: ["secret-of-a"])
        #expect(try await kc.getItem("b") == "secret-of-b")
    }

    @Test("an item moved into place by a staged write (access control) is bound to its label and dates too")
    func stagedWriteBound() async throws {
        do {
            let kc = try keychain(try store.create())
            try await kc.setItem("a", "first", SetOptions(accessControl: .biometryAny, label: "label"))
            try await kc.setItem("a", "second", SetOptions(accessControl: .biometryAny, label: "label"))
            #expect(try await kc.getItem("a") == "second")
        }
        #expect(try store.raw().text("SELECT seal FROM items WHERE acct = 'a'") == "2")
        try tamper("UPDATE items SET labl = 'edited' WHERE acct = 'a'")
        await expectDamaged(try keychain(try store.open()), "a", notMentioning: ["first", "second"])
    }

    @Test(
        "an internet password whose key column was edited in the file does not open under the edited key",
        arguments: ["srvr", "sdmn", "ptcl", "atyp", "port", "path", "sync", "agrp"])
    func keyColumnEdited(_ column: String) throws {
        let original = ItemAttributes(
            itemClass: .internetPassword, service: "", account: "user", accessGroup: "team.group",
            creator: apexCreator, protectionDomain: .ak, server: "example.com", securityDomain: "realm",
            protocolCode: "htps", authenticationType: "dflt", port: 443, path: "/login")
        do {
            let db = try store.create()
            try db.add(KeychainItem(attributes: original, value: Data("secret-of-the-item".utf8)))
        }
        let edits: [String: (value: String, edit: (inout ItemAttributes) -> Void)] = [
            "srvr": ("'evil.example'", { $0.server = "evil.example" }),
            "sdmn": ("'other'", { $0.securityDomain = "other" }), "ptcl": ("'http'", { $0.protocolCode = "http" }),
            "atyp": ("'form'", { $0.authenticationType = "form" }), "port": ("444", { $0.port = 444 }),
            "path": ("'/other'", { $0.path = "/other" }), "sync": ("1", { $0.synchronizable = true }),
            "agrp": ("'other.group'", { $0.accessGroup = "other.group" }),
        ]
        let (value, edit) = try #require(edits[column])
        var edited = original
        edit(&edited)
        try tamper("UPDATE items SET \(column) = \(value)")
        let db = try store.open()
        #expect(try db.item(for: original.primaryKey) == nil)
        for read in [{ _ = try db.item(for: edited.primaryKey) }, { _ = try db.value(for: edited.primaryKey) }] {
            #expect {
                try read()
            } throws: { error in
                (error as? KeychainDatabaseError)?.status == .damaged
            }
        }
    }

    @Test(
        "a row read by its key (item, value, rename) has every attribute it was written with, an internet password's too, as a listing reads them"
    )
    func readByKey() throws {
        let db = try store.create()
        let internet = ItemAttributes(
            itemClass: .internetPassword, service: "", account: "ü-user-with-a-long-name", accessGroup: "team.group",
            creator: 0x7465_7374, label: "", generic: Data([0, 1, 2]), protectionDomain: .akpu,
            accessControl: [.biometryCurrentSet, .devicePasscode], synchronizable: true,
            createdAt: Date(timeIntervalSince1970: 1_767_225_600),
            modifiedAt: Date(timeIntervalSince1970: 1_767_312_000),
            server: "example.com", securityDomain: "realm", protocolCode: "htps", authenticationType: "dflt",
            port: 8443,
            path: "/login")
        let generic = ItemAttributes(service: "s", account: "a", accessGroup: "g", protectionDomain: .ck)
        for (a, value) in [(internet, Data("internet-value".utf8)), (generic, Data())] {
            try db.add(KeychainItem(attributes: a, value: value))
            let read = try #require(try db.item(for: a.primaryKey))
            #expect(read.attributes == a)
            #expect(read.value == value)
            #expect(try db.value(for: a.primaryKey) == value)
            #expect(try db.attributes(matching: ItemQuery()).filter { $0 == a }.count == 1)
        }
        try db.rename(internet.primaryKey, toAccount: "moved")
        var moved = internet
        moved.account = "moved"
        let read = try #require(try db.item(for: moved.primaryKey))
        #expect(read.attributes == moved && read.value == Data("internet-value".utf8))
        #expect(try db.item(for: internet.primaryKey) == nil)
        #expect(try db.attributes(matching: ItemQuery()).filter { $0 == moved }.count == 1)
    }
}

/// The bytes a value is sealed against are the store's format: every store written so far opens only if they stay
/// exactly these. Built here by hand from the layout (binding 2), field by field.
@Suite("Sealed rows' associated data")
struct AssociatedDataLayoutTests {
    /// A field: its length as 4 bytes, most significant first, then its bytes.
    static func field(_ bytes: [UInt8]) -> [UInt8] {
        let count = UInt32(bytes.count)
        return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: count >> $0) } + bytes
    }

    static func field(_ text: String) -> [UInt8] { field(Array(text.utf8)) }

    /// A date as the 8 bytes of its IEEE 754 number, most significant first.
    static func number(_ value: Double) -> [UInt8] {
        let bits = value.bitPattern
        return stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: bits >> UInt64($0)) }
    }

    @Test("binding 2: tag, identity, protection, creator, label, generic and dates, each as the layout says")
    func wholeRowLayout() {
        let created = Date(timeIntervalSince1970: 1_767_225_600.25)
        let modified = Date(timeIntervalSince1970: 1_767_312_000.5)
        let full = ItemAttributes(
            itemClass: .internetPassword, service: "svc", account: "caf\u{E9}", accessGroup: "G.app",
            creator: 0x4170_784B,
            label: "ann", generic: Data([0x00, 0xFF, 0x61]), protectionDomain: .cku, accessControl: [.biometryAny],
            synchronizable: false, createdAt: created, modifiedAt: modified, server: "example.com",
            securityDomain: "realm", protocolCode: "htps", authenticationType: "dflt", port: 8443, path: "/a")
        var expected = Array("apxk-item-v2".utf8)
        for text in ["inet", "svc", "caf\u{E9}", "G.app", "0", "example.com", "realm", "htps", "dflt", "8443", "/a"] {
            expected += Self.field(text)
        }
        expected += Self.field("cku") + Self.field("2") + Self.field("1097889867")
        expected += [1] + Self.field("ann") + [1] + Self.field([0x00, 0xFF, 0x61])
        expected += Self.number(created.timeIntervalSince1970) + Self.number(modified.timeIntervalSince1970)
        #expect(SQLiteKeychainDatabase.associatedData(of: full) == expected)

        // No creator, no label, no generic, synchronizable, no internet fields, dates at zero.
        let bare = ItemAttributes(service: "s", account: "k", accessGroup: "g", synchronizable: true)
        var expectedBare = Array("apxk-item-v2".utf8)
        for text in ["genp", "s", "k", "g", "1", "", "", "", "", "0", ""] { expectedBare += Self.field(text) }
        expectedBare += Self.field("ak") + Self.field("0") + Self.field("-") + [0] + [0]
        expectedBare += Self.number(0) + Self.number(0)
        #expect(SQLiteKeychainDatabase.associatedData(of: bare) == expectedBare)
    }
}

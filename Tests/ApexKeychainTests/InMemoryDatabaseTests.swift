import ApexKeychain
import ApexTestSupport
import Foundation
import Testing

/// The public test double ``InMemoryKeychainDatabase``: the ``KeychainDatabase`` contract it shares with every
/// database (primary keys, not-found, counts, query matching), and its own fault injection, locked-away items and
/// write counter.
@Suite("In-memory database")
struct InMemoryDatabaseTests {
    static func item(
        _ account: String, service: String = "svc", group: String = "G.app", creator: UInt32? = apexCreator,
        synchronizable: Bool = false, value: String = "v", label: String? = nil
    ) -> KeychainItem {
        KeychainItem(
            attributes: ItemAttributes(
                service: service, account: account, accessGroup: group, creator: creator, label: label,
                synchronizable: synchronizable),
            value: Data(value.utf8))
    }

    /// Every group these tests put items in: the emulated keychain is given them all, as an app entitled to them
    /// (it refuses any other with errSecMissingEntitlement, `apple-secitem.md` §2.8).
    static let groups = ["G.app", "H.app", "G.other"]

    /// The status of the ``KeychainDatabaseError`` `body` threw, or nil when it did not throw.
    static func status(_ body: () throws -> Void) -> KeychainDatabaseError.Status? {
        do {
            try body()
            return nil
        } catch let error as KeychainDatabaseError {
            return error.status
        } catch {
            Issue.record("expected a KeychainDatabaseError, got \(error)")
            return nil
        }
    }

    /// Every item with its value, as a set: what "nothing changed" compares.
    static func snapshot(_ db: any KeychainDatabase) throws -> Set<String> {
        Set(
            try db.attributes(matching: ItemQuery()).map {
                "\($0) = \(try db.value(for: $0.primaryKey).base64EncodedString())"
            })
    }

    // MARK: The database contract

    @Test(
        "adding an item whose primary key exists fails with duplicateItem and changes nothing",
        arguments: DatabaseKind.allCases)
    func addDuplicate(kind: DatabaseKind) throws {
        let db = try Fixture(kind, accessGroups: Self.groups).database
        try db.add(Self.item("k", value: "first"))
        let before = try Self.snapshot(db)
        #expect(Self.status { try db.add(Self.item("k", creator: nil, value: "second", label: "x")) } == .duplicateItem)
        #expect(try Self.snapshot(db) == before)
    }

    @Test("the primary key includes the access group, synchronizable and the class", arguments: DatabaseKind.allCases)
    func primaryKeyParts(kind: DatabaseKind) throws {
        let db = try Fixture(kind, accessGroups: Self.groups).database
        try db.add(Self.item("k"))
        try db.add(Self.item("k", group: "H.app"))
        try db.add(Self.item("k", synchronizable: true))
        var internet = Self.item("k")
        internet.attributes.itemClass = .internetPassword
        try db.add(internet)
        #expect(try db.attributes(matching: ItemQuery(account: "k")).count == 4)
    }

    @Test("replacing or renaming a missing item fails with itemNotFound", arguments: DatabaseKind.allCases)
    func missingItem(kind: DatabaseKind) throws {
        let db = try Fixture(kind, accessGroups: Self.groups).database
        try db.add(Self.item("present"))
        let missing = Self.item("absent").attributes.primaryKey
        let before = try Self.snapshot(db)
        #expect(Self.status { try db.replace(missing, with: Self.item("absent")) } == .itemNotFound)
        #expect(Self.status { try db.rename(missing, toAccount: "elsewhere") } == .itemNotFound)
        #expect(Self.status { _ = try db.value(for: missing) } == .itemNotFound)
        #expect(try db.delete(missing) == false)
        #expect(try Self.snapshot(db) == before)
    }

    @Test(
        "renaming onto an existing primary key fails with duplicateItem and changes nothing",
        arguments: DatabaseKind.allCases)
    func renameOntoExisting(kind: DatabaseKind) throws {
        let db = try Fixture(kind, accessGroups: Self.groups).database
        let a = Self.item("a", value: "A")
        try db.add(a)
        try db.add(Self.item("b", creator: nil, value: "B"))
        let before = try Self.snapshot(db)
        #expect(Self.status { try db.rename(a.attributes.primaryKey, toAccount: "b") } == .duplicateItem)
        #expect(try Self.snapshot(db) == before)
        // The same rename to a free account moves the item and keeps its value.
        try db.rename(a.attributes.primaryKey, toAccount: "c")
        #expect(try db.attributes(matching: ItemQuery(account: "a")).isEmpty)
        let moved = try #require(try db.attributes(matching: ItemQuery(account: "c")).first)
        #expect(try db.value(for: moved.primaryKey) == Data("A".utf8))
    }

    @Test(
        "delete(matching:) deletes every match and returns how many; delete(_:) says whether there was one",
        arguments: DatabaseKind.allCases)
    func deleteCounts(kind: DatabaseKind) throws {
        let db = try Fixture(kind, accessGroups: Self.groups).database
        for account in ["a", "b", "c"] { try db.add(Self.item(account)) }
        try db.add(Self.item("a", service: "other"))
        #expect(try db.delete(matching: ItemQuery(service: "svc")) == 3)
        #expect(try db.delete(matching: ItemQuery(service: "svc")) == 0)
        #expect(try db.attributes(matching: ItemQuery()).map(\.service) == ["other"])
        let last = Self.item("a", service: "other").attributes.primaryKey
        #expect(try db.delete(last) == true)
        #expect(try db.delete(last) == false)
        #expect(try db.attributes(matching: ItemQuery()).isEmpty)
    }

    @Test(
        "attributes(matching:orAccount:) finds the query's items and those under the other account, each once, accounts compared byte for byte",
        arguments: DatabaseKind.allCases)
    func queryEitherAccount(kind: DatabaseKind) throws {
        let db = try Fixture(kind, accessGroups: Self.groups).database
        try db.add(Self.item("k"))
        try db.add(Self.item("k", synchronizable: true))
        try db.add(Self.item("k\u{0}staged"))
        try db.add(Self.item("k\u{0}staged", service: "svc2"))
        try db.add(Self.item("caf\u{E9}"))
        try db.add(Self.item("cafe\u{301}"))
        try db.add(Self.item("other"))
        // Accounts that sort between a key and its staging account, or just past it, and the key in another group.
        for decoy in ["k\u{0}", "k\u{0}a", "k\u{0}stagec", "k\u{0}staged\u{0}", "k\u{1}", "ka"] {
            try db.add(Self.item(decoy))
        }
        try db.add(Self.item("k", group: "G.other"))
        try db.add(Self.item("k\u{0}staged", group: "G.other"))
        func found(_ query: ItemQuery, _ account: String) throws -> [String] {
            try db.attributes(matching: query, orAccount: account).map { "\($0.account)/\($0.synchronizable)" }.sorted()
        }
        let key = ItemQuery(service: "svc", account: "k", accessGroup: "G.app")
        #expect(try found(key, "k\u{0}staged") == ["k/false", "k/true", "k\u{0}staged/false"].sorted())
        #expect(
            try found(ItemQuery(service: "svc", account: "k\u{0}staged", accessGroup: "G.app"), "k")
                == ["k/false", "k/true", "k\u{0}staged/false"].sorted())
        #expect(
            try found(ItemQuery(service: "svc", account: "k", accessGroup: "G.other"), "k\u{0}staged")
                == ["k/false", "k\u{0}staged/false"].sorted())
        #expect(
            try found(ItemQuery(service: "svc", account: "k\u{0}"), "k\u{0}a")
                == ["k\u{0}/false", "k\u{0}a/false"].sorted())
        #expect(try found(key, "k") == ["k/false", "k/true"])
        #expect(try found(key, "missing") == ["k/false", "k/true"])
        #expect(try found(ItemQuery(service: "svc", account: "caf\u{E9}"), "nothing") == ["caf\u{E9}/false"])
        #expect(
            try found(ItemQuery(service: "svc", account: "caf\u{E9}"), "cafe\u{301}")
                == [
                    "caf\u{E9}/false", "cafe\u{301}/false",
                ].sorted())
        // A query without an account already matches every account.
        #expect(try found(ItemQuery(service: "svc2"), "k") == ["k\u{0}staged/false"])
    }

    @Test("a nil query field matches any value; synchronizable nil matches both", arguments: DatabaseKind.allCases)
    func queryMatching(kind: DatabaseKind) throws {
        let db = try Fixture(kind, accessGroups: Self.groups).database
        try db.add(Self.item("own"))
        try db.add(Self.item("own-synced", synchronizable: true))
        try db.add(Self.item("no-creator", creator: nil))
        try db.add(Self.item("other-creator", creator: 0x524E_4B43))
        try db.add(Self.item("other-group", group: "H.app"))
        try db.add(Self.item("other-service", service: "svc2"))

        func accounts(_ query: ItemQuery) throws -> Set<String> {
            Set(try db.attributes(matching: query).map(\.account))
        }
        let all: Set = ["own", "own-synced", "no-creator", "other-creator", "other-group", "other-service"]
        #expect(try accounts(ItemQuery()) == all)
        #expect(try accounts(ItemQuery(itemClass: .genericPassword)) == all)
        #expect(try accounts(ItemQuery(itemClass: .internetPassword)) == [])
        #expect(try accounts(ItemQuery(service: "svc")) == all.subtracting(["other-service"]))
        #expect(try accounts(ItemQuery(accessGroup: "H.app")) == ["other-group"])
        #expect(try accounts(ItemQuery(account: "own")) == ["own"])
        #expect(try accounts(ItemQuery(creator: apexCreator)) == all.subtracting(["no-creator", "other-creator"]))
        #expect(try accounts(ItemQuery(synchronizable: true)) == ["own-synced"])
        #expect(try accounts(ItemQuery(synchronizable: false)) == all.subtracting(["own-synced"]))
        #expect(
            try accounts(ItemQuery(service: "svc", accessGroup: "G.app", creator: apexCreator)) == [
                "own", "own-synced",
            ])

        let unmarked = Self.item("x", creator: nil).attributes
        #expect(ItemQuery().matches(unmarked))
        #expect(!ItemQuery(creator: apexCreator).matches(unmarked))
        #expect(ItemQuery(synchronizable: nil).matches(Self.item("x", synchronizable: true).attributes))
        #expect(ItemQuery(synchronizable: nil).matches(Self.item("x", synchronizable: false).attributes))
    }

    @Test(
        "item(for:) gives the attributes and value of the item under a primary key, or nil",
        arguments: DatabaseKind.allCases)
    func itemForKey(kind: DatabaseKind) throws {
        let db = try Fixture(kind, accessGroups: Self.groups).database
        let item = Self.item("k", value: "the value", label: "a label")
        try db.add(item)
        try db.add(Self.item("other"))
        let found = try #require(try db.item(for: item.attributes.primaryKey))
        #expect(found.value == item.value)
        #expect(found.attributes.primaryKey == item.attributes.primaryKey && found.attributes.label == "a label")
        #expect(try db.item(for: Self.item("none").attributes.primaryKey) == nil)
        #expect(try db.item(for: Self.item("k", synchronizable: true).attributes.primaryKey) == nil)
    }

    @Test("item(for:) of an item locked away fails as value(for:) does")
    func itemForLockedAway() throws {
        let db = InMemoryKeychainDatabase()
        let item = Self.item("k")
        try db.add(item)
        db.setLockedAway(item.attributes.primaryKey)
        #expect(Self.status { _ = try db.item(for: item.attributes.primaryKey) } == .interactionNotAllowed)
    }

    // MARK: Transactions

    struct Abort: Error {}

    @Test(
        "atomically keeps every write of a scope that returns, and undoes every write of one that throws",
        arguments: DatabaseKind.allCases)
    func atomicScope(kind: DatabaseKind) throws {
        let db = try Fixture(kind, accessGroups: Self.groups).database
        try db.add(Self.item("kept", value: "old"))
        try db.atomically {
            try db.add(Self.item("a"))
            try db.replace(Self.item("kept").attributes.primaryKey, with: Self.item("kept", value: "new"))
        }
        let committed = try Self.snapshot(db)
        #expect(committed.count == 2)
        #expect(throws: Abort.self) {
            try db.atomically {
                try db.add(Self.item("b"))
                try db.rename(Self.item("a").attributes.primaryKey, toAccount: "a2")
                try db.delete(Self.item("kept").attributes.primaryKey)
                throw Abort()
            }
        }
        if kind.groupsWrites {
            #expect(try Self.snapshot(db) == committed, "nothing of the scope that threw is left")
        } else {
            // A keychain can't undo: the writes before the throw stay (`KeychainDatabase.atomically`'s default).
            #expect(try db.attributes(matching: ItemQuery()).map(\.account).sorted() == ["a2", "b"])
        }
    }

    @Test(
        "a nested scope that throws undoes only its own writes, and a write that fails inside a scope changes nothing while the scope goes on",
        arguments: DatabaseKind.allCases)
    func nestedScopes(kind: DatabaseKind) throws {
        let db = try Fixture(kind, accessGroups: Self.groups).database
        try db.atomically {
            try db.add(Self.item("outer"))
            #expect(throws: Abort.self) {
                try db.atomically {
                    try db.add(Self.item("inner"))
                    throw Abort()
                }
            }
            #expect(Self.status { try db.add(Self.item("outer", value: "again")) } == .duplicateItem)
            try db.add(Self.item("after"))
        }
        // A keychain can't undo the inner scope's write (`KeychainDatabase.atomically`'s default).
        let inner = kind.groupsWrites ? [] : ["inner"]
        #expect(
            try db.attributes(matching: ItemQuery()).map(\.account).sorted() == (["after", "outer"] + inner).sorted())
        #expect(try db.value(for: Self.item("outer").attributes.primaryKey) == Data("v".utf8))
    }

    @Test("the in-memory database counts the outermost scopes that returned, as a store counts its commits")
    func committedScopes() throws {
        let db = InMemoryKeychainDatabase()
        try db.atomically { try db.atomically { try db.add(Self.item("a")) } }
        _ = try? db.atomically { throw Abort() }
        try db.exclusively { try db.add(Self.item("b")) }
        #expect(db.committedScopes == 1)
    }

    // MARK: Fault injection and the write counter

    @Test(
        "failWrite(number:) fails exactly the Nth write from now with the given status and changes nothing; later writes succeed"
    )
    func failWriteFailsTheNth() throws {
        let db = InMemoryKeychainDatabase()
        try db.add(Self.item("a"))
        try db.add(Self.item("b"))
        db.failWrite(number: 3, status: .interactionNotAllowed)
        try db.add(Self.item("c"))  // 1
        try db.replace(Self.item("c").attributes.primaryKey, with: Self.item("c", value: "c2"))  // 2
        let before = db.allItems()
        #expect(
            Self.status { try db.rename(Self.item("a").attributes.primaryKey, toAccount: "z") }
                == .interactionNotAllowed)
        #expect(db.allItems() == before)
        try db.rename(Self.item("a").attributes.primaryKey, toAccount: "z")  // 4
        #expect(db.allItems().map(\.attributes.account) == ["b", "c", "z"])

        db.failWrite(number: 1)
        #expect(Self.status { try db.add(Self.item("d")) } == .io)
        try db.add(Self.item("d"))
        #expect(db.allItems().count == 4)
    }

    /// Each kind of write, on a database holding "a" and "b".
    enum WriteKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case add, replace, rename, deleteMatching, deleteKey

        var testDescription: String { rawValue }

        func run(_ db: InMemoryKeychainDatabase) throws(KeychainDatabaseError) {
            let a = InMemoryDatabaseTests.item("a").attributes.primaryKey
            switch self {
            case .add: try db.add(InMemoryDatabaseTests.item("c"))
            case .replace: try db.replace(a, with: InMemoryDatabaseTests.item("a", value: "changed"))
            case .rename: try db.rename(a, toAccount: "moved")
            case .deleteMatching: _ = try db.delete(matching: ItemQuery(service: "svc"))
            case .deleteKey: _ = try db.delete(a)
            }
        }
    }

    @Test("a planted fault changes nothing whichever kind of write it hits", arguments: WriteKind.allCases)
    func faultChangesNothing(write: WriteKind) throws {
        let db = InMemoryKeychainDatabase()
        try db.add(Self.item("a"))
        try db.add(Self.item("b"))
        let before = db.allItems()
        db.failWrite(number: 1, status: .damaged)
        #expect(Self.status { try write.run(db) } == .damaged)
        #expect(db.allItems() == before)
        try write.run(db)
        #expect(db.allItems() != before)
    }

    @Test(
        "a locked-away item refuses replace, rename and its value with interactionNotAllowed; it is still found and deleted"
    )
    func lockedAwayItem() throws {
        let db = InMemoryKeychainDatabase()
        try db.add(Self.item("a"))
        try db.add(Self.item("b"))
        let a = Self.item("a").attributes.primaryKey
        db.setLockedAway(a)
        let before = db.allItems()
        #expect(Self.status { try db.replace(a, with: Self.item("a", value: "changed")) } == .interactionNotAllowed)
        #expect(Self.status { try db.rename(a, toAccount: "moved") } == .interactionNotAllowed)
        #expect(Self.status { _ = try db.value(for: a) } == .interactionNotAllowed)
        #expect(db.allItems() == before)
        #expect(try db.attributes(matching: ItemQuery(account: "a")).count == 1)
        try db.replace(Self.item("b").attributes.primaryKey, with: Self.item("b", value: "changed"))

        db.setLockedAway(a, false)
        #expect(try db.value(for: a) == Data("v".utf8))
        db.setLockedAway(a)
        #expect(try db.delete(a))
        try db.add(Self.item("a", value: "again"))
        #expect(try db.value(for: a) == Data("again".utf8))
    }

    @Test("writeCount counts every attempted write, failed ones included, and no reads")
    func writeCountCounts() throws {
        let db = InMemoryKeychainDatabase()
        #expect(db.writeCount == 0)
        let a = Self.item("a")
        try db.add(a)
        #expect(db.writeCount == 1)
        _ = Self.status { try db.add(a) }  // duplicate
        _ = Self.status { try db.rename(Self.item("none").attributes.primaryKey, toAccount: "x") }  // not found
        #expect(db.writeCount == 3)
        db.failWrite(number: 1)
        _ = Self.status { try db.replace(a.attributes.primaryKey, with: a) }  // injected fault
        #expect(db.writeCount == 4)
        _ = try db.attributes(matching: ItemQuery())
        _ = try db.value(for: a.attributes.primaryKey)
        _ = db.allItems()
        #expect(db.writeCount == 4)
        _ = try db.delete(matching: ItemQuery(account: "nothing"))
        _ = try db.delete(Self.item("nothing").attributes.primaryKey)
        #expect(db.writeCount == 6)
    }
}

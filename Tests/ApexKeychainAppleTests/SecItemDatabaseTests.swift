import ApexKeychain
import ApexKeychainApple
import Foundation
import Testing

/// What `SecItemKeychainDatabase` makes of the keychain's answers: results converted to attributes, statuses
/// that mean "none", how many calls each operation costs.
@Suite("SecItem keychain database")
struct SecItemDatabaseTests {
    static let value = Data("secret".utf8)
    static var key: ItemAttributes.PrimaryKey { Fixture.ownAttributes("token").primaryKey }

    // MARK: Conversion

    @Test("a listed item of the package becomes its attributes, with the access control its metadata names")
    func ownItem() throws {
        let calls = ScriptedSecItemCalls([Fixture.list(Fixture.ownEntry("token", accessControl: .biometryAny))])
        let found = try SecItemKeychainDatabase(calls: calls).attributes(matching: Fixture.ownQuery)
        #expect(found == [Fixture.ownAttributes("token", accessControl: .biometryAny)])
        #expect(found.first?.accessControl == [.biometryAny])
    }

    @Test("another library's item reports no access control, even with text in gena that reads as metadata")
    func foreignItem() throws {
        var entry = Fixture.foreignEntry("token")
        entry[.generic] = .data(Fixture.metadata(.biometryAny))
        let calls = ScriptedSecItemCalls([Fixture.list(entry)])
        let found = try SecItemKeychainDatabase(calls: calls).attributes(matching: ItemQuery(service: Fixture.service))
        #expect(found.count == 1)
        #expect(found.first?.accessControl == [] && found.first?.creator == nil && found.first?.protectionDomain == .ak)
    }

    @Test("blob attributes as data become strings when they are UTF-8; sync as a number or a bool; dates; crtr")
    func blobsAndNumbers() throws {
        let entry: SecItemDictionary = [
            .service: .data(Data("app:no-auth".utf8)), .account: .data(Data("key".utf8)),
            .generic: .string("key"), .label: .data(Data("label".utf8)), .accessGroup: .string(Fixture.group),
            .accessible: .string("aku"), .synchronizable: .number(1), .creator: .number(0x1234),
            .creationDate: .date(Fixture.created), .modificationDate: .date(Fixture.modified),
        ]
        var boolSync = entry
        boolSync[.synchronizable] = .bool(true)
        let calls = ScriptedSecItemCalls([Fixture.list(entry, boolSync)])
        let found = try SecItemKeychainDatabase(calls: calls).attributes(
            matching: ItemQuery(itemClass: .genericPassword))
        let expected = ItemAttributes(
            service: "app:no-auth", account: "key", accessGroup: Fixture.group, creator: 0x1234, label: "label",
            generic: Data("key".utf8), protectionDomain: .aku, synchronizable: true, createdAt: Fixture.created,
            modifiedAt: Fixture.modified)
        #expect(found == [expected, expected])
    }

    @Test("an item whose account or service is not UTF-8, or whose pdmn is unknown, is left out; a label is dropped")
    func unrepresentable() throws {
        let invalid = Data([0xFF, 0xFE])
        var badAccount = Fixture.foreignEntry("x")
        badAccount[.account] = .data(invalid)
        var badService = Fixture.foreignEntry("y")
        badService[.service] = .data(invalid)
        var privateClass = Fixture.foreignEntry("z")
        privateClass[.accessible] = .string("f")
        var badLabel = Fixture.foreignEntry("kept")
        badLabel[.label] = .data(invalid)
        var noDomain = Fixture.foreignEntry("default")
        noDomain[.accessible] = nil
        let listing = Fixture.list(badAccount, badService, privateClass, badLabel, noDomain)
        let calls = ScriptedSecItemCalls([listing, listing])
        let database = SecItemKeychainDatabase(calls: calls)
        let found = try database.attributes(matching: ItemQuery(itemClass: .genericPassword))
        #expect(found.map(\.account) == ["kept", "default"])
        #expect(found.first?.label == nil)
        #expect(found.last?.protectionDomain == .ak)
        #expect(
            try database.accounts(matching: ItemQuery(itemClass: .genericPassword)) == ["kept", "default"])
    }

    @Test("an internet password's fields; a numeric protocol in decimal")
    func internetPassword() throws {
        let entry: SecItemDictionary = [
            .account: .string("alice"), .accessGroup: .string(Fixture.group), .server: .data(Data("example.com".utf8)),
            .protocol: .number(80), .port: .number(8080), .path: .string("/login"), .securityDomain: .string(""),
            .authenticationType: .string("dflt"), .accessible: .string("ck"), .synchronizable: .number(0),
        ]
        let calls = ScriptedSecItemCalls([Fixture.list(entry)])
        let found = try SecItemKeychainDatabase(calls: calls).attributes(
            matching: ItemQuery(itemClass: .internetPassword))
        #expect(
            found == [
                ItemAttributes(
                    itemClass: .internetPassword, service: "", account: "alice", accessGroup: Fixture.group,
                    protectionDomain: .ck, server: "example.com", securityDomain: "", protocolCode: "80",
                    authenticationType: "dflt", port: 8080, path: "/login")
            ])
    }

    // MARK: Listings

    @Test("a listing that finds nothing is empty; another failure is the error")
    func emptyListing() throws {
        let calls = ScriptedSecItemCalls([(.itemNotFound, .none), (.interactionNotAllowed, .none)])
        let database = SecItemKeychainDatabase(calls: calls)
        #expect(try database.attributes(matching: Fixture.ownQuery).isEmpty)
        let error = #expect(throws: KeychainDatabaseError.self) { try database.attributes(matching: Fixture.ownQuery) }
        #expect(error?.status == .interactionNotAllowed)
    }

    @Test("a query of no class lists both; one of a non-empty service only generic passwords (inet has no svce)")
    func classes() throws {
        let calls = ScriptedSecItemCalls()
        let database = SecItemKeychainDatabase(calls: calls)
        _ = try database.attributes(matching: ItemQuery())
        _ = try database.attributes(matching: ItemQuery(service: Fixture.service))
        #expect(calls.calls.map { $0.query[.itemClass] } == [.string("genp"), .string("inet"), .string("genp")])
    }

    @Test("a key or its staging account: one call, both kept byte for byte, the rest of the service left out")
    func keyOrAccount() throws {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let calls = ScriptedSecItemCalls([
            Fixture.list(
                Fixture.ownEntry(composed), Fixture.ownEntry(decomposed), Fixture.ownEntry(composed + "\u{0}staged"),
                Fixture.foreignEntry("other"))
        ])
        let query = ItemQuery(itemClass: .genericPassword, service: Fixture.service, account: composed)
        let found = try SecItemKeychainDatabase(calls: calls).attributes(
            matching: query, orAccount: composed + "\u{0}staged")
        #expect(found.map { Array($0.account.utf8) } == [Array(composed.utf8), Array((composed + "\u{0}staged").utf8)])
        #expect(calls.calls.count == 1)
        #expect(calls.calls.first?.query[.account] == nil)
    }

    // MARK: Values

    @Test("a value read gives the data; errors pass through, interactionNotAllowed for an item that needs the user")
    func valueRead() throws {
        let calls = ScriptedSecItemCalls([
            (.success, .data(Self.value)), (.interactionNotAllowed, .none), (.itemNotFound, .none),
            (.success, .list([])),
        ])
        let database = SecItemKeychainDatabase(calls: calls)
        #expect(try database.value(for: Self.key) == Self.value)
        for expected in [KeychainDatabaseError.Status.interactionNotAllowed, .itemNotFound, .other] {
            let error = #expect(throws: KeychainDatabaseError.self) { try database.value(for: Self.key) }
            #expect(error?.status == expected)
        }
    }

    @Test("an item read is one call: attributes and value, nil when there is none, an item that needs the user fails")
    func itemRead() throws {
        let calls = ScriptedSecItemCalls([
            (.success, .attributes(Fixture.ownEntry("token", value: Self.value))), (.itemNotFound, .none),
            (.interactionNotAllowed, .none),
        ])
        let database = SecItemKeychainDatabase(calls: calls)
        #expect(
            try database.item(for: Self.key)
                == KeychainItem(attributes: Fixture.ownAttributes("token"), value: Self.value))
        #expect(try database.item(for: Self.key) == nil)
        let error = #expect(throws: KeychainDatabaseError.self) { try database.item(for: Self.key) }
        #expect(error?.status == .interactionNotAllowed && error?.osStatus == -25308)
        #expect(calls.calls.count == 3)
    }

    // MARK: Removal

    @Test("delete(matching:) returns the listing's count, and sends no delete when nothing is listed")
    func deleteCount() throws {
        let calls = ScriptedSecItemCalls([
            Fixture.list(Fixture.ownEntry("a"), Fixture.ownEntry("b"), Fixture.ownEntry("c")), (.success, .none),
            (.itemNotFound, .none), Fixture.list(Fixture.ownEntry("a")), (.itemNotFound, .none),
        ])
        let database = SecItemKeychainDatabase(calls: calls)
        #expect(try database.delete(matching: Fixture.ownQuery) == 3)
        #expect(try database.delete(matching: Fixture.ownQuery) == 0)
        #expect(try database.delete(matching: Fixture.ownQuery) == 0)
        #expect(calls.calls.filter { if case .delete = $0 { true } else { false } }.count == 2)
    }

    @Test("delete of a key: true when it was there, false when not, the error otherwise")
    func deleteKey() throws {
        let calls = ScriptedSecItemCalls([(.success, .none), (.itemNotFound, .none), (.io, .none)])
        let database = SecItemKeychainDatabase(calls: calls)
        #expect(try database.delete(Self.key))
        #expect(try !database.delete(Self.key))
        let error = #expect(throws: KeychainDatabaseError.self) { try database.delete(Self.key) }
        #expect(error?.status == .io && error?.osStatus == -36)
    }

    // MARK: Exclusive access

    @Test("exclusively holds other writers of this process, and is reentrant")
    func exclusive() throws {
        let calls = ScriptedSecItemCalls()
        let database = SecItemKeychainDatabase(calls: calls)
        let item = KeychainItem(attributes: Fixture.ownAttributes("token"), value: Self.value)
        let done = DispatchSemaphore(value: 0)
        try database.exclusively {
            try database.exclusively { try database.add(item) }
            Thread.detachNewThread {
                try? database.add(item)
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 0.3) == .timedOut)
            #expect(calls.calls.count == 1)
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(calls.calls.count == 2)
    }

    @Test("atomically can't group a device's writes: a body that throws leaves the writes before it done")
    func atomicallyIsExclusive() {
        let calls = ScriptedSecItemCalls()
        let database = SecItemKeychainDatabase(calls: calls)
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try database.atomically {
                try database.add(KeychainItem(attributes: Fixture.ownAttributes("a"), value: Self.value))
                throw Stop()
            }
        }
        #expect(calls.calls.count == 1)
    }

    // MARK: Under the core

    @Test("the core reads, lists and describes the package's items through the database")
    func underTheCore() async throws {
        let calls = ScriptedSecItemCalls(otherwise: { call in
            guard case .copyMatching(let query) = call else { return (.success, .none) }
            if query[.returnData] != nil { return (.success, .data(Self.value)) }
            return Fixture.list(Fixture.ownEntry("token", accessControl: .none), Fixture.foreignEntry("foreign"))
        })
        let keychain = try Keychain(
            KeychainOptions(service: Fixture.service), database: SecItemKeychainDatabase(calls: calls),
            device: SimulatedDevice())
        #expect(try await keychain.getItem("token") == "secret")
        #expect(try await keychain.hasItem("token"))
        #expect(try await keychain.getItemInfo("token")?.accessible == .afterFirstUnlock)
    }

    @Test("the core describes an item with access control: its flags come from the metadata, without a prompt")
    func accessControlUnderTheCore() async throws {
        let calls = ScriptedSecItemCalls(otherwise: { call in
            guard case .copyMatching(let query) = call, query[.returnData] == nil else {
                return (.interactionNotAllowed, .none)
            }
            return Fixture.list(Fixture.ownEntry("token", accessControl: .biometryCurrentSet, pdmn: "akpu"))
        })
        let keychain = try Keychain(
            KeychainOptions(service: Fixture.service), database: SecItemKeychainDatabase(calls: calls),
            device: SimulatedDevice())
        #expect(try await keychain.getItemInfo("token")?.accessControl == .biometryCurrentSet)
        #expect(calls.calls.allSatisfy { $0.query[.returnData] == nil })
    }
}

import ApexKeychain
import ApexKeychainApple
import Foundation
import Synchronization
import Testing

/// `itemsWithValues(matching:)` on a device (`apple-secitem.md` §8.2): two listings per class whatever the item
/// count, the items the second skipped needing authentication, and the per-item fallback when the keychain refuses
/// a data listing.
@Suite("SecItem keychain database: listing with values")
struct SecItemDatabaseListingTests {
    static let query = ItemQuery(itemClass: .genericPassword)

    @Test("an item the data listing skipped needs authentication; the others get their values, found by reference")
    func skipped() throws {
        let calls = ScriptedSecItemCalls([
            Fixture.list(
                Fixture.foreignEntry("plain", reference: Data([1])),
                Fixture.foreignEntry("protected", reference: Data([2])),
                Fixture.foreignEntry("second", reference: Data([3]))),
            Fixture.list(
                Fixture.foreignEntry("second", reference: Data([3]), value: Data("v3".utf8)),
                Fixture.foreignEntry("plain", reference: Data([1]), value: Data("v1".utf8))),
        ])
        let listed = try SecItemKeychainDatabase(calls: calls).itemsWithValues(matching: Self.query)
        #expect(listed.map(\.attributes.account) == ["plain", "protected", "second"])
        #expect(listed.map(\.value) == [.data(Data("v1".utf8)), .needsAuthentication, .data(Data("v3".utf8))])
        #expect(calls.calls.count == 2)
    }

    @Test("without persistent references, values are found by primary key")
    func byKey() throws {
        let calls = ScriptedSecItemCalls([
            Fixture.list(Fixture.foreignEntry("a"), Fixture.foreignEntry("b")),
            Fixture.list(Fixture.foreignEntry("b", value: Data("vb".utf8))),
        ])
        let listed = try SecItemKeychainDatabase(calls: calls).itemsWithValues(matching: Self.query)
        #expect(listed.map(\.value) == [.needsAuthentication, .data(Data("vb".utf8))])
    }

    @Test("the same two calls for 1,000 items as for one")
    func roundTrips() throws {
        let entries = (0..<1000).map { Fixture.foreignEntry("k\($0)", reference: Data("r\($0)".utf8)) }
        let values = entries.map { entry -> SecItemDictionary in
            var entry = entry
            entry[.valueData] = .data(Data("v".utf8))
            return entry
        }
        let calls = ScriptedSecItemCalls([
            (.success, .list(entries.map(SecItemResult.attributes))),
            (.success, .list(values.map(SecItemResult.attributes))),
        ])
        let listed = try SecItemKeychainDatabase(calls: calls).itemsWithValues(matching: Self.query)
        #expect(listed.count == 1000 && listed.allSatisfy { $0.value == .data(Data("v".utf8)) })
        #expect(calls.calls.count == 2)
    }

    @Test("nothing listed: no data listing; every item skipped: all need authentication")
    func emptyOrAllSkipped() throws {
        let calls = ScriptedSecItemCalls([
            (.itemNotFound, .none), Fixture.list(Fixture.ownEntry("a", accessControl: .biometryAny)),
            (.itemNotFound, .none),
        ])
        let database = SecItemKeychainDatabase(calls: calls)
        #expect(try database.itemsWithValues(matching: Self.query).isEmpty)
        #expect(calls.calls.count == 1)
        let listed = try database.itemsWithValues(matching: Self.query)
        #expect(listed.map(\.value) == [.needsAuthentication])
        #expect(listed.first?.attributes.accessControl == [.biometryAny])
    }

    @Test(
        "an item of the first listing missing from the second is gone when its attributes say it has no access control; with access control, or undisclosed constraints, it needs authentication"
    )
    func missingFromTheDataListing() throws {
        let calls = ScriptedSecItemCalls([
            Fixture.list(
                Fixture.ownEntry("plain"), Fixture.ownEntry("went"),
                Fixture.ownEntry("guarded", accessControl: .passcode), Fixture.foreignEntry("theirs")),
            Fixture.list(Fixture.ownEntry("plain", value: Data("v".utf8))),
        ])
        let listed = try SecItemKeychainDatabase(calls: calls).itemsWithValues(matching: Self.query)
        #expect(listed.map(\.value) == [.data(Data("v".utf8)), .gone, .needsAuthentication, .needsAuthentication])
        #expect(calls.calls.count == 2)
    }

    @Test(
        "on the emulated keychain, an item deleted between the two listings is gone, in the data listing and in its per-item fallback",
        arguments: [false, true])
    func deletedBetweenListings(refusesDataListings: Bool) async throws {
        let (device, emulator) = makeEmulator()
        emulator.refusesDataListings = refusesDataListings
        let calls = DeletingBetweenListings(emulator)
        let database = SecItemKeychainDatabase(calls: calls)
        let keychain = try Keychain(KeychainOptions(service: "svc"), database: database, device: device)
        try await keychain.setItem("plain", "1")
        try await keychain.setItem("went", "2")
        try await keychain.setItem("guarded", "3", SetOptions(accessControl: .passcode))
        let query = ItemQuery(itemClass: .genericPassword, service: "svc")
        let went = try #require(try database.attributes(matching: query).first { $0.account == "went" })
        // Another process (an app extension) removes it right after the first listing.
        let other = SecItemKeychainDatabase(calls: emulator)
        calls.afterNextCall { _ = try? other.delete(went.primaryKey) }

        let listed = try database.itemsWithValues(matching: query)
        let values = Dictionary(uniqueKeysWithValues: listed.map { ($0.attributes.account, $0.value) })
        #expect(values == ["plain": .data(Data("1".utf8)), "went": .gone, "guarded": .needsAuthentication])
        #expect(!emulator.items.contains { $0.attributes[.account] == .string("went") })
    }

    @Test("a locked device fails the call, from either listing")
    func locked() throws {
        for script: [ScriptedSecItemCalls.Answer] in [
            [(.interactionNotAllowed, .none)],
            [Fixture.list(Fixture.foreignEntry("a")), (.interactionNotAllowed, .none)],
        ] {
            let database = SecItemKeychainDatabase(calls: ScriptedSecItemCalls(script))
            let error = #expect(throws: KeychainDatabaseError.self) {
                try database.itemsWithValues(matching: Self.query)
            }
            #expect(error?.status == .interactionNotAllowed && error?.osStatus == -25308)
        }
    }

    @Test("errSecParam from the data listing: one read per item, skipped ones need authentication, damage is kept")
    func fallback() throws {
        let calls = ScriptedSecItemCalls([
            Fixture.list(
                Fixture.foreignEntry("plain", reference: Data([1])),
                Fixture.foreignEntry("protected", reference: Data([2])),
                Fixture.foreignEntry("damaged", reference: Data([3])), Fixture.foreignEntry("unreferenced")),
            (.param, .none), (.success, .data(Data("v1".utf8))), (.itemNotFound, .none), (.decode, .none),
            (.success, .data(Data("v4".utf8))),
        ])
        let listed = try SecItemKeychainDatabase(calls: calls).itemsWithValues(matching: Self.query)
        #expect(listed.map(\.value).prefix(2) == [.data(Data("v1".utf8)), .needsAuthentication])
        guard case .failed(let error) = listed[2].value else { return #expect(Bool(false)) }
        #expect(error.status == .damaged && error.osStatus == -26275)
        #expect(listed[3].value == .data(Data("v4".utf8)))
        #expect(calls.calls.count == 6)
        // The item without a reference is read by its primary key, skipping too.
        let last = calls.calls.last?.query
        #expect(last?[.account] == .string("unreferenced") && last?[.authenticationUI] == .string("u_AuthUIS"))
        #expect(last?[.valuePersistentRef] == nil && last?[.returnData] == .bool(true))
    }

    @Test("a locked device in the fallback fails the call")
    func lockedFallback() throws {
        let calls = ScriptedSecItemCalls([
            Fixture.list(Fixture.foreignEntry("a", reference: Data([1]))), (.param, .none),
            (.interactionNotAllowed, .none),
        ])
        let error = #expect(throws: KeychainDatabaseError.self) {
            try SecItemKeychainDatabase(calls: calls).itemsWithValues(matching: Self.query)
        }
        #expect(error?.status == .interactionNotAllowed)
    }
}

/// An emulated keychain's calls, with something done right after the next one: another process's change between
/// two calls of this one.
private final class DeletingBetweenListings: SecItemCalls {
    let inner: SecItemEmulator
    private let after = Mutex<(@Sendable () -> Void)?>(nil)

    init(_ inner: SecItemEmulator) { self.inner = inner }

    /// Runs `action` once, right after the next call returns.
    func afterNextCall(_ action: @escaping @Sendable () -> Void) { after.withLock { $0 = action } }

    private func then<T>(_ answer: T) -> T {
        let action = after.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
        return answer
    }

    func add(_ attributes: SecItemDictionary) -> SecItemStatus { then(inner.add(attributes)) }
    func copyMatching(_ query: SecItemDictionary) -> (status: SecItemStatus, result: SecItemResult) {
        then(inner.copyMatching(query))
    }
    func update(_ query: SecItemDictionary, _ attributesToUpdate: SecItemDictionary) -> SecItemStatus {
        then(inner.update(query, attributesToUpdate))
    }
    func delete(_ query: SecItemDictionary) -> SecItemStatus { then(inner.delete(query)) }
}

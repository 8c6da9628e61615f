import ApexKeychain
import ApexKeychainApple
import Foundation
import Testing

/// SecItemCopyMatching (`apple-secitem.md` §2.4): limits, result shapes, the implicit sync filter, persistent
/// references.
@Suite("Emulator: copyMatching")
struct EmulatorCopyMatchingTests {
    /// A keychain with two items of service `svc`: `a` (secret `A`) then `b` (secret `B`).
    private func twoItems() -> SecItemEmulator {
        let (_, keychain) = makeEmulator()
        _ = keychain.add(genericPassword(account: "a", secret: "A"))
        _ = keychain.add(genericPassword(account: "b", secret: "B"))
        return keychain
    }

    @Test("the default limit is one: the first item found")
    func defaultLimitOne() {
        let keychain = twoItems()
        #expect(keychain.copyMatching(search([.returnData: .bool(true)])).result == .data(bytes("A")))
        #expect(
            keychain.copyMatching(search([.returnData: .bool(true), .matchLimit: .number(1)])).result
                == .data(bytes("A")))
        let all = keychain.copyMatching(search([.returnData: .bool(true), .matchLimit: .string("m_LimitAll")]))
        #expect(all.result == .list([.data(bytes("A")), .data(bytes("B"))]))
        let two = keychain.copyMatching(search([.returnData: .bool(true), .matchLimit: .number(2)]))
        #expect(two.result == .list([.data(bytes("A")), .data(bytes("B"))]))
        let one = keychain.copyMatching(
            search([.account: .string("b"), .returnData: .bool(true), .matchLimit: .string("m_LimitAll")]))
        #expect(one.result == .list([.data(bytes("B"))]))
    }

    @Test("zero matches is errSecItemNotFound, with no result")
    func notFound() {
        let keychain = twoItems()
        let missing = keychain.copyMatching(search(service: "none", [.returnData: .bool(true)]))
        #expect(missing.status == .itemNotFound)
        #expect(missing.result == .none)
        #expect(keychain.copyMatching(search([.account: .data(bytes("c"))])).status == .itemNotFound)
    }

    @Test("the result has the shape the return keys ask for")
    func resultShapes() throws {
        let keychain = twoItems()
        let ref = try #require(keychain.items.first).persistentRef
        let a: SecItemDictionary = [.account: .string("a")]
        #expect(keychain.copyMatching(search(a)) == (.success, .none))
        #expect(
            keychain.copyMatching(search(a.merging([.returnPersistentRef: .bool(true)]) { x, _ in x })).result
                == .data(ref))
        #expect(keychain.copyMatching(search(a.merging([.returnRef: .bool(true)]) { x, _ in x })) == (.success, .none))
        let attributes = try #require(
            keychain.copyMatching(search(a.merging([.returnAttributes: .bool(true)]) { x, _ in x })).result.attributes)
        #expect(attributes[.account] == .string("a") && attributes[.valueData] == nil)
        #expect(attributes[.valuePersistentRef] == nil && attributes[.itemClass] == nil)
        let dataAndRef = try #require(
            keychain.copyMatching(
                search(a.merging([.returnData: .bool(true), .returnPersistentRef: .bool(true)]) { x, _ in x })
            ).result.attributes)
        #expect(dataAndRef == [.valueData: .data(bytes("A")), .valuePersistentRef: .data(ref)])
        let withRef = try #require(
            keychain.copyMatching(
                search(a.merging([.returnAttributes: .bool(true), .returnRef: .bool(true)]) { x, _ in x })
            ).result.attributes)
        #expect(withRef[.itemClass] == .string("genp"))
        let all: SecItemDictionary = [.matchLimit: .string("m_LimitAll")]
        #expect(keychain.copyMatching(search(all)) == (.success, .list([])))
        #expect(keychain.copyMatching(search(all.merging([.returnRef: .bool(true)]) { x, _ in x })).result == .list([]))
        let listed = keychain.copyMatching(search(all.merging([.returnAttributes: .bool(true)]) { x, _ in x }))
        #expect(listed.result.list?.compactMap { $0.attributes?[.account] } == [.string("a"), .string("b")])
        // An item added without data reads as empty data.
        _ = keychain.add([.itemClass: .string("genp"), .service: .string("empty")])
        #expect(keychain.copyMatching(search(service: "empty", [.returnData: .bool(true)])).result == .data(Data()))
    }

    @Test("attributes come back as stored, with agrp, pdmn, sync, the dates; never accc")
    func attributeResults() throws {
        let (device, keychain) = makeEmulator()
        let spec = SecAccessControlSpec(protection: "ck", flags: .biometryAny)
        let add = genericPassword([
            .creator: .number(0x4170_784B), .label: .string("Label"), .generic: .data(bytes("meta")),
            .accessControl: .accessControl(spec), .synchronizable: .bool(false),
        ])
        #expect(keychain.add(add) == .success)
        let found = keychain.copyMatching(search([.returnAttributes: .bool(true), .synchronizable: .string("syna")]))
        let attributes = try #require(found.result.attributes)
        let expected: SecItemDictionary = [
            .service: .string("svc"), .account: .string("user"), .accessGroup: .string(appGroup),
            .accessible: .string("ck"), .synchronizable: .bool(false), .creationDate: .date(device.state().now),
            .modificationDate: .date(device.state().now), .creator: .number(0x4170_784B), .label: .string("Label"),
            .generic: .data(bytes("meta")),
        ]
        #expect(attributes == expected)
        #expect(attributes[.accessControl] == nil)
    }

    @Test("without a sync key only items that don't sync are found; syna finds both, true only synced ones")
    func synchronizableFilter() {
        let (_, keychain) = makeEmulator()
        #expect(keychain.add(RNK.add(service: "s", username: "local", password: "1")) == .success)
        #expect(keychain.add(RNK.add(service: "s", username: "cloud", password: "2", sync: true)) == .success)
        func accounts(_ query: SecItemDictionary) -> [SecItemValue?] {
            let result = keychain.copyMatching(query).result
            return result.list?.map { $0.attributes?[.account] } ?? []
        }
        // react-native-keychain's getAllGenericPasswordServices has no sync key: the synced item isn't listed.
        #expect(accounts(RNK.allServices()) == [.string("local")])
        var any = RNK.allServices()
        any[.synchronizable] = .string("syna")
        #expect(accounts(any) == [.string("local"), .string("cloud")])
        any[.synchronizable] = .bool(true)
        #expect(accounts(any) == [.string("cloud")])
        // The same filter holds for update and delete.
        #expect(keychain.delete([.itemClass: .string("genp"), .account: .string("cloud")]) == .itemNotFound)
        #expect(
            keychain.update([.itemClass: .string("genp"), .account: .string("cloud")], [.label: .string("x")])
                == .itemNotFound)
        #expect(keychain.delete([.itemClass: .string("genp"), .synchronizable: .string("syna")]) == .success)
        #expect(keychain.items.isEmpty)
    }

    @Test("accc in a search is accepted and no match criterion; pdmn is")
    func accessControlIsNoCriterion() {
        let (_, keychain) = makeEmulator()
        #expect(keychain.add(genericPassword([.accessible: .string("ck")])) == .success)
        let other = SecAccessControlSpec(protection: "akpu", flags: .devicePasscode)
        #expect(keychain.copyMatching(search([.accessControl: .accessControl(other)])).status == .success)
        #expect(keychain.copyMatching(search([.accessible: .string("ak")])).status == .itemNotFound)
        #expect(keychain.copyMatching(search([.accessible: .string("ck")])).status == .success)
    }

    @Test("a persistent reference is unique per item and is a whole query for reads, updates and deletes")
    func persistentReferences() throws {
        let keychain = twoItems()
        _ = keychain.add(genericPassword(account: "c", secret: "C", [.synchronizable: .bool(true)]))
        let refs = keychain.items.map(\.persistentRef)
        try #require(refs.count == 3)
        #expect(Set(refs).count == 3)
        let listed = keychain.copyMatching(
            search([
                .matchLimit: .string("m_LimitAll"), .returnPersistentRef: .bool(true), .synchronizable: .string("syna"),
            ]))
        #expect(listed.result == .list(refs.map(SecItemResult.data)))
        // Only the reference: the class comes from it, and it finds a synchronizable item without a sync key.
        #expect(
            keychain.copyMatching([.valuePersistentRef: .data(refs[2]), .returnData: .bool(true)]).result
                == .data(bytes("C")))
        #expect(keychain.update([.valuePersistentRef: .data(refs[1])], [.valueData: .data(bytes("B2"))]) == .success)
        #expect(
            keychain.copyMatching([.valuePersistentRef: .data(refs[1]), .returnData: .bool(true)]).result
                == .data(bytes("B2")))
        #expect(keychain.delete([.valuePersistentRef: .data(refs[0])]) == .success)
        #expect(keychain.copyMatching([.valuePersistentRef: .data(refs[0])]).status == .itemNotFound)
        #expect(keychain.copyMatching([.valuePersistentRef: .data(bytes("junk"))]).status == .param)
        #expect(keychain.items.count == 2)
    }

    @Test("a keychain scripted to refuse data listings answers errSecParam; per-item reads still work")
    func refusedDataListings() throws {
        let keychain = twoItems()
        let listing = search([.matchLimit: .string("m_LimitAll"), .returnData: .bool(true)])
        #expect(!keychain.refusesDataListings)
        #expect(keychain.copyMatching(listing).status == .success)
        keychain.refusesDataListings = true
        #expect(keychain.copyMatching(listing) == (.param, .none))
        let refs = search([.matchLimit: .string("m_LimitAll"), .returnPersistentRef: .bool(true)])
        let listed = try #require(keychain.copyMatching(refs).result.list)
        let values = listed.compactMap(\.data).map {
            keychain.copyMatching([.valuePersistentRef: .data($0), .returnData: .bool(true)]).result
        }
        #expect(values == [.data(bytes("A")), .data(bytes("B"))])
    }
}

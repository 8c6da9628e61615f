import ApexKeychain
import ApexKeychainApple
import Foundation
import Testing

/// The exact dictionaries of every operation, every key and value: what an auditor compares with
/// react-native-keychain's and Valet's queries (`apple-secitem.md` §4.1, §4.3). Seed 000's rules: `nleg` on every
/// query, the creator mark on the package's own, explicit `sync` on writes and `syna` on the rest, the
/// non-interactive context on reads that must not prompt, `accc` without `pdmn`, no match or return key on an
/// update or a delete, never `u_OpPrompt`.
@Suite("SecItem query shapes")
struct QueryShapeTests {
    let calls = ScriptedSecItemCalls()
    var database: SecItemKeychainDatabase { SecItemKeychainDatabase(calls: calls) }
    static let value = Data("secret".utf8)

    /// The one key of a package item in the fixture's service.
    static var key: ItemAttributes.PrimaryKey { Fixture.ownAttributes("token").primaryKey }

    /// The match of that key: its class's whole primary key (§2.2) and `nleg`.
    static let keyMatch: SecItemDictionary = [
        .itemClass: .string("genp"), .service: .string(Fixture.service), .account: .string("token"),
        .accessGroup: .string(Fixture.group), .synchronizable: .bool(false), .useDataProtectionKeychain: .bool(true),
    ]

    /// The query of an update of that key: the match and the non-interactive context (a write never prompts).
    static var keyUpdate: SecItemDictionary {
        var query = keyMatch
        query[.authenticationContext] = .authenticationContext(.nonInteractive)
        return query
    }

    /// The core's query of its own items in the service.
    static let ownMatch: SecItemDictionary = [
        .itemClass: .string("genp"), .service: .string(Fixture.service), .accessGroup: .string(Fixture.group),
        .creator: .number(0x4170_784B), .synchronizable: .string("syna"), .useDataProtectionKeychain: .bool(true),
    ]

    @Test("the set of an item without access control: pdmn, an explicit sync, the creator mark, the value")
    func plainAdd() throws {
        try database.add(KeychainItem(attributes: Fixture.ownAttributes("token"), value: Self.value))
        #expect(
            calls.calls == [
                .add([
                    .itemClass: .string("genp"), .service: .string(Fixture.service), .account: .string("token"),
                    .accessGroup: .string(Fixture.group), .creator: .number(0x4170_784B),
                    .generic: .data(Fixture.metadata()), .accessible: .string("ck"), .synchronizable: .bool(false),
                    .valueData: .data(Self.value), .useDataProtectionKeychain: .bool(true),
                ])
            ])
    }

    @Test("the set of an item with access control: accc from its pdmn and flags, no pdmn (§2.3 item 5)")
    func accessControlledAdd() throws {
        var attributes = Fixture.ownAttributes("token", accessControl: .biometryCurrentSetOrPasscode)
        attributes.protectionDomain = .akpu
        attributes.synchronizable = false
        try database.add(KeychainItem(attributes: attributes, value: Self.value))
        #expect(
            calls.calls == [
                .add([
                    .itemClass: .string("genp"), .service: .string(Fixture.service), .account: .string("token"),
                    .accessGroup: .string(Fixture.group), .creator: .number(0x4170_784B),
                    .generic: .data(Fixture.metadata(.biometryCurrentSetOrPasscode)),
                    .accessControl: .accessControl(
                        SecAccessControlSpec(protection: "akpu", flags: [.biometryCurrentSet, .devicePasscode, .or])),
                    .synchronizable: .bool(false), .valueData: .data(Self.value),
                    .useDataProtectionKeychain: .bool(true),
                ])
            ])
    }

    @Test("a synchronizable item is added with sync true")
    func synchronizableAdd() throws {
        var attributes = Fixture.ownAttributes("token")
        attributes.synchronizable = true
        try database.add(KeychainItem(attributes: attributes, value: Self.value))
        #expect(calls.calls.first?.query[.synchronizable] == .bool(true))
    }

    @Test("a replace: SecItemUpdate by the primary key, non-interactive, with every attribute and the value, no class")
    func replace() throws {
        var attributes = Fixture.ownAttributes("token")
        attributes.label = "alice"
        try database.replace(Self.key, with: KeychainItem(attributes: attributes, value: Self.value))
        #expect(
            calls.calls == [
                .update(
                    Self.keyUpdate,
                    [
                        .service: .string(Fixture.service), .account: .string("token"),
                        .accessGroup: .string(Fixture.group), .creator: .number(0x4170_784B),
                        .label: .string("alice"), .generic: .data(Fixture.metadata()), .accessible: .string("ck"),
                        .synchronizable: .bool(false), .valueData: .data(Self.value),
                    ])
            ])
    }

    @Test("a replace without a label overwrites the old label with the empty one")
    func replaceWithoutLabel() throws {
        try database.replace(
            Self.key, with: KeychainItem(attributes: Fixture.ownAttributes("token"), value: Self.value))
        guard case .update(_, let attributes) = calls.calls.first else { return #expect(Bool(false)) }
        #expect(attributes[.label] == .string(""))
    }

    @Test("a rename: SecItemUpdate by the primary key, non-interactive, with the account alone")
    func rename() throws {
        try database.rename(Self.key, toAccount: "other")
        #expect(calls.calls == [.update(Self.keyUpdate, [.account: .string("other")])])
    }

    @Test("a non-prompting read: m_LimitOne, r_Data, the non-interactive context")
    func nonPromptingRead() throws {
        let calls = ScriptedSecItemCalls([(.success, .data(Self.value))])
        #expect(try SecItemKeychainDatabase(calls: calls).value(for: Self.key) == Self.value)
        var expected = Self.keyMatch
        expected[.matchLimit] = .string("m_LimitOne")
        expected[.returnData] = .bool(true)
        expected[.authenticationContext] = .authenticationContext(.nonInteractive)
        #expect(calls.calls == [.copyMatching(expected)])
    }

    @Test("a read after a prompt carries the context the prompt left, and nothing else changes")
    func authenticatedRead() throws {
        let context = TestContext()
        let calls = ScriptedSecItemCalls([(.success, .data(Self.value))])
        #expect(try SecItemKeychainDatabase(calls: calls).value(for: Self.key, authentication: context) == Self.value)
        var expected = Self.keyMatch
        expected[.matchLimit] = .string("m_LimitOne")
        expected[.returnData] = .bool(true)
        expected[.authenticationContext] = .authenticationContext(.evaluated(context))
        #expect(calls.calls == [.copyMatching(expected)])
        #expect(calls.calls.first?.query[.authenticationContext] != .authenticationContext(.evaluated(TestContext())))
    }

    @Test("a read of attributes and value in one call: r_Attributes and r_Data, non-interactive")
    func itemRead() throws {
        let calls = ScriptedSecItemCalls([(.success, .attributes(Fixture.ownEntry("token", value: Self.value)))])
        _ = try SecItemKeychainDatabase(calls: calls).item(for: Self.key)
        var expected = Self.keyMatch
        expected[.matchLimit] = .string("m_LimitOne")
        expected[.returnData] = .bool(true)
        expected[.returnAttributes] = .bool(true)
        expected[.authenticationContext] = .authenticationContext(.nonInteractive)
        #expect(calls.calls == [.copyMatching(expected)])
    }

    @Test("a read of attributes and value after a prompt: one call, r_Attributes and r_Data, the prompt's context")
    func authenticatedItemRead() throws {
        let context = TestContext()
        let calls = ScriptedSecItemCalls([(.success, .attributes(Fixture.ownEntry("token", value: Self.value)))])
        let item = try SecItemKeychainDatabase(calls: calls).item(for: Self.key, authentication: context)
        #expect(item?.value == Self.value)
        var expected = Self.keyMatch
        expected[.matchLimit] = .string("m_LimitOne")
        expected[.returnData] = .bool(true)
        expected[.returnAttributes] = .bool(true)
        expected[.authenticationContext] = .authenticationContext(.evaluated(context))
        #expect(calls.calls == [.copyMatching(expected)])
    }

    @Test("a replacement of an item without creator or gena writes creator 0 and empty gena: an update removes none")
    func replacementClearsTheMark() throws {
        let calls = ScriptedSecItemCalls([(.success, .none)])
        let foreign = KeychainItem(
            attributes: ItemAttributes(
                service: "app", account: "token", accessGroup: "ABCDE12345.com.example.app", creator: nil,
                protectionDomain: .ck),
            value: Self.value)
        try SecItemKeychainDatabase(calls: calls).replace(foreign.attributes.primaryKey, with: foreign)
        guard case .update(_, let attributes) = calls.calls.first else { return #expect(Bool(false)) }
        #expect(attributes[.creator] == .number(0))
        #expect(attributes[.generic] == .data(Data()))
        #expect(attributes[.label] == .string(""))
    }

    /// The listing of the core's own items: m_LimitAll, r_Attributes, non-interactive.
    static var ownListing: SecItemDictionary {
        var listing = ownMatch
        listing[.matchLimit] = .string("m_LimitAll")
        listing[.returnAttributes] = .bool(true)
        listing[.authenticationContext] = .authenticationContext(.nonInteractive)
        return listing
    }

    @Test("a listing: the query's fields, the creator mark, sync syna, m_LimitAll, r_Attributes, non-interactive")
    func listing() throws {
        _ = try database.attributes(matching: Fixture.ownQuery)
        _ = try database.accounts(matching: Fixture.ownQuery)
        #expect(calls.calls == [.copyMatching(Self.ownListing), .copyMatching(Self.ownListing)])
    }

    @Test("a listing of a key and its staging account lists the service once, without an account")
    func keyOrAccount() throws {
        _ = try database.attributes(
            matching: ItemQuery(
                itemClass: .genericPassword, service: Fixture.service, account: "token", accessGroup: Fixture.group),
            orAccount: "token\u{0}staged")
        var expected = Self.ownListing
        expected[.creator] = nil
        #expect(calls.calls == [.copyMatching(expected)])
    }

    @Test("a query that names its sync carries it as a bool")
    func namedSync() throws {
        var query = Fixture.ownQuery
        query.synchronizable = true
        _ = try database.attributes(matching: query)
        #expect(calls.calls.first?.query[.synchronizable] == .bool(true))
    }

    @Test("a removal: a listing to count, then SecItemDelete of the bare match")
    func removal() throws {
        let calls = ScriptedSecItemCalls([Fixture.list(Fixture.ownEntry("a"))])
        _ = try SecItemKeychainDatabase(calls: calls).delete(matching: Fixture.ownQuery)
        #expect(calls.calls == [.copyMatching(Self.ownListing), .delete(Self.ownMatch)])
    }

    @Test("the removal of one item: SecItemDelete of its primary key")
    func removalOfKey() throws {
        _ = try database.delete(Self.key)
        #expect(calls.calls == [.delete(Self.keyMatch)])
    }

    @Test("an internet password's primary key names every field of the class (§2.2)")
    func internetKey() throws {
        let attributes = ItemAttributes(
            itemClass: .internetPassword, service: "", account: "alice", accessGroup: Fixture.group,
            server: "example.com", protocolCode: "htps", port: 443)
        _ = try database.delete(attributes.primaryKey)
        #expect(
            calls.calls == [
                .delete([
                    .itemClass: .string("inet"), .account: .string("alice"), .accessGroup: .string(Fixture.group),
                    .synchronizable: .bool(false), .server: .string("example.com"), .securityDomain: .string(""),
                    .protocol: .string("htps"), .authenticationType: .string(""), .port: .number(443),
                    .path: .string(""), .useDataProtectionKeychain: .bool(true),
                ])
            ])
    }

    /// §8.2 step 1 for the whole keychain of a class.
    static func attributesListing(_ itemClass: String) -> SecItemDictionary {
        [
            .itemClass: .string(itemClass), .matchLimit: .string("m_LimitAll"), .returnAttributes: .bool(true),
            .returnPersistentRef: .bool(true), .synchronizable: .string("syna"),
            .useDataProtectionKeychain: .bool(true),
            .authenticationContext: .authenticationContext(.nonInteractive),
        ]
    }

    /// §8.2 step 2 for the whole keychain of a class.
    static func dataListing(_ itemClass: String) -> SecItemDictionary {
        [
            .itemClass: .string(itemClass), .matchLimit: .string("m_LimitAll"), .returnAttributes: .bool(true),
            .returnPersistentRef: .bool(true), .returnData: .bool(true), .authenticationUI: .string("u_AuthUIS"),
            .synchronizable: .string("syna"), .useDataProtectionKeychain: .bool(true),
        ]
    }

    @Test("the two listings of itemsWithValues per class (§8.2): attributes and references, then values skipping")
    func itemsWithValuesListings() throws {
        let calls = ScriptedSecItemCalls([
            Fixture.list(Fixture.foreignEntry("a", reference: Data([1]))), Fixture.list(),
            Fixture.list(Fixture.foreignEntry("b", reference: Data([2]))), Fixture.list(),
        ])
        _ = try SecItemKeychainDatabase(calls: calls).itemsWithValues(matching: ItemQuery())
        #expect(
            calls.calls == [
                .copyMatching(Self.attributesListing("genp")), .copyMatching(Self.dataListing("genp")),
                .copyMatching(Self.attributesListing("inet")), .copyMatching(Self.dataListing("inet")),
            ])
    }

    @Test("the fallback of itemsWithValues: one read by persistent reference per item, skipping (§8.2)")
    func itemsWithValuesFallback() throws {
        let calls = ScriptedSecItemCalls([
            Fixture.list(Fixture.foreignEntry("a", reference: Data([7, 7]))), (.param, .none),
            (.success, .data(Self.value)),
        ])
        _ = try SecItemKeychainDatabase(calls: calls).itemsWithValues(
            matching: ItemQuery(itemClass: .genericPassword))
        #expect(
            calls.calls == [
                .copyMatching(Self.attributesListing("genp")), .copyMatching(Self.dataListing("genp")),
                .copyMatching([
                    .itemClass: .string("genp"), .valuePersistentRef: .data(Data([7, 7])), .returnData: .bool(true),
                    .authenticationUI: .string("u_AuthUIS"), .useDataProtectionKeychain: .bool(true),
                ]),
            ])
    }

    @Test("no query of any operation carries u_OpPrompt or a match limit on update and delete")
    func forbiddenKeys() throws {
        let calls = ScriptedSecItemCalls(otherwise: { call in
            if case .copyMatching = call { return Fixture.list(Fixture.ownEntry("a", value: Self.value)) }
            return (.success, .none)
        })
        let database = SecItemKeychainDatabase(calls: calls)
        let item = KeychainItem(attributes: Fixture.ownAttributes("a"), value: Self.value)
        try database.add(item)
        try database.replace(Self.key, with: item)
        try database.rename(Self.key, toAccount: "b")
        _ = try database.delete(matching: Fixture.ownQuery)
        _ = try database.delete(Self.key)
        _ = try database.attributes(matching: Fixture.ownQuery)
        _ = try database.itemsWithValues(matching: Fixture.ownQuery)
        for call in calls.calls {
            #expect(call.query[.operationPrompt] == nil)
            #expect(call.query[.useDataProtectionKeychain] == .bool(true))
            switch call {
            case .update(let query, let attributes):
                for dictionary in [query, attributes] {
                    #expect(!dictionary.keys.contains { $0.rawValue.hasPrefix("m_") || $0.rawValue.hasPrefix("r_") })
                }
                #expect(attributes[.itemClass] == nil && attributes[.useDataProtectionKeychain] == nil)
                #expect(query[.authenticationContext] == .authenticationContext(.nonInteractive))
            case .delete(let query):
                #expect(!query.keys.contains { $0.rawValue.hasPrefix("m_") || $0.rawValue.hasPrefix("r_") })
            case .add(let query):
                #expect(!(query[.accessible] != nil && query[.accessControl] != nil))
            case .copyMatching: break
            }
        }
    }
}

/// A context a prompt left (the device's `LAContext`).
final class TestContext: AuthenticationContext {}

import ApexKeychain
import ApexKeychainApple
import Foundation
import Testing

/// How the emulator parses a dictionary (`apple-secitem.md` §2.1).
@Suite("Emulator: query parsing")
struct EmulatorQueryTests {
    @Test("a 4-character key the class doesn't have is errSecNoSuchAttr; nleg is a no-op")
    func attributesByClass() {
        let (_, keychain) = makeEmulator()
        #expect(keychain.add(genericPassword([.server: .string("example.com")])) == .noSuchAttr)
        let inet: SecItemDictionary = [
            .itemClass: .string("inet"), .server: .string("example.com"), .service: .string("svc"),
        ]
        #expect(keychain.add(inet) == .noSuchAttr)
        #expect(keychain.add(genericPassword([SecItemKey(rawValue: "zzzz"): .string("x")])) == .noSuchAttr)
        #expect(keychain.add(genericPassword([.useDataProtectionKeychain: .bool(true)])) == .success)
        #expect(keychain.copyMatching(search([.useDataProtectionKeychain: .bool(true)])).status == .success)
        #expect(keychain.items.count == 1)
        #expect(keychain.items.first?.attributes[.useDataProtectionKeychain] == nil)
    }

    @Test("class missing is errSecParam, an unknown class errSecNoSuchClass")
    func itemClass() {
        let (_, keychain) = makeEmulator()
        var noClass = genericPassword()
        noClass[.itemClass] = nil
        #expect(keychain.add(noClass) == .param)
        #expect(keychain.copyMatching([.service: .string("svc")]).status == .param)
        #expect(keychain.add(genericPassword([.itemClass: .string("pass")])) == .noSuchClass)
        #expect(keychain.delete([.itemClass: .string("pass")]) == .noSuchClass)
        #expect(keychain.add(genericPassword([.itemClass: .number(1)])) == .param)
    }

    @Test("values of the wrong type are errSecParam")
    func valueTypes() {
        let (_, keychain) = makeEmulator()
        #expect(keychain.add(genericPassword([.valueData: .string("secret")])) == .param)
        #expect(keychain.add(genericPassword([.accessible: .string("always")])) == .param)
        #expect(keychain.add(genericPassword([.accessible: .bool(true)])) == .param)
        #expect(keychain.add(genericPassword([.accessGroup: .number(1)])) == .param)
        #expect(keychain.add(genericPassword([.accessControl: .string("ak")])) == .param)
        #expect(keychain.add(genericPassword([.creationDate: .string("today")])) == .param)
        #expect(keychain.add(genericPassword([.synchronizable: .string("yes")])) == .param)
        #expect(keychain.add(genericPassword([.account: .bool(true)])) == .param)
        let invalid = SecAccessControlSpec(protection: "ak", flags: [.biometryAny, .biometryCurrentSet])
        #expect(keychain.add(genericPassword([.accessControl: .accessControl(invalid)])) == .param)
        #expect(keychain.copyMatching(search([.returnData: .string("yes")])).status == .param)
        #expect(keychain.copyMatching(search([.matchLimit: .string("m_LimitSome")])).status == .param)
        #expect(keychain.copyMatching(search([.authenticationUI: .string("u_AuthUIX")])).status == .param)
        #expect(keychain.copyMatching(search([.authenticationContext: .string("ctx")])).status == .param)
        #expect(keychain.copyMatching(search([SecItemKey(rawValue: "u_Unknown"): .bool(true)])).status == .param)
        #expect(keychain.copyMatching(search([SecItemKey(rawValue: "x_Other"): .bool(true)])).status == .param)
        #expect(keychain.items.isEmpty)
        // Coercions that are valid: a Boolean and a numeric string for a number attribute, a number for `sync`.
        let coerced = genericPassword([
            .creator: .string("1097889867"), .type: .bool(true), .synchronizable: .number(0),
        ])
        #expect(keychain.add(coerced) == .success)
        #expect(keychain.items.first?.attributes[.creator] == .number(1_097_889_867))
        #expect(keychain.items.first?.attributes[.type] == .number(1))
        #expect(keychain.items.first?.attributes[.synchronizable] == .bool(false))
    }

    @Test("u_AuthUIS outside SecItemCopyMatching is errSecParam")
    func skipOnlyInCopyMatching() {
        let (_, keychain) = makeEmulator()
        let skip: SecItemDictionary = [.authenticationUI: .string("u_AuthUIS")]
        #expect(keychain.add(genericPassword(skip)) == .param)
        #expect(keychain.add(genericPassword()) == .success)
        #expect(keychain.update(search(skip), [.label: .string("x")]) == .param)
        #expect(keychain.delete(search(skip)) == .param)
        #expect(keychain.copyMatching(search(skip)).status == .success)
        #expect(keychain.items.count == 1)
    }

    @Test("pdmn with accc is errSecParam, in an add and in a search")
    func accessibleWithAccessControl() {
        let (_, keychain) = makeEmulator()
        let both: SecItemDictionary = [
            .accessible: .string("ak"), .accessControl: .accessControl(.init(protection: "ak", flags: [])),
        ]
        #expect(keychain.add(genericPassword(both)) == .param)
        #expect(keychain.add(genericPassword()) == .success)
        #expect(keychain.copyMatching(search(both)).status == .param)
        #expect(keychain.update(search(), both) == .param)
    }

    @Test("accc with constraints and sync true is errSecParam; without constraints it is not")
    func accessControlNotSynchronizable() {
        let (_, keychain) = makeEmulator()
        let constrained = SecAccessControlSpec(protection: "ak", flags: .biometryAny)
        let sync: SecItemDictionary = [.synchronizable: .bool(true)]
        #expect(
            keychain.add(genericPassword(sync.merging([.accessControl: .accessControl(constrained)]) { a, _ in a }))
                == .param)
        let plain = SecAccessControlSpec(protection: "ak", flags: [])
        #expect(
            keychain.add(genericPassword(sync.merging([.accessControl: .accessControl(plain)]) { a, _ in a }))
                == .success)
        #expect(keychain.add(genericPassword(account: "other")) == .success)
        let change: SecItemDictionary = [.synchronizable: .bool(true), .accessControl: .accessControl(constrained)]
        #expect(keychain.update(search([.account: .string("other")]), change) == .param)
    }

    @Test("more than 128 keys is errSecParam")
    func keyLimit() {
        let (_, keychain) = makeEmulator()
        var query = genericPassword()
        // `f…` keys are ignored by securityd, but they count.
        for n in 0..<(128 - query.count) { query[SecItemKey(rawValue: "f_ignored_\(n)")] = .bool(true) }
        #expect(query.count == 128)
        #expect(keychain.add(query) == .success)
        query[.account] = .string("another")
        query[SecItemKey(rawValue: "f_last")] = .bool(true)
        #expect(keychain.add(query) == .param)
        #expect(keychain.items.count == 1)
    }
}

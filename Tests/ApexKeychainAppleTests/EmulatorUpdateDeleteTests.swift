import ApexKeychain
import ApexKeychainApple
import Foundation
import Testing

/// SecItemUpdate (`apple-secitem.md` §2.5) and SecItemDelete (§2.6).
@Suite("Emulator: update and delete")
struct EmulatorUpdateDeleteTests {
    /// A keychain with `a` and `b` in `svc` and `c` in `other`.
    private func threeItems() -> (SimulatedDevice, SecItemEmulator) {
        let (device, keychain) = makeEmulator()
        _ = keychain.add(genericPassword(account: "a", secret: "A"))
        _ = keychain.add(genericPassword(account: "b", secret: "B"))
        _ = keychain.add(genericPassword(service: "other", account: "c", secret: "C"))
        return (device, keychain)
    }

    @Test("update changes every match; zero matches is errSecItemNotFound")
    func updateAllMatches() {
        let (_, keychain) = threeItems()
        #expect(keychain.update(search(), [.label: .string("L"), .valueData: .data(bytes("new"))]) == .success)
        let items = keychain.items
        #expect(items.map { $0.attributes[.label] } == [.string("L"), .string("L"), nil])
        #expect(items.map(\.data) == [bytes("new"), bytes("new"), bytes("C")])
        #expect(keychain.update(search(service: "none"), [.label: .string("L")]) == .itemNotFound)
    }

    @Test("update refuses return keys and match keys, m_LimitAll included")
    func updateQueryRules() {
        let (_, keychain) = threeItems()
        let change: SecItemDictionary = [.label: .string("L")]
        #expect(keychain.update(search([.returnAttributes: .bool(true)]), change) == .param)
        #expect(keychain.update(search([.matchLimit: .string("m_LimitAll")]), change) == .param)
        #expect(keychain.update(search([.matchLimit: .string("m_LimitOne")]), change) == .param)
        #expect(keychain.update(search([SecItemKey(rawValue: "m_CaseInsensitive"): .bool(true)]), change) == .param)
        // A return key that asks for nothing is no return key.
        #expect(keychain.update(search([.returnData: .bool(false)]), change) == .success)
    }

    @Test("attributesToUpdate: only attributes of the class and v_Data, of the right types, in the app's groups")
    func attributesToUpdateRules() {
        let (_, keychain) = threeItems()
        let query = search([.account: .string("a")])
        #expect(keychain.update(query, [.itemClass: .string("genp")]) == .noSuchAttr)
        #expect(keychain.update(query, [.returnData: .bool(true)]) == .noSuchAttr)
        #expect(keychain.update(query, [.matchLimit: .string("m_LimitAll")]) == .noSuchAttr)
        #expect(keychain.update(query, [.authenticationUI: .string("u_AuthUIF")]) == .noSuchAttr)
        #expect(keychain.update(query, [.server: .string("example.com")]) == .noSuchAttr)
        #expect(keychain.update(query, [.valueData: .string("text")]) == .param)
        #expect(keychain.update(query, [.accessible: .string("nope")]) == .param)
        #expect(keychain.update(query, [.accessGroup: .string("OTHER.group")]) == .missingEntitlement)
        #expect(keychain.update(query, [.useDataProtectionKeychain: .bool(true), .label: .string("ok")]) == .success)
        #expect(keychain.items.first?.attributes[.label] == .string("ok"))
        #expect(keychain.items.first?.attributes[.useDataProtectionKeychain] == nil)
    }

    @Test("update sets mdat to now and keeps cdat; setting pdmn replaces the protection")
    func updateDatesAndProtection() throws {
        let (device, keychain) = threeItems()
        device.advanceClock(by: 30)
        let query = search([.account: .string("a")])
        #expect(keychain.update(query, [.accessible: .string("cku"), .creationDate: .date(.distantPast)]) == .success)
        let item = try #require(keychain.items.first)
        #expect(item.attributes[.creationDate] == .date(deviceStart))
        #expect(item.attributes[.modificationDate] == .date(deviceStart.addingTimeInterval(30)))
        #expect(item.attributes[.accessible] == .string("cku"))
        // Without the clock moving, mdat still grows.
        #expect(keychain.update(query, [.label: .string("again")]) == .success)
        if case .date(let later)? = keychain.items.first?.attributes[.modificationDate] {
            #expect(later > deviceStart.addingTimeInterval(30))
        } else {
            Issue.record("no mdat")
        }
    }

    @Test("an update onto another item's primary key is errSecDuplicateItem and changes nothing")
    func updateCollision() {
        let (_, keychain) = threeItems()
        let before = keychain.items
        // Renaming both a and b to one account: they'd collide with each other.
        #expect(keychain.update(search(), [.account: .string("z")]) == .duplicateItem)
        // Moving a onto b.
        #expect(
            keychain.update(search([.account: .string("a")]), [.account: .string("b"), .label: .string("L")])
                == .duplicateItem)
        // expo's Data account collides with a String one.
        #expect(keychain.update(search([.account: .string("a")]), [.account: .data(bytes("b"))]) == .duplicateItem)
        #expect(keychain.items == before)
        #expect(keychain.update(search([.account: .string("a")]), [.account: .string("d")]) == .success)
    }

    @Test("expo's update after errSecDuplicateItem: base + u_OpPrompt, {v_Data}")
    func expoUpdate() {
        let (_, keychain) = makeEmulator()
        #expect(keychain.add(Expo.set(key: "k", value: "one")) == .success)
        #expect(keychain.add(Expo.set(key: "k", value: "two")) == .duplicateItem)
        var query = Expo.base(key: "k", requireAuthentication: false)
        query[.operationPrompt] = .string("Unlock")
        #expect(keychain.update(query, [.valueData: .data(bytes("two"))]) == .success)
        #expect(keychain.copyMatching(Expo.get(key: "k", requireAuthentication: false)).result == .data(bytes("two")))
    }

    @Test("delete removes every match; zero matches is errSecItemNotFound")
    func deleteAllMatches() {
        let (_, keychain) = threeItems()
        #expect(keychain.delete(search()) == .success)
        #expect(keychain.items.map(\.data) == [bytes("C")])
        #expect(keychain.delete(search()) == .itemNotFound)
    }

    @Test("delete with any match limit is errSecParam; react-native-keychain's return keys are ignored")
    func deleteQueryRules() {
        let (_, keychain) = makeEmulator()
        #expect(keychain.add(RNK.add(service: "rnk", username: "u", password: "p")) == .success)
        var limited = RNK.reset(service: "rnk")
        limited[.matchLimit] = .string("m_LimitAll")
        #expect(keychain.delete(limited) == .param)
        limited[.matchLimit] = .string("m_LimitOne")
        #expect(keychain.delete(limited) == .param)
        #expect(keychain.items.count == 1)
        #expect(keychain.delete(RNK.reset(service: "rnk")) == .success)
        #expect(keychain.items.isEmpty)
        #expect(keychain.delete(RNK.reset(service: "rnk")) == .itemNotFound)
    }

    @Test("a delete by persistent reference takes no other attribute")
    func deleteByReference() throws {
        let (_, keychain) = threeItems()
        let ref = try #require(keychain.items.first).persistentRef
        #expect(keychain.delete([.valuePersistentRef: .data(ref), .account: .string("a")]) == .param)
        #expect(
            keychain.delete([.valuePersistentRef: .data(ref), .useDataProtectionKeychain: .bool(true)]) == .success)
        #expect(keychain.items.count == 2)
    }
}

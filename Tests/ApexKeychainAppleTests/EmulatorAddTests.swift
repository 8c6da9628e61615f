import ApexKeychain
import ApexKeychainApple
import Foundation
import Testing

/// Uniqueness (`apple-secitem.md` §2.2) and SecItemAdd (§2.3).
@Suite("Emulator: uniqueness and add")
struct EmulatorAddTests {
    @Test("genp is unique by acct, svce, agrp and sync; other attributes don't count")
    func genericPrimaryKey() {
        let (_, keychain) = makeEmulator(groups: [appGroup, sharedGroup])
        #expect(keychain.add(genericPassword()) == .success)
        #expect(keychain.add(genericPassword(secret: "other", [.label: .string("L")])) == .duplicateItem)
        #expect(keychain.add(genericPassword([.accessible: .string("ck")])) == .duplicateItem)
        #expect(keychain.add(genericPassword(service: "svc2")) == .success)
        #expect(keychain.add(genericPassword(account: "user2")) == .success)
        #expect(keychain.add(genericPassword([.accessGroup: .string(sharedGroup)])) == .success)
        #expect(keychain.add(genericPassword([.synchronizable: .bool(true)])) == .success)
        #expect(keychain.items.count == 5)
    }

    @Test("inet is unique by acct, sdmn, srvr, ptcl, atyp, port, path, agrp and sync")
    func internetPrimaryKey() {
        let (_, keychain) = makeEmulator()
        let base: SecItemDictionary = [
            .itemClass: .string("inet"), .server: .string("example.com"), .account: .string("user"),
            .protocol: .string("htps"), .valueData: .data(bytes("s")),
        ]
        #expect(keychain.add(base) == .success)
        #expect(keychain.add(base) == .duplicateItem)
        for (key, value) in [
            (SecItemKey.port, SecItemValue.number(443)), (.path, .string("/login")),
            (.securityDomain, .string("realm")), (.authenticationType, .string("form")), (.protocol, .string("http")),
        ] {
            #expect(keychain.add(base.merging([key: value]) { _, new in new }) == .success, "\(key)")
        }
        // `svce` isn't part of inet's schema, so it can't tell two items apart either.
        #expect(keychain.add(base.merging([.service: .string("x")]) { _, new in new }) == .noSuchAttr)
    }

    @Test("absent primary-key values are their defaults: no acct collides with acct \"\", port 0 with no port")
    func primaryKeyDefaults() {
        let (_, keychain) = makeEmulator()
        #expect(keychain.add([.itemClass: .string("genp"), .service: .string("svc")]) == .success)
        #expect(keychain.add(genericPassword(account: "")) == .duplicateItem)
        #expect(keychain.copyMatching(search([.account: .string("")])).status == .success)
        let inet: SecItemDictionary = [.itemClass: .string("inet"), .server: .string("h")]
        #expect(keychain.add(inet) == .success)
        #expect(
            keychain.add(inet.merging([.port: .number(0), .path: .string("")]) { _, new in new }) == .duplicateItem)
    }

    @Test("a String and Data with the same UTF-8 bytes match and collide (expo's Data acct)")
    func blobsCompareAsBytes() {
        let (_, keychain) = makeEmulator()
        #expect(keychain.add(Expo.set(key: "token", value: "v1")) == .success)
        // The same item written with a String account is a duplicate…
        var asString = Expo.set(key: "token", value: "v2")
        asString[.account] = .string("token")
        #expect(keychain.add(asString) == .duplicateItem)
        // …and a String account finds expo's Data account, which comes back as Data, the type it was stored with.
        let read = keychain.copyMatching([
            .itemClass: .string("genp"), .service: .string("app:no-auth"), .account: .string("token"),
            .returnAttributes: .bool(true), .returnData: .bool(true),
        ])
        #expect(read.status == .success)
        #expect(read.result.attributes?[.account] == .data(bytes("token")))
        #expect(read.result.attributes?[.generic] == .data(bytes("token")))
        #expect(read.result.attributes?[.valueData] == .data(bytes("v1")))
        // expo's own get finds it with its Data keys.
        #expect(
            keychain.copyMatching(Expo.get(key: "token", requireAuthentication: false)).result == .data(bytes("v1")))
    }

    @Test("the first access group is the default; an explicit group must be one of the app's")
    func accessGroupOfAnAdd() {
        let (_, keychain) = makeEmulator(groups: [sharedGroup, appGroup])
        #expect(keychain.add(genericPassword()) == .success)
        #expect(keychain.items.first?.attributes[.accessGroup] == .string(sharedGroup))
        #expect(keychain.add(genericPassword([.accessGroup: .string(appGroup)])) == .success)
        #expect(keychain.add(genericPassword([.accessGroup: .string("OTHER.group")])) == .missingEntitlement)
        #expect(keychain.items.map { $0.attributes[.accessGroup] } == [.string(sharedGroup), .string(appGroup)])
        let (_, defaultGroups) = makeEmulator()
        #expect(defaultGroups.add(genericPassword()) == .success)
        #expect(defaultGroups.items.first?.attributes[.accessGroup] == .string(appGroup))
        let (_, none) = makeEmulator(groups: [])
        #expect(none.add(genericPassword()) == .missingEntitlement)
    }

    @Test("pdmn defaults to ak; accc sets pdmn to its protection; sync defaults to false")
    func protectionOfAnAdd() throws {
        let (_, keychain) = makeEmulator()
        #expect(keychain.add(genericPassword(account: "a")) == .success)
        let spec = SecAccessControlSpec(protection: "cku", flags: .userPresence)
        #expect(keychain.add(genericPassword(account: "b", [.accessControl: .accessControl(spec)])) == .success)
        #expect(keychain.add(genericPassword(account: "c", [.synchronizable: .string("syna")])) == .success)
        let items = keychain.items
        try #require(items.count == 3)
        #expect(items[0].attributes[.accessible] == .string("ak"))
        #expect(items[0].attributes[.synchronizable] == .bool(false))
        #expect(items[0].accessControl == nil)
        #expect(items[1].attributes[.accessible] == .string("cku"))
        #expect(items[1].accessControl == spec)
        #expect(items[1].attributes[.accessControl] == nil)
        #expect(items[2].attributes[.synchronizable] == .bool(false))
    }

    @Test("cdat and mdat are the device's now, whatever the add gave")
    func datesOfAnAdd() {
        let (device, keychain) = makeEmulator()
        device.advanceClock(by: 60)
        let given = Date(timeIntervalSince1970: 1)
        #expect(
            keychain.add(genericPassword([.creationDate: .date(given), .modificationDate: .date(given)])) == .success)
        #expect(keychain.items.first?.attributes[.creationDate] == .date(deviceStart.addingTimeInterval(60)))
        #expect(keychain.items.first?.attributes[.modificationDate] == .date(deviceStart.addingTimeInterval(60)))
    }

    @Test("an add with a match key succeeds and stores nothing (Apple's source); the strict mode refuses it")
    func matchKeysInAdd() {
        let (_, keychain) = makeEmulator()
        #expect(keychain.matchKeysInAdd == .succeedWithoutStoring)
        #expect(keychain.add(genericPassword([.matchLimit: .string("m_LimitOne")])) == .success)
        #expect(keychain.items.isEmpty)
        keychain.matchKeysInAdd = .rejectWithParam
        #expect(keychain.add(genericPassword([.matchLimit: .string("m_LimitAll")])) == .param)
        #expect(keychain.items.isEmpty)
        #expect(keychain.add(genericPassword()) == .success)
        #expect(keychain.items.count == 1)
    }

    @Test("an add with a persistent reference is errSecParam; return keys are accepted")
    func persistentRefInAdd() throws {
        let (_, keychain) = makeEmulator()
        #expect(keychain.add(genericPassword([.returnPersistentRef: .bool(true)])) == .success)
        let ref = try #require(keychain.items.first).persistentRef
        #expect(keychain.add(genericPassword(account: "b", [.valuePersistentRef: .data(ref)])) == .param)
        #expect(keychain.items.count == 1)
    }
}

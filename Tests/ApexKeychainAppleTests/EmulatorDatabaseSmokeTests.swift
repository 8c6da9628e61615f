import ApexKeychain
import ApexKeychainApple
import Foundation
import Testing

/// The emulator under the package's own database: its queries are ones the emulator accepts.
@Suite("Emulator: under SecItemKeychainDatabase")
struct EmulatorDatabaseSmokeTests {
    @Test("an item the database adds reads back, lists and deletes over the emulator")
    func roundTrip() throws {
        let (_, keychain) = makeEmulator()
        let database = SecItemKeychainDatabase(calls: keychain)
        let attributes = ItemAttributes(
            service: "svc", account: "user", accessGroup: appGroup, creator: 0x4170_784B, protectionDomain: .ck)
        try database.add(KeychainItem(attributes: attributes, value: bytes("secret")))
        #expect(keychain.calls.allSatisfy { $0.status == .success })
        #expect(try database.value(for: attributes.primaryKey) == bytes("secret"))
        #expect(try database.attributes(matching: ItemQuery(service: "svc")).map(\.account) == ["user"])
        #expect(try database.itemsWithValues(matching: ItemQuery(service: "svc")).count == 1)
        #expect(try database.delete(attributes.primaryKey))
        #expect(keychain.items.isEmpty)
        #expect(keychain.calls.allSatisfy { $0.status == .success || $0.status == .itemNotFound })
    }
}

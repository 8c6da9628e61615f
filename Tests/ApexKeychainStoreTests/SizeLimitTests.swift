import ApexKeychain
import ApexKeychainStore
import ApexTestSupport
import Foundation
import Testing

/// A store holds values of up to ``SQLiteKeychainDatabase/maximumValueSize`` (16 MiB), and is created with a
/// passphrase of up to ``SQLiteKeychainDatabase/maximumPassphraseLength`` (1 KiB); past them, a refusal before
/// anything is written.
@Suite("Size limits")
struct SizeLimitTests {
    let scratch: ScratchFolder
    let store: TestStore

    init() throws {
        scratch = try ScratchFolder("store-test")
        store = TestStore(scratch)
    }

    @Test("a value of 16 MiB is stored; one byte more is refused with io, by add and by replace, and nothing changes")
    func limit() async throws {
        #expect(SQLiteKeychainDatabase.maximumValueSize == 16 * 1024 * 1024)
        let db = try store.create()
        let kc = try keychain(db)
        let largest = Data(repeating: 0x42, count: SQLiteKeychainDatabase.maximumValueSize)
        try await kc.setBytes("largest", largest)
        #expect(try await kc.getBytes("largest") == largest)
        let tooLarge = largest + Data([0x43])
        for key in ["largest", "new"] {
            let error = await #expect(throws: KeychainError.self) { try await kc.setBytes(key, tooLarge) }
            #expect(error?.code == .INTERNAL)
            #expect(
                error?.message.contains("a store holds values of up to 16777216 bytes (16 MiB)") == true,
                "\(error?.message ?? "")")
        }
        let item = KeychainItem(
            attributes: ItemAttributes(service: "s", account: "raw", accessGroup: "g"), value: tooLarge)
        let error = #expect(throws: KeychainDatabaseError.self) { try db.add(item) }
        #expect(error?.status == .io)
        #expect(try await kc.getAllKeys() == ["largest"])
        #expect(try await kc.getBytes("largest") == largest)
    }

    @Test("create takes a passphrase of 1 KiB, and refuses one byte more with cannotCreate, leaving nothing")
    func passphraseLimit() throws {
        #expect(SQLiteKeychainDatabase.maximumPassphraseLength == 1024)
        let longest = Data(repeating: UInt8(ascii: "p"), count: 1024)
        let error = storeError { () throws(StoreError) in
            try SQLiteKeychainDatabase.create(at: store.url, key: .passphrase(longest + Data("p".utf8)), device: .linux)
        }
        #expect(error?.kind == .cannotCreate)
        #expect(error?.message == "the passphrase is longer than 1024 bytes")
        #expect(try scratch.names().isEmpty)
        do { _ = try SQLiteKeychainDatabase.create(at: store.url, key: .passphrase(longest), device: .linux) }
        #expect(throws: Never.self) { _ = try SQLiteKeychainDatabase(opening: store.url, key: .passphrase(longest)) }
    }
}

import ApexKeychain
import ApexKeychainStore
import ApexTestSupport
import Foundation
import Testing

/// A store whose file was cut short or overwritten is reported as damaged, not as "not a SQLite database", so
/// that no one throws a store away for a file of another kind.
@Suite("Damaged stores")
struct DamagedStoreTests {
    let scratch: ScratchFolder
    let store: TestStore

    init() throws {
        scratch = try ScratchFolder("store-test")
        store = TestStore(scratch)
    }

    /// Ways to damage a store file of several pages: cut in half, cut inside its header, its header overwritten
    /// after the magic string.
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case truncatedToHalf, truncatedInHeader, headerOverwritten
        var testDescription: String { rawValue }
    }

    @Test(
        "a damaged or truncated store fails with damaged, naming the file, and is left as it was",
        arguments: Damage.allCases)
    func damaged(_ damage: Damage) async throws {
        do {
            let kc = try keychain(try store.create())
            for index in 0..<40 { try await kc.setBytes("k\(index)", Data(repeating: UInt8(index), count: 2000)) }
        }
        var bytes = try Data(contentsOf: store.url)
        try #require(bytes.count >= 8 * 4096, "the store has \(bytes.count) bytes")
        switch damage {
        case .truncatedToHalf: bytes = bytes.prefix(bytes.count / 2)
        case .truncatedInHeader: bytes = bytes.prefix(50)
        case .headerOverwritten: bytes.replaceSubrange(16..<100, with: Data(repeating: 0xFF, count: 84))
        }
        try bytes.write(to: store.url)
        let error = storeError { () throws(StoreError) in try store.open() }
        #expect(error?.kind == .damaged, "\(error?.description ?? "no error")")
        #expect(error?.path == store.url.path)
        #expect(error?.message.contains("damaged or truncated") == true)
        #expect(try Data(contentsOf: store.url) == bytes)
    }

    @Test(
        "a row whose class or protection the store does not know is damaged: its listing fails and says so, and a prefix or a longer name of a known one is not taken for it",
        arguments: ["zz", "a", "akk", "AK", ""])
    func unknownProtectionIsDamaged(pdmn: String) async throws {
        do {
            let kc = try keychain(try store.create())
            try await kc.setItem("k", "v")
        }
        try store.raw().execute("UPDATE items SET pdmn = '\(pdmn)'")
        let db = try store.open()
        #expect {
            try db.attributes(matching: ItemQuery(service: "s"))
        } throws: { error in
            guard let error = error as? KeychainDatabaseError else { return false }
            return error.status == .damaged && error.message.contains("unknown class or protection")
        }
    }

    @Test("an empty file is not a store, and says so")
    func emptyFile() throws {
        try Data().write(to: store.url)
        let error = storeError { () throws(StoreError) in try store.open() }
        #expect(error?.kind == .notAStore)
        #expect(error?.message == "not a store: the file is empty")
    }
}

import ApexKeychain
import Testing

@testable import ApexMigration

/// A migration's ledger reads only its own records: its id's, byte for byte, and of the form it writes.
@Suite("ledger record keys")
struct LedgerRecordKeysTests {
    static let target = TargetItem(service: "app", key: "token", kind: .string, options: SetOptions())

    @Test("a migration's journal leaves out another's whose id is its own followed by ':' and more")
    func journalOfAnotherID() async throws {
        let target = MigrationTarget(database: InMemoryKeychainDatabase(), device: SimulatedDevice())
        let longer = try Ledger(target: target, id: "a:b")
        try longer.journal(Ledger.JournalRecord(parked: []), for: Self.target)
        #expect(try await longer.journalRecords().count == 1)
        let shorter = try Ledger(target: target, id: "a")
        #expect(try await shorter.journalRecords().isEmpty)
        try shorter.journal(Ledger.JournalRecord(parked: []), for: Self.target)
        let own = try await shorter.journalRecords()
        #expect(own.map(\.digest) == [Ledger.digest(Self.target)])
    }

    @Test("a digest is 32 lowercase hex digits")
    func digests() {
        #expect(Ledger.isDigest(Substring(Ledger.digest(Self.target))))
        #expect(!Ledger.isDigest("b:" + Substring(Ledger.digest(Self.target))))
        #expect(!Ledger.isDigest(Substring(Ledger.digest(Self.target).uppercased())))
        #expect(!Ledger.isDigest(""))
    }
}

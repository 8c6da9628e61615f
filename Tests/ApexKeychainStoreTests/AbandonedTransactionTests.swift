import ApexKeychain
import ApexSQLite
import ApexTestSupport
import Foundation
import Testing

@testable import ApexKeychainStore

/// A transaction whose rollback failed stays open on the connection (SQLite refuses a `ROLLBACK` while a read is
/// still running after an interrupt). The store ends it before the next read or write: before, the next write ran
/// as a savepoint inside it and reported success without ever reaching the file.
@Suite("a transaction whose rollback failed")
struct AbandonedTransactionTests {
    private struct Abandon: Error {}

    @Test("the next write ends it and reaches the file, and the abandoned writes are gone")
    func nextWriteReachesTheFile() async throws {
        let scratch = try ScratchFolder("store-test")
        let store = TestStore(scratch)
        let database = try store.create()
        let reading = try database.connection.prepare("SELECT 1 UNION ALL SELECT 2")
        #expect(throws: (any Error).self) {
            try database.atomically {
                try database.connection.execute("CREATE TABLE abandoned(a)")
                _ = try reading.step()
                database.connection.interrupt()
                throw Abandon()
            }
        }
        #expect(database.connection.isInTransaction, "the rollback failed: the transaction is still open")
        reading.reset()

        try await keychain(database).setItem("second", "sample-value")
        let reopened = try store.open()
        #expect(try await keychain(reopened).getAllKeys() == ["second"])
        #expect(
            try RawDatabase(store.url).integer("SELECT count(*) FROM sqlite_master WHERE name = 'abandoned'") == 0)
    }
}

import ApexSQLite
import ApexTestSupport
import CSQLite
import Foundation
import Testing

/// A rollback that fails keeps its error. The failure is a real one: the body leaves a read running and
/// interrupts the connection (`sqlite3_interrupt`, how an app cancels), so SQLite refuses the `ROLLBACK` that
/// follows with `SQLITE_INTERRUPT` and the transaction stays open until the read is reset.
@Suite struct RollbackTests {
    private struct Abandon: Error {}

    /// A connection with a table of three rows.
    private static func table() throws -> Connection {
        let connection = try Connection(path: ":memory:", mode: [.readWrite, .create])
        try connection.execute("CREATE TABLE t(a INTEGER NOT NULL); INSERT INTO t VALUES (1), (2), (3)")
        return connection
    }

    /// Inserts a row, leaves `reading` on its first row and interrupts the connection: the next statement
    /// (the rollback) fails.
    private static func writeAndInterrupt(_ connection: Connection, _ reading: Statement) throws(SQLiteError) {
        try connection.execute("INSERT INTO t VALUES (4)")
        #expect(try reading.step())
        sqlite3_interrupt(connection.handle)
    }

    /// `error` is the body's ``Abandon``, kept with the interrupted rollback's error, and says both.
    private static func expectAbandonedWithInterruptedRollback(
        _ error: TransactionError<any Error>, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard case .body(let failure, let rollbackError) = error else {
            Issue.record("expected the body's error, got \(error)", sourceLocation: sourceLocation)
            return
        }
        #expect(failure is Abandon, sourceLocation: sourceLocation)
        #expect(rollbackError?.primary == .interrupt, sourceLocation: sourceLocation)
        #expect(error.rollbackError?.code == rollbackError?.code, sourceLocation: sourceLocation)
        #expect("\(error)".contains("the rollback failed too"), sourceLocation: sourceLocation)
    }

    private static func count(_ connection: Connection) throws -> Int64? {
        try connection.prepare("SELECT count(*) FROM t").firstRow { $0.int64(0) }
    }

    @Test("a body's own error and the failed rollback after it: both kept")
    func transactionKeepsTheRollbackError() throws {
        let connection = try Self.table()
        let reading = try connection.prepare("SELECT a FROM t")
        do {
            try connection.transaction(.immediate) {
                try Self.writeAndInterrupt(connection, reading)
                throw Abandon()
            }
            Issue.record("the transaction should fail")
        } catch {
            Self.expectAbandonedWithInterruptedRollback(error)
        }
        // The rollback failed, so the transaction is still open; once the read ends, it can be undone.
        #expect(connection.isInTransaction)
        reading.reset()
        try connection.rollbackIfOpen()
        #expect(!connection.isInTransaction)
        #expect(try Self.count(connection) == 3)
    }

    @Test("a SQLite error in a typed body carries the failed rollback's error")
    func typedTransactionKeepsTheRollbackError() throws {
        let connection = try Self.table()
        let reading = try connection.prepare("SELECT a FROM t")
        #expect {
            try connection.transaction(.immediate) { () throws(SQLiteError) in
                try Self.writeAndInterrupt(connection, reading)
                // Any statement now fails, interrupted, as the rollback after it will.
                try connection.execute("SELECT 1")
            }
        } throws: { error in
            guard let error = error as? SQLiteError else { return false }
            return error.primary == .interrupt && error.rollbackError?.primary == .interrupt
                && error.description.contains("the rollback failed too")
        }
        reading.reset()
        try connection.rollbackIfOpen()
        #expect(try Self.count(connection) == 3)
    }

    @Test("a savepoint whose rollback fails keeps that error, and the outer transaction stays open")
    func savepointKeepsTheRollbackError() throws {
        let connection = try Self.table()
        let reading = try connection.prepare("SELECT a FROM t")
        try connection.begin(.immediate)
        do {
            try connection.savepoint {
                try Self.writeAndInterrupt(connection, reading)
                throw Abandon()
            }
            Issue.record("the savepoint should fail")
        } catch {
            Self.expectAbandonedWithInterruptedRollback(error)
        }
        #expect(connection.isInTransaction)
        reading.reset()
        try connection.rollbackIfOpen()
        #expect(try Self.count(connection) == 3)
    }

    @Test("a rollback that succeeds adds nothing to the error; a failed BEGIN is SQLite's error")
    func aSuccessfulRollbackIsNotAnError() throws {
        let connection = try Self.table()
        #expect {
            try connection.transaction { () throws(SQLiteError) in
                try connection.execute("INSERT INTO t VALUES (NULL)")
            }
        } throws: { error in
            guard let error = error as? SQLiteError else { return false }
            return error.primary == .constraint && error.rollbackError == nil
                && !error.description.contains("rollback")
        }
        #expect(try Self.count(connection) == 3)
        // BEGIN fails (another connection holds the write lock): SQLite's error, and the body never runs.
        let folder = try ScratchFolder("sqlite")
        let path = folder.path("locked.sqlite")
        let writer = try Connection(path: path, mode: [.readWrite, .create])
        try writer.execute("CREATE TABLE t(a INTEGER)")
        try writer.begin(.immediate)
        let other = try Connection(path: path, mode: .readWrite)
        var ran = false
        do {
            try other.transaction(.immediate) {
                ran = true
                throw Abandon()
            }
        } catch {
            guard case .sqlite(let failure) = error else {
                Issue.record("expected BEGIN's error, got \(error)")
                return
            }
            #expect(failure.isBusy && failure.rollbackError == nil)
        }
        #expect(!ran)
        try writer.commit()
    }
}

import ApexSQLite
import ApexTestSupport
import Foundation
import Testing

@Suite struct ConnectionTests {
    private static func memory() throws -> Connection {
        try Connection(path: ":memory:", mode: [.readWrite, .create])
    }

    /// Whether `error` is a transaction's failure by the body's error of type `failure`, rolled back.
    private static func isBodyError<Failure: Error>(_ error: any Error, _ failure: Failure.Type) -> Bool {
        guard case .body(let error, nil) = error as? TransactionError<any Error> else { return false }
        return error is Failure
    }

    @Test func errorCarriesSQLAndCodeButNeverABoundValue() throws {
        let connection = try Self.memory()
        try connection.execute("CREATE TABLE t(a TEXT NOT NULL UNIQUE CHECK (length(a) < 5))")
        let canary = "canary-7f3a9c-secret"
        let sql = SQL("INSERT INTO t(a) VALUES (?)")
        let statement = try connection.statement(sql)
        try statement.bind(1, canary)
        #expect {
            try statement.run()
        } throws: { error in
            guard let error = error as? SQLiteError else { return false }
            let texts = [
                error.description, error.debugDescription, error.message, error.sql, "\(error)",
                String(reflecting: error),
            ]
            return error.primary == .constraint && error.sql == sql.text
                && texts.allSatisfy { !$0.contains(canary) && !$0.contains("canary") }
        }
        // Binding out of range is checked, not ignored.
        #expect(throws: SQLiteError.self) { try statement.bind(2, canary) }
        do {
            try statement.bind(2, Data(canary.utf8))
            Issue.record("binding parameter 2 of 1 should fail")
        } catch {
            #expect(error.primary == .range)
            #expect(!"\(error)".contains(canary) && !String(reflecting: error).contains(canary))
        }
    }

    @Test func aStatementIsPreparedOncePerSQLAndHandedOutReset() throws {
        let connection = try Self.memory()
        try connection.execute("CREATE TABLE t(a INTEGER)")
        let insert = SQL("INSERT INTO t(a) VALUES (?)")
        let first = try connection.statement(insert)
        try first.bind(1, Int64(7))
        // The same SQL: the same statement, its binding cleared (NULL is inserted, not 7).
        let again = try connection.statement(insert)
        #expect(again === first)
        try again.run()
        // Another SQL of the same text is another statement: the cache never compares texts.
        let twin = try connection.statement(SQL(insert.text))
        #expect(twin !== first)
        try twin.bind(1, Int64(8))
        try twin.run()
        let rows = try connection.prepare("SELECT a FROM t ORDER BY a").allRows { $0.isNull(0) ? nil : $0.int64(0) }
        #expect(rows == [nil, 8])
    }

    @Test(
        "bound texts and blobs keep their bytes until the statement runs: empty ones stay empty (not NULL), many and large ones too, and a statement handed out again binds anew"
    )
    func boundBytesSurviveUntilTheStatementRuns() throws {
        let connection = try Self.memory()
        try connection.execute("CREATE TABLE t(i INTEGER, a TEXT, b BLOB)")
        let insert = SQL("INSERT INTO t(i, a, b) VALUES (?, ?, ?)")
        // Values of every size around the chunks the statement copies into (1 KiB, doubling; a 64 KiB one is kept).
        let sizes = [0, 1, 15, 16, 1023, 1024, 1025, 3000, 70_000, 200_000, 0, 5]
        var expected: [(Int64, String, Data)] = []
        for (index, size) in sizes.enumerated() {
            let text = String(repeating: String(UnicodeScalar(UInt8(65 + index % 26))), count: size)
            let blob = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) })
            let statement = try connection.statement(insert)
            try statement.bind(1, Int64(index))
            try statement.bind(2, text)
            try statement.bind(3, blob)
            try statement.run()
            expected.append((Int64(index), text, blob))
        }
        // One statement, many parameters bound before it runs: the first chunk fills and the next is taken.
        let wide = SQL("SELECT " + (1...40).map { _ in "?" }.joined(separator: " || "))
        let concatenate = try connection.statement(wide)
        let parts = (1...40).map { String(repeating: String($0 % 10), count: 100) }
        for (index, part) in parts.enumerated() { try concatenate.bind(Int32(index + 1), part) }
        #expect(try concatenate.firstRow { $0.string(0) } == parts.joined())

        let rows = try connection.prepare("SELECT i, a, b, typeof(a), typeof(b) FROM t ORDER BY i").allRows {
            ($0.int64(0), $0.string(1) ?? "<null>", $0.data(2) ?? Data("<null>".utf8), $0.string(3), $0.string(4))
        }
        #expect(rows.count == expected.count)
        for (row, want) in zip(rows, expected) {
            #expect(row.0 == want.0)
            #expect(row.1 == want.1, "text of row \(want.0)")
            #expect(row.2 == want.2, "blob of row \(want.0)")
            #expect(row.3 == "text" && row.4 == "blob", "row \(want.0) is \(row.3 ?? "?"), \(row.4 ?? "?")")
        }
    }

    @Test func nestedTransactionRollsBackToItsSavepoint() throws {
        struct Abandon: Error {}
        let connection = try Self.memory()
        try connection.execute("CREATE TABLE t(a INTEGER)")
        let insertSQL = SQL("INSERT INTO t(a) VALUES (?)")
        let insert = { (value: Int64) throws in
            let statement = try connection.statement(insertSQL)
            try statement.bind(1, value)
            try statement.run()
        }
        try connection.transaction(.immediate) {
            try insert(1)
            #expect {
                try connection.transaction {
                    try insert(2)
                    #expect(connection.isInTransaction)
                    throw Abandon()
                }
            } throws: { Self.isBodyError($0, Abandon.self) }
            // The outer transaction is still open, and keeps its own row.
            #expect(connection.isInTransaction)
            try connection.transaction { try insert(3) }
        }
        #expect(!connection.isInTransaction)
        let rows = try connection.prepare("SELECT a FROM t ORDER BY a").allRows { $0.int64(0) }
        #expect(rows == [1, 3])
    }

    @Test func failedTransactionRollsBackOnlyWhenOpen() throws {
        struct Abandon: Error {}
        let connection = try Self.memory()
        try connection.execute("CREATE TABLE t(a INTEGER)")
        #expect {
            try connection.transaction {
                try connection.execute("INSERT INTO t VALUES (1)")
                throw Abandon()
            }
        } throws: { Self.isBodyError($0, Abandon.self) }
        #expect(!connection.isInTransaction)
        // Nothing open: rolling back is a no-op, not an error.
        try connection.rollbackIfOpen()
        #expect(try connection.prepare("SELECT count(*) FROM t").firstRow { $0.int64(0) } == 0)
    }

    @Test func readsAnImageInMemoryReadOnly() throws {
        let folder = try ScratchFolder("sqlite")
        let path = folder.path("image.sqlite")
        do {
            let writer = try Connection(path: path, mode: [.readWrite, .create])
            try writer.execute("CREATE TABLE t(a TEXT); INSERT INTO t VALUES ('x'), ('y')")
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        final class Image {
            let buffer: UnsafeMutableRawBufferPointer
            init(_ data: Data) {
                buffer = .allocate(byteCount: data.count, alignment: 16)
                buffer.copyBytes(from: data)
            }
            deinit { buffer.deallocate() }
        }
        let image = Image(bytes)
        let connection = try Connection.readOnlyImage(image.buffer.baseAddress!, count: bytes.count, owner: image)
        let rows = try connection.prepare("SELECT a FROM t ORDER BY a").allRows { $0.string(0) }
        #expect(rows == ["x", "y"])
        #expect(throws: SQLiteError.self) { try connection.execute("INSERT INTO t VALUES ('z')") }
    }
}

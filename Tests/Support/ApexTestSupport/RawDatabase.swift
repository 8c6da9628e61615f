import ApexSQLite
import Foundation

/// A plain SQLite connection (ApexSQLite, not the store's or a reader's code), for writing a dump file with plain
/// SQL, or reading and editing a store file behind the package's back. Not thread-safe; one test uses it at a time.
package final class RawDatabase {
    private let connection: Connection

    /// Opens the database at `path` read-write, creating it when `create` is true; waits up to 10 s for a lock.
    package init(path: String, create: Bool = false) throws {
        connection = try Connection(
            path: path, mode: create ? [.readWrite, .create] : .readWrite, extendedResultCodes: false)
        connection.setBusyTimeout(milliseconds: 10_000)
    }

    /// Opens the database at `url` (see ``init(path:create:)``).
    package convenience init(_ url: URL, create: Bool = false) throws {
        try self.init(path: url.path, create: create)
    }

    /// Creates the database at `path` (or opens it) and runs `sql` in it.
    package static func create(_ path: String, _ sql: String) throws {
        try RawDatabase(path: path, create: true).execute(sql)
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String) throws {
        try connection.execute(sql)
    }

    /// Every row of a query, each column as text (nil for NULL).
    package func rows(_ sql: String) throws -> [[String?]] {
        let statement = try connection.prepare(sql)
        return try statement.allRows { row in (0..<row.columnCount).map { row.string($0) } }
    }

    /// The first column of the first row, as text.
    package func text(_ sql: String) throws -> String? {
        try rows(sql).first?.first ?? nil
    }

    /// The first column of the first row, as an integer.
    package func integer(_ sql: String) throws -> Int? {
        try text(sql).flatMap { Int($0) }
    }

    /// How many rows the last statement changed.
    package var changes: Int { connection.changes }
}

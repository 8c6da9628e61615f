/// A SQLite result code (primary or extended), by name: the package's code compares these, never the C
/// module's `SQLITE_*` numbers. The numbers are SQLite's (stable across releases: they are part of its file and
/// C interfaces); `ApexSQLiteTests` checks each against the C constant of the same name.
package struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as SQLite returns it.
    package let rawValue: Int32

    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code of an extended one (`readOnly` for `readOnlyDirectory`); a primary code is its own.
    package var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    /// The number, as SQLite's messages and `sqlite3_errstr` name it.
    package var description: String { String(rawValue) }

    // MARK: Primary codes

    package static let ok = ResultCode(rawValue: 0)
    package static let error = ResultCode(rawValue: 1)
    package static let `internal` = ResultCode(rawValue: 2)
    package static let perm = ResultCode(rawValue: 3)
    package static let abort = ResultCode(rawValue: 4)
    package static let busy = ResultCode(rawValue: 5)
    package static let locked = ResultCode(rawValue: 6)
    package static let nomem = ResultCode(rawValue: 7)
    package static let readOnly = ResultCode(rawValue: 8)
    package static let interrupt = ResultCode(rawValue: 9)
    package static let ioErr = ResultCode(rawValue: 10)
    package static let corrupt = ResultCode(rawValue: 11)
    package static let notFound = ResultCode(rawValue: 12)
    package static let full = ResultCode(rawValue: 13)
    package static let cantOpen = ResultCode(rawValue: 14)
    package static let `protocol` = ResultCode(rawValue: 15)
    package static let empty = ResultCode(rawValue: 16)
    package static let schema = ResultCode(rawValue: 17)
    package static let tooBig = ResultCode(rawValue: 18)
    package static let constraint = ResultCode(rawValue: 19)
    package static let mismatch = ResultCode(rawValue: 20)
    package static let misuse = ResultCode(rawValue: 21)
    package static let noLFS = ResultCode(rawValue: 22)
    package static let auth = ResultCode(rawValue: 23)
    package static let format = ResultCode(rawValue: 24)
    package static let range = ResultCode(rawValue: 25)
    package static let notADB = ResultCode(rawValue: 26)
    package static let notice = ResultCode(rawValue: 27)
    package static let warning = ResultCode(rawValue: 28)
    package static let row = ResultCode(rawValue: 100)
    package static let done = ResultCode(rawValue: 101)

    // MARK: Extended codes (the primary code in the low byte)

    private static func extended(_ primary: ResultCode, _ number: Int32) -> ResultCode {
        ResultCode(rawValue: primary.rawValue | number << 8)
    }

    package static let busyRecovery = extended(.busy, 1)
    package static let busySnapshot = extended(.busy, 2)
    package static let busyTimeout = extended(.busy, 3)
    package static let lockedSharedCache = extended(.locked, 1)
    package static let readOnlyRecovery = extended(.readOnly, 1)
    package static let readOnlyCantLock = extended(.readOnly, 2)
    package static let readOnlyRollback = extended(.readOnly, 3)
    package static let readOnlyDBMoved = extended(.readOnly, 4)
    package static let readOnlyCantInit = extended(.readOnly, 5)
    package static let readOnlyDirectory = extended(.readOnly, 6)
    package static let ioErrRead = extended(.ioErr, 1)
    package static let ioErrShortRead = extended(.ioErr, 2)
    package static let ioErrWrite = extended(.ioErr, 3)
    package static let ioErrFsync = extended(.ioErr, 4)
    package static let ioErrTruncate = extended(.ioErr, 6)
    package static let ioErrFstat = extended(.ioErr, 7)
    package static let ioErrNoMem = extended(.ioErr, 12)
    package static let ioErrAccess = extended(.ioErr, 13)
    package static let ioErrShmOpen = extended(.ioErr, 18)
    package static let corruptVTab = extended(.corrupt, 1)
    package static let cantOpenIsDir = extended(.cantOpen, 2)
    package static let cantOpenFullPath = extended(.cantOpen, 3)
    package static let constraintCheck = extended(.constraint, 1)
    package static let constraintForeignKey = extended(.constraint, 3)
    package static let constraintNotNull = extended(.constraint, 5)
    package static let constraintPrimaryKey = extended(.constraint, 6)
    package static let constraintTrigger = extended(.constraint, 7)
    package static let constraintUnique = extended(.constraint, 8)
    package static let abortRollback = extended(.abort, 2)
}

/// How ``Connection/init(path:mode:extendedResultCodes:)`` opens a database (SQLite's `SQLITE_OPEN_*` flags, by
/// name; `ApexSQLiteTests` checks the numbers).
package struct OpenMode: OptionSet, Sendable {
    package let rawValue: Int32

    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// Reading only.
    package static let readOnly = OpenMode(rawValue: 0x01)
    /// Reading and writing (SQLite falls back to reading when the file is read-only).
    package static let readWrite = OpenMode(rawValue: 0x02)
    /// Creates the file when there is none (with ``readWrite``).
    package static let create = OpenMode(rawValue: 0x04)
    /// The path is a `file:` URI (``Connection/immutableURI(path:)``).
    package static let uri = OpenMode(rawValue: 0x40)
}

/// A column's storage class in the row a statement stands on (`sqlite3_column_type`).
package enum StorageClass: Int32, Sendable {
    case integer = 1
    case float = 2
    case text = 3
    case blob = 4
    case null = 5
}

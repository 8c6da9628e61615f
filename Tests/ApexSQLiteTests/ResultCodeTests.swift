import ApexSQLite
import CSQLite
import Foundation
import Testing

/// ApexSQLite's names for SQLite's numbers are SQLite's: each is checked against the C constant of its name.
@Suite struct ResultCodeTests {
    /// The primary codes and their C constants.
    static let resultCodes: [(ResultCode, Int32, String)] = [
        (.ok, SQLITE_OK, "OK"), (.error, SQLITE_ERROR, "ERROR"), (.internal, SQLITE_INTERNAL, "INTERNAL"),
        (.perm, SQLITE_PERM, "PERM"), (.abort, SQLITE_ABORT, "ABORT"), (.busy, SQLITE_BUSY, "BUSY"),
        (.locked, SQLITE_LOCKED, "LOCKED"), (.nomem, SQLITE_NOMEM, "NOMEM"), (.readOnly, SQLITE_READONLY, "READONLY"),
        (.interrupt, SQLITE_INTERRUPT, "INTERRUPT"), (.ioErr, SQLITE_IOERR, "IOERR"),
        (.corrupt, SQLITE_CORRUPT, "CORRUPT"), (.notFound, SQLITE_NOTFOUND, "NOTFOUND"), (.full, SQLITE_FULL, "FULL"),
        (.cantOpen, SQLITE_CANTOPEN, "CANTOPEN"), (.protocol, SQLITE_PROTOCOL, "PROTOCOL"),
        (.empty, SQLITE_EMPTY, "EMPTY"), (.schema, SQLITE_SCHEMA, "SCHEMA"), (.tooBig, SQLITE_TOOBIG, "TOOBIG"),
        (.constraint, SQLITE_CONSTRAINT, "CONSTRAINT"), (.mismatch, SQLITE_MISMATCH, "MISMATCH"),
        (.misuse, SQLITE_MISUSE, "MISUSE"), (.noLFS, SQLITE_NOLFS, "NOLFS"), (.auth, SQLITE_AUTH, "AUTH"),
        (.format, SQLITE_FORMAT, "FORMAT"), (.range, SQLITE_RANGE, "RANGE"), (.notADB, SQLITE_NOTADB, "NOTADB"),
        (.notice, SQLITE_NOTICE, "NOTICE"), (.warning, SQLITE_WARNING, "WARNING"), (.row, SQLITE_ROW, "ROW"),
        (.done, SQLITE_DONE, "DONE"),
    ]

    /// The extended codes, by their name in `sqlite3.h` (the C macros, `(SQLITE_IOERR | (1<<8))`, don't import
    /// into Swift: they are read from the header).
    static let extendedCodes: [(String, ResultCode)] = [
        ("BUSY_RECOVERY", .busyRecovery), ("BUSY_SNAPSHOT", .busySnapshot), ("BUSY_TIMEOUT", .busyTimeout),
        ("LOCKED_SHAREDCACHE", .lockedSharedCache), ("READONLY_RECOVERY", .readOnlyRecovery),
        ("READONLY_CANTLOCK", .readOnlyCantLock), ("READONLY_ROLLBACK", .readOnlyRollback),
        ("READONLY_DBMOVED", .readOnlyDBMoved), ("READONLY_CANTINIT", .readOnlyCantInit),
        ("READONLY_DIRECTORY", .readOnlyDirectory), ("IOERR_READ", .ioErrRead),
        ("IOERR_SHORT_READ", .ioErrShortRead), ("IOERR_WRITE", .ioErrWrite), ("IOERR_FSYNC", .ioErrFsync),
        ("IOERR_TRUNCATE", .ioErrTruncate), ("IOERR_FSTAT", .ioErrFstat), ("IOERR_NOMEM", .ioErrNoMem),
        ("IOERR_ACCESS", .ioErrAccess), ("IOERR_SHMOPEN", .ioErrShmOpen), ("CORRUPT_VTAB", .corruptVTab),
        ("CANTOPEN_ISDIR", .cantOpenIsDir), ("CANTOPEN_FULLPATH", .cantOpenFullPath),
        ("CONSTRAINT_CHECK", .constraintCheck), ("CONSTRAINT_FOREIGNKEY", .constraintForeignKey),
        ("CONSTRAINT_NOTNULL", .constraintNotNull), ("CONSTRAINT_PRIMARYKEY", .constraintPrimaryKey),
        ("CONSTRAINT_TRIGGER", .constraintTrigger), ("CONSTRAINT_UNIQUE", .constraintUnique),
        ("ABORT_ROLLBACK", .abortRollback),
    ]

    @Test("every named result code is SQLite's number, and an extended code's primary is its low byte")
    func resultCodesAreSQLites() {
        for (code, number, name) in Self.resultCodes {
            #expect(code.rawValue == number, "ResultCode for SQLITE_\(name)")
            #expect(code.primary.rawValue == number & 0xFF, "primary of SQLITE_\(name)")
        }
        let all = Self.resultCodes.map(\.0) + Self.extendedCodes.map(\.1)
        #expect(Set(all).count == all.count, "two names for one code")
    }

    @Test("every named extended code is the number sqlite3.h defines for it")
    func extendedCodesAreSQLites() throws {
        let header = try Self.sqliteHeader()
        let primaries = Dictionary(uniqueKeysWithValues: Self.resultCodes.map { ($0.2, $0.1) })
        for (name, code) in Self.extendedCodes {
            // `#define SQLITE_IOERR_READ              (SQLITE_IOERR | (1<<8))`
            let line = header.split(separator: "\n").first {
                $0.hasPrefix("#define SQLITE_\(name) ") || $0.hasPrefix("#define SQLITE_\(name)\t")
            }
            let parts = line.map { $0.split(whereSeparator: { "() |<".contains($0) }) } ?? []
            guard parts.count >= 5, parts[2].hasPrefix("SQLITE_"),
                let primary = primaries[String(parts[2].dropFirst(7))],
                let number = Int32(parts[3]), parts[4] == "8"
            else {
                Issue.record("sqlite3.h has no SQLITE_\(name) of the usual form: \(line.map(String.init) ?? "none")")
                continue
            }
            #expect(code.rawValue == primary | number << 8, "ResultCode for SQLITE_\(name)")
            #expect(code.primary.rawValue == primary, "primary of SQLITE_\(name)")
        }
    }

    /// The text of the `sqlite3.h` that the C module includes (where pkg-config says, or the system's).
    private static func sqliteHeader() throws -> String {
        var folders = ["/usr/include", "/usr/local/include", "/opt/homebrew/include"]
        let pkgConfig = Process()
        pkgConfig.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        pkgConfig.arguments = ["pkg-config", "--cflags-only-I", "sqlite3"]
        let output = Pipe()
        pkgConfig.standardOutput = output
        pkgConfig.standardError = FileHandle.nullDevice
        if (try? pkgConfig.run()) != nil {
            let flags = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            pkgConfig.waitUntilExit()
            folders.insert(
                contentsOf: flags.split(separator: " ").filter { $0.hasPrefix("-I") }.map { String($0.dropFirst(2)) },
                at: 0)
        }
        for folder in folders {
            if let text = try? String(contentsOfFile: folder + "/sqlite3.h", encoding: .utf8) { return text }
        }
        throw HeaderNotFound(folders: folders)
    }

    private struct HeaderNotFound: Error {
        let folders: [String]
    }

    @Test("open modes and storage classes are SQLite's numbers")
    func openModesAndStorageClassesAreSQLites() {
        let modes: [(OpenMode, Int32)] = [
            (.readOnly, SQLITE_OPEN_READONLY), (.readWrite, SQLITE_OPEN_READWRITE), (.create, SQLITE_OPEN_CREATE),
            (.uri, SQLITE_OPEN_URI),
        ]
        for (mode, flag) in modes { #expect(mode.rawValue == flag) }
        let classes: [(StorageClass, Int32)] = [
            (.integer, SQLITE_INTEGER), (.float, SQLITE_FLOAT), (.text, SQLITE_TEXT), (.blob, SQLITE_BLOB),
            (.null, SQLITE_NULL),
        ]
        for (storage, number) in classes { #expect(storage.rawValue == number) }
    }

    @Test("a failed call's error carries its extended code, and the store's checks see its primary")
    func errorsCarryResultCodes() throws {
        let connection = try Connection(path: ":memory:", mode: [.readWrite, .create])
        try connection.execute("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT NOT NULL)")
        #expect {
            try connection.execute("INSERT INTO t VALUES (1, NULL)")
        } throws: { error in
            let error = error as? SQLiteError
            return error?.code == .constraintNotNull && error?.primary == .constraint && error?.isBusy == false
        }
        let row = try connection.prepare("SELECT 1, 2.5, 'x', x'00', NULL")
        #expect(try row.step())
        #expect((0..<5).map { row.storageClass($0) } == [.integer, .float, .text, .blob, .null])
        #expect(ResultCode.busySnapshot.primary == .busy && ResultCode.busy.description == "5")
    }
}

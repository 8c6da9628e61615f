import ApexDumps
import ApexSQLite
import Foundation
import Testing

/// A keychain export in WAL mode whose WAL was checkpointed and removed: how SQLite leaves a WAL database once its
/// last connection closes. Its header's file format versions (bytes 18 and 19) say 2, and there is no `-wal` file.
@Suite("Keychain SQLite reader: a WAL-mode export without its -wal file")
struct KeychainSQLiteWALModeTests {
    /// The generated react-native-keychain export (rollback journal), as the samples hold it.
    private static func export() throws -> Data {
        try IOSFixtures.data("generated", "react-native-keychain/ios/keychain-export.sqlite")
    }

    /// Switches the database at `path` to WAL and closes it, as `PRAGMA journal_mode = WAL` then a clean close
    /// leaves it: the header says WAL and the `-wal` and `-shm` files are gone.
    private static func makeWALMode(_ path: String, _ sql: String = "") throws {
        do {
            let connection = try Connection(path: path, mode: [.readWrite, .create])
            try connection.execute(sql + "PRAGMA journal_mode = WAL;")
        }
        let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(20)
        try #require(header.count == 20 && header[18] == 2 && header[19] == 2, "the database is not in WAL mode")
        try #require(!FileManager.default.fileExists(atPath: path + "-wal"), "SQLite left a -wal file")
        try #require(!FileManager.default.fileExists(atPath: path + "-shm"), "SQLite left a -shm file")
    }

    @Test("read by path: the same items as the rollback-journal original, and the file is untouched")
    func byPath() throws {
        let folder = try DumpScratch()
        let original = try folder.write("original.sqlite", try Self.export())
        let wal = try folder.write("wal.sqlite", try Self.export())
        try Self.makeWALMode(wal)
        let before = try Data(contentsOf: URL(fileURLWithPath: wal))

        let expected = try KeychainSQLiteReader.read(path: original)
        let records = try KeychainSQLiteReader.read(path: wal)

        #expect(expected.count == 11)
        #expect(records == expected)
        #expect(try DumpReader.read(path: wal).format == .keychainSQLite)
        // The evidence is never modified: its header still says WAL, and no companion file was made.
        #expect(try Data(contentsOf: URL(fileURLWithPath: wal)) == before)
        #expect(!FileManager.default.fileExists(atPath: wal + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: wal + "-shm"))
    }

    @Test("read from bytes and from a stream (stdin): the same items as the rollback-journal original")
    func fromBytes() throws {
        let folder = try DumpScratch()
        let wal = try folder.write("wal.sqlite", try Self.export())
        try Self.makeWALMode(wal)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: wal))
        let expected = try KeychainSQLiteReader.read(try Self.export(), path: "original")

        #expect(try KeychainSQLiteReader.read(bytes, path: "(stdin)") == expected)
        // The caller's bytes are not changed either.
        #expect(bytes == (try Data(contentsOf: URL(fileURLWithPath: wal))))

        let descriptor = open(wal, O_RDONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let dump = try DumpReader.read(stream: descriptor, name: "(stdin)")
        guard case .keychain(let records) = dump.content else {
            Issue.record("not keychain records: \(dump.format)")
            return
        }
        #expect(dump.format == .keychainSQLite)
        #expect(records == expected)
    }

    @Test("a WAL-mode database without genp or inet is still not a dump, by path and from bytes")
    func walModeNotADump() throws {
        let folder = try DumpScratch()
        let path = folder.path + "/s.db"
        try Self.makeWALMode(path, "CREATE TABLE meta(name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;")
        let notADump = DumpError(
            .notADump, path: path, "not a keychain dump: a SQLite database without genp or inet table")
        #expect(throws: notADump) { try KeychainSQLiteReader.read(path: path) }
        #expect(throws: notADump) {
            try KeychainSQLiteReader.read(Data(contentsOf: URL(fileURLWithPath: path)), path: path)
        }
    }

    @Test("scan: a folder's WAL-mode database that is not a dump is skipped, and the exports beside it are read")
    func scanFolder() throws {
        let folder = try DumpScratch()
        // An app's own database (the shape of this project's store file), in WAL mode and closed.
        let store = folder.path + "/s.db"
        try Self.makeWALMode(
            store,
            """
            CREATE TABLE meta(name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
            CREATE TABLE items(id INTEGER PRIMARY KEY, service TEXT NOT NULL, account TEXT NOT NULL, value BLOB);
            INSERT INTO meta VALUES ('schema_version', X'01');
            """)
        let export = try folder.write("keychain-export.sqlite", try Self.export())
        let walExport = try folder.write("wal-export.sqlite", try Self.export())
        try Self.makeWALMode(walExport)
        let expected = try KeychainSQLiteReader.read(path: export)

        let scan = try DumpReader.scan(paths: [folder.path])

        #expect(scan.dumps.map(\.path) == [export, walExport])
        #expect(scan.dumps.map(\.format) == [.keychainSQLite, .keychainSQLite])
        for dump in scan.dumps {
            guard case .keychain(let records) = dump.content else {
                Issue.record("\(dump.path): not keychain records")
                continue
            }
            #expect(records == expected, "\(dump.path)")
        }
        #expect(
            scan.skipped == [
                DumpError(.notADump, path: store, "not a keychain dump: a SQLite database without genp or inet table")
            ])
        #expect(try DumpReader.readAll(paths: [folder.path]).map(\.path) == [export, walExport])
    }
}

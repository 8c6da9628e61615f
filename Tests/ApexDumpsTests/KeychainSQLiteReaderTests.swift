import ApexDumps
import ApexSQLite
import ApexTestSupport
import Foundation
import Testing

private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

private func readError(_ path: String) -> DumpError? {
    do {
        let records = try KeychainSQLiteReader.read(path: path)
        Issue.record("read \(records.count) records")
        return nil
    } catch {
        return error
    }
}

private func modificationDate(_ path: String) -> Date? {
    (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
}

/// Seconds since 2001-01-01 UTC for a UTC calendar date.
private func absoluteTime(
    _ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0
) -> Double {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let date = calendar.date(
        from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))!
    return date.timeIntervalSinceReferenceDate
}

/// A securityd `data` blob: version 3, key class 11, a 40-byte wrapped key, ciphertext and tag (random bytes).
private func encryptedBlob(version: UInt32 = 3) -> String {
    var bytes: [UInt8] = withUnsafeBytes(of: version.littleEndian) { Array($0) }
    bytes += withUnsafeBytes(of: UInt32(11).littleEndian) { Array($0) }
    bytes += withUnsafeBytes(of: UInt32(40).littleEndian) { Array($0) }
    bytes += (0..<(40 + 37 + 16)).map { _ in UInt8.random(in: 0...255) }
    return "X'" + hex(bytes) + "'"
}

private func sha1Like() -> String { "X'" + hex((0..<20).map { _ in UInt8.random(in: 0...255) }) + "'" }

/// The tables of a current device keychain-2.db (a subset of the columns, the types securityd declares).
private let deviceSchema = """
    CREATE TABLE genp(rowid INTEGER PRIMARY KEY AUTOINCREMENT,cdat REAL,mdat REAL,desc BLOB,icmt BLOB,crtr INTEGER,type INTEGER,labl BLOB,acct BLOB NOT NULL DEFAULT '',svce BLOB NOT NULL DEFAULT '',gena BLOB,data BLOB,agrp TEXT NOT NULL,pdmn TEXT,sync INTEGER NOT NULL DEFAULT 0,tomb INTEGER NOT NULL DEFAULT 0,sha1 BLOB,vwht TEXT,tkid TEXT,musr BLOB NOT NULL,UUID TEXT,persistref BLOB NOT NULL,UNIQUE(acct,svce,agrp,sync,vwht,tkid,musr));
    CREATE TABLE inet(rowid INTEGER PRIMARY KEY AUTOINCREMENT,cdat REAL,mdat REAL,acct BLOB NOT NULL DEFAULT '',sdmn BLOB NOT NULL DEFAULT '',srvr BLOB NOT NULL DEFAULT '',ptcl INTEGER NOT NULL DEFAULT 0,atyp BLOB NOT NULL DEFAULT '',port INTEGER NOT NULL DEFAULT 0,path BLOB NOT NULL DEFAULT '',data BLOB,agrp TEXT NOT NULL,pdmn TEXT,sync INTEGER NOT NULL DEFAULT 0,musr BLOB NOT NULL,persistref BLOB NOT NULL);
    CREATE TABLE metadatakeys(keyclass TEXT NOT NULL,actualKeyclass TEXT,data BLOB,UNIQUE(keyclass));
    """

private let tversion = """
    CREATE TABLE tversion(rowid INTEGER PRIMARY KEY AUTOINCREMENT,version INTEGER NOT NULL,minor INTEGER NOT NULL DEFAULT 0,UNIQUE(version));
    INSERT INTO tversion(version, minor) VALUES (12, 11);
    """

private func deviceRow() -> String {
    """
    INSERT INTO genp(cdat,mdat,crtr,labl,acct,svce,gena,data,agrp,pdmn,musr,persistref,sha1)
    VALUES (742000000.25, 742000001.5, 0, \(sha1Like()), \(sha1Like()), \(sha1Like()), \(sha1Like()), \(encryptedBlob()),
            'ABCDE12345.com.example.app', 'ak', '', X'00112233445566778899aabbccddeeff', \(sha1Like()));
    """
}

@Suite("Keychain SQLite reader")
struct KeychainSQLiteReaderTests {
    // MARK: A decrypted export

    /// An export with the keychain's column names and cleartext values; the last genp row only in the WAL.
    private static let exportSchema = """
        PRAGMA journal_mode = WAL;
        CREATE TABLE genp(rowid INTEGER PRIMARY KEY AUTOINCREMENT, cdat REAL, mdat, labl TEXT, crtr, acct BLOB, svce BLOB,
                          gena BLOB, v_Data BLOB, agrp TEXT, pdmn TEXT, sync INTEGER, accc BLOB, tomb INTEGER, musr BLOB,
                          type INTEGER, UUID TEXT);
        CREATE TABLE inet(acct, srvr, ptcl, port, path, atyp, sdmn, data, agrp, pdmn, cdat, mdat, sync, crtr);
        CREATE TABLE unrelated(x);
        """

    @Test(
        "export: TEXT and BLOB svce/acct, REAL and TEXT dates, crtr forms, accc decoded, genp and inet rows, WAL-only row, file untouched"
    )
    func decryptedExport() throws {
        let folder = try ScratchFolder("sqlite-dump")
        let path = folder.path("export.db")
        let writer = try RawDatabase(path: path, create: true)
        try writer.execute(Self.exportSchema)
        try writer.execute(
            """
            INSERT INTO genp(rowid, cdat, mdat, labl, crtr, acct, svce, gena, v_Data, agrp, pdmn, sync, accc, tomb, musr, type, UUID)
            VALUES (1, \(absoluteTime(2024, 5, 1, 10, 20, 30) + 0.5), '2024-05-02T11:22:33Z', 'Label', 1097889867,
                    'alice@example.com', 'com.example.login', X'7b2261223a317d', X'68756e74657232', 'ABCDE12345.com.example.app',
                    'ak', 0, X'310c300a0c0470726f740c02616b', 0, X'', NULL, 'F1E2D3C4');
            INSERT INTO genp(rowid, cdat, mdat, crtr, acct, svce, v_Data, agrp, pdmn, sync)
            VALUES (5, 742000000, '2024-06-01 08:00:00.250 +0200', 'ApxK', X'ff00fe', X'6d792d73657276696365', 'text value',
                    'group', 'cku', 1);
            INSERT INTO genp(rowid, acct, svce, v_Data, crtr, sync) VALUES (6, CAST(X'ff41' AS TEXT), 12345, NULL, -2, 'yes');
            INSERT INTO genp(rowid, acct, svce, v_Data, cdat, mdat) VALUES (7, 'n', 's', 1234, 'not a date', '');
            INSERT INTO inet(rowid, acct, srvr, ptcl, port, path, atyp, sdmn, data, agrp, pdmn, cdat, mdat, sync, crtr)
            VALUES (3, 'bob', 'api.example.com', 'htps', 443, '/login', 'form', 'Realm', X'0001', 'group', 'aku',
                    700000000, '2023-02-03', 0, '''ApxK''');
            PRAGMA wal_checkpoint(TRUNCATE);
            PRAGMA wal_autocheckpoint = 0;
            INSERT INTO genp(rowid, acct, svce, v_Data) VALUES (9, 'wal-only-account', 'wal-only-service', X'77616c');
            """)
        // The last row is in the WAL only; the writer stays open so that nothing checkpoints it.
        let mainBytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let walBytes = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        #expect(mainBytes.range(of: Data("wal-only-account".utf8)) == nil)
        #expect(walBytes.range(of: Data("wal-only-account".utf8)) != nil)
        let shmBytes = try Data(contentsOf: URL(fileURLWithPath: path + "-shm"))
        let dates = [path, path + "-wal", path + "-shm"].map(modificationDate)

        let records = try KeychainSQLiteReader.read(path: path)

        // The evidence is untouched: same bytes, same modification times.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == mainBytes)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-wal")) == walBytes)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-shm")) == shmBytes)
        #expect([path, path + "-wal", path + "-shm"].map(modificationDate) == dates)

        #expect(
            records.map(\.location) == [
                "genp row 1", "genp row 5", "genp row 6", "genp row 7", "genp row 9", "inet row 3",
            ])
        #expect(records.map(\.itemClass) == ["genp", "genp", "genp", "genp", "genp", "inet"])
        guard records.count == 6 else { return }

        let first = records[0]
        #expect(first.account == .string("alice@example.com"))
        #expect(first.service == .string("com.example.login"))
        #expect(first.generic == .data(Data("{\"a\":1}".utf8)))
        #expect(first.value == .data(Data("hunter2".utf8)))
        #expect(first.label == "Label")
        #expect(first.creator == 0x4170_784B)
        #expect(first.accessGroup == "ABCDE12345.com.example.app")
        #expect(first.protection == "ak")
        #expect(first.synchronizable == false)
        #expect(first.createdAt == Date(timeIntervalSinceReferenceDate: absoluteTime(2024, 5, 1, 10, 20, 30) + 0.5))
        #expect(first.modifiedAt == Date(timeIntervalSinceReferenceDate: absoluteTime(2024, 5, 2, 11, 22, 33)))
        #expect(first.extra == ["tomb": "0", "musr": "hex:", "UUID": "F1E2D3C4", "rowid": "1"])
        #expect(first.accessControl?.protection == "ak", "the DER accc {prot: ak} is decoded")
        #expect(first.accessControl?.flags == [])

        let second = records[1]
        #expect(second.account == .data(Data([0xFF, 0x00, 0xFE])))
        #expect(second.service == .data(Data("my-service".utf8)), "a BLOB stays bytes even when it is UTF-8")
        #expect(second.value == .data(Data("text value".utf8)))
        #expect(second.creator == 0x4170_784B)
        #expect(second.synchronizable)
        #expect(second.createdAt == Date(timeIntervalSinceReferenceDate: 742_000_000))
        #expect(second.modifiedAt == Date(timeIntervalSinceReferenceDate: absoluteTime(2024, 6, 1, 6, 0, 0) + 0.25))

        let third = records[2]
        #expect(third.account == .data(Data([0xFF, 0x41])), "TEXT that is not UTF-8 comes back as its bytes")
        #expect(third.service == .string("12345"))
        #expect(third.value == .absent)
        #expect(third.creator == 0xFFFF_FFFE)
        #expect(third.synchronizable)

        let fourth = records[3]
        if case .damaged = fourth.value {
        } else {
            Issue.record("a numeric value is not marked damaged: \(fourth.value)")
        }
        #expect(fourth.createdAt == nil)
        #expect(fourth.extra["cdat"] == "not a date")
        #expect(fourth.extra["mdat"] == "")

        #expect(records[4].account == .string("wal-only-account"))
        #expect(records[4].value == .data(Data("wal".utf8)))

        let inet = records[5]
        #expect(inet.account == .string("bob"))
        #expect(inet.server == "api.example.com")
        #expect(inet.protocolCode == "htps")
        #expect(inet.port == 443)
        #expect(inet.path == "/login")
        #expect(inet.authenticationType == "form")
        #expect(inet.securityDomain == "Realm")
        #expect(inet.value == .data(Data([0x00, 0x01])), "the value column is `data` when there is no v_Data")
        #expect(inet.createdAt == Date(timeIntervalSinceReferenceDate: 700_000_000))
        #expect(inet.modifiedAt == Date(timeIntervalSinceReferenceDate: absoluteTime(2023, 2, 3)))
        #expect(inet.creator == 0x4170_784B)
        #expect(inet.extra.isEmpty)

        // The writer still sees its WAL row: nothing was checkpointed or modified.
        withExtendedLifetime(writer) {}
    }

    @Test("v_Data wins over data; a WITHOUT ROWID table is numbered; a table alone (no inet) is enough")
    func valueColumnChoice() throws {
        let folder = try ScratchFolder("sqlite-dump")
        let path = folder.path("both.db")
        try RawDatabase.create(
            path,
            """
            CREATE TABLE genp(acct TEXT PRIMARY KEY, data BLOB, V_DATA BLOB, Svce TEXT) WITHOUT ROWID;
            INSERT INTO genp VALUES ('b', X'01', X'02', 'svc'), ('a', X'03', NULL, 'svc');
            """)
        let records = try KeychainSQLiteReader.read(path: path)
        #expect(records.map(\.location) == ["genp row 1", "genp row 2"])
        #expect(records.map(\.account) == [.string("a"), .string("b")])
        #expect(records.map(\.value) == [.absent, .data(Data([0x02]))])
        #expect(records.map { $0.extra["data"] } == ["hex:03", "hex:01"])
        #expect(records.map(\.service) == [.string("svc"), .string("svc")])
    }

    @Test("an export that kept securityd's tversion table but holds cleartext is read")
    func exportWithVersionTable() throws {
        let folder = try ScratchFolder("sqlite-dump")
        let path = folder.path("cleartext-with-tversion.db")
        try RawDatabase.create(
            path,
            deviceSchema + tversion
                + "INSERT INTO genp(acct, svce, data, agrp, musr, persistref) VALUES ('alice', 'svc', X'68756e74657232', 'g', '', X'01');"
        )
        let records = try KeychainSQLiteReader.read(path: path)
        #expect(records.count == 1)
        #expect(records.first?.value == .data(Data("hunter2".utf8)))
        #expect(records.first?.account == .string("alice"))
    }

    @Test("empty genp and inet tables read as no records")
    func emptyExport() throws {
        let folder = try ScratchFolder("sqlite-dump")
        let path = folder.path("empty.db")
        try RawDatabase.create(path, "CREATE TABLE genp(acct, svce, v_Data); CREATE TABLE inet(acct, srvr, v_Data);")
        #expect(try KeychainSQLiteReader.read(path: path).isEmpty)
    }

    @Test("concurrent reads of one file each read it whole")
    func concurrentReads() async throws {
        let folder = try ScratchFolder("sqlite-dump")
        let path = folder.path("shared.db")
        try Self.bigExport(path)
        let expected = try KeychainSQLiteReader.read(path: path)
        #expect(expected.count == 400)
        try await withThrowingTaskGroup(of: [KeychainRecord].self) { group in
            for _ in 0..<8 {
                group.addTask { try KeychainSQLiteReader.read(path: path) }
            }
            for try await records in group { #expect(records == expected) }
        }
    }

    // MARK: A device keychain

    struct DeviceCase: CustomStringConvertible, Sendable {
        var description: String
        var sql: String
    }

    static let deviceCases: [DeviceCase] = [
        DeviceCase(
            description: "hashed attributes, versioned data, tversion",
            sql: deviceSchema + tversion + deviceRow() + deviceRow()),
        DeviceCase(description: "hashed attributes and versioned data, no tversion", sql: deviceSchema + deviceRow()),
        DeviceCase(description: "empty device tables with tversion", sql: deviceSchema + tversion),
        DeviceCase(
            description: "old schema: plaintext attributes, version-0 data, tversion",
            sql: tversion
                + "CREATE TABLE genp(cdat REAL,mdat REAL,acct BLOB,svce BLOB,gena BLOB,data BLOB); INSERT INTO genp(acct, svce, data) VALUES ('TlalocNet', 'AirPort', \(encryptedBlob(version: 0)));"
        ),
        DeviceCase(
            description: "fixed-IV version (bit 31) on an inet row",
            sql: deviceSchema
                + "INSERT INTO inet(acct, srvr, data, agrp, musr, persistref) VALUES (\(sha1Like()), \(sha1Like()), \(encryptedBlob(version: 0x8000_0007)), 'g', '', X'01');"
        ),
    ]

    @Test("a device keychain-2.db is refused as unsupported, saying why", arguments: deviceCases)
    func deviceKeychain(_ device: DeviceCase) throws {
        let folder = try ScratchFolder("sqlite-dump")
        let path = folder.path("keychain-2.db")
        try RawDatabase.create(path, device.sql)
        let error = try #require(readError(path))
        #expect(error.kind == .unsupported)
        #expect(error.path == path)
        #expect(error.message.contains("encrypted device keychain"))
        #expect(error.message.contains("SHA-1"))
        #expect(error.message.contains("decrypted export"))
    }

    // MARK: Not a keychain, malformed, hostile

    struct BadFile: CustomStringConvertible, Sendable {
        var description: String
        var kind: DumpError.Kind
        var messageContains: String
        /// Writes the file at the path.
        var make: @Sendable (String) throws -> Void
    }

    static let badFiles: [BadFile] = [
        BadFile(description: "empty file", kind: .malformed, messageContains: "empty") { path in
            try Data().write(to: URL(fileURLWithPath: path))
        },
        BadFile(description: "wrong magic: XML", kind: .malformed, messageContains: "not a SQLite database") { path in
            try Data("<?xml version='1.0'?><map />".utf8).write(to: URL(fileURLWithPath: path))
        },
        BadFile(description: "wrong magic: random bytes", kind: .malformed, messageContains: "not a SQLite database") {
            path in
            try Data((0..<4096).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: path))
        },
        BadFile(description: "header only", kind: .malformed, messageContains: "SQLite") { path in
            try Data("SQLite format 3\0".utf8).write(to: URL(fileURLWithPath: path))
        },
        BadFile(
            description: "a SQLite database that is not a keychain", kind: .notADump,
            messageContains: "not a keychain dump: a SQLite database without genp or inet table"
        ) { path in
            try RawDatabase.create(
                path, "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('x');")
        },
        BadFile(description: "an empty SQLite database", kind: .notADump, messageContains: "not a keychain dump") {
            path in
            try RawDatabase.create(path, "PRAGMA user_version = 1;")
        },
        BadFile(description: "genp is a view (an endless recursive query)", kind: .malformed, messageContains: "view") {
            path in
            try RawDatabase.create(
                path,
                "CREATE VIEW genp AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x AS acct FROM c;"
            )
        },
        BadFile(description: "truncated database", kind: .malformed, messageContains: "damaged") { path in
            try bigExport(path)
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: path))
        },
        BadFile(description: "truncated to one page", kind: .malformed, messageContains: "") { path in
            try bigExport(path)
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            try data.prefix(4096).write(to: URL(fileURLWithPath: path))
        },
        BadFile(description: "damaged page size in the header", kind: .malformed, messageContains: "") { path in
            try bigExport(path)
            var data = try Data(contentsOf: URL(fileURLWithPath: path))
            data[16] = 0x12
            data[17] = 0x34
            try data.write(to: URL(fileURLWithPath: path))
        },
        BadFile(
            description: "huge length: a b-tree cell claiming a 2 GB payload", kind: .malformed,
            messageContains: "damaged"
        ) { path in
            try bigExport(path)
            var data = try Data(contentsOf: URL(fileURLWithPath: path))
            // Overwrite every page after the first with garbage that looks like leaf pages with huge cells.
            for page in stride(from: 4096, to: data.count, by: 4096) {
                data[page] = 0x0D
                for offset in stride(from: page + 8, to: min(page + 4096, data.count), by: 1) { data[offset] = 0xFF }
            }
            try data.write(to: URL(fileURLWithPath: path))
        },
        BadFile(description: "larger than the dump size limit (sparse)", kind: .malformed, messageContains: "limit") {
            path in
            try RawDatabase.create(path, "CREATE TABLE genp(acct, v_Data);")
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.truncate(atOffset: UInt64(DumpLimits.maxFileBytes) + 4096)
            try handle.close()
        },
        BadFile(
            description: "a -wal file whose commit claims 2^32 - 1 pages", kind: .malformed,
            messageContains: "larger than the 512 MiB limit"
        ) { path in
            try WALFixture.make(path)
            try WALFixture.rewrite(path + "-wal") { frames in frames[frames.count - 1].pageCount = 0xFFFF_FFFF }
        },
        BadFile(
            description: "a -wal file of another page size", kind: .malformed,
            messageContains: "-wal file's pages are 1024 bytes"
        ) { path in
            try WALFixture.make(path)
            var wal = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
            wal.replaceSubrange(8..<12, with: [0, 0, 4, 0])
            try WALFixture.resumHeader(&wal)
            try wal.write(to: URL(fileURLWithPath: path + "-wal"))
        },
        BadFile(
            description: "a -wal file of an unknown format version", kind: .malformed, messageContains: "format version"
        ) { path in
            try WALFixture.make(path)
            var wal = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
            wal.replaceSubrange(4..<8, with: [0, 0x2D, 0xE2, 0x19])
            try WALFixture.resumHeader(&wal)
            try wal.write(to: URL(fileURLWithPath: path + "-wal"))
        },
        BadFile(description: "missing file", kind: .unreadable, messageContains: "does not exist") { _ in },
        BadFile(description: "a directory", kind: .unreadable, messageContains: "not a regular file") { path in
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        },
        BadFile(description: "a FIFO (must not hang)", kind: .unreadable, messageContains: "not a regular file") {
            path in
            #expect(mkfifo(path, 0o600) == 0)
        },
    ]

    /// An export of a few hundred rows over several pages.
    private static func bigExport(_ path: String) throws {
        let database = try RawDatabase(path: path, create: true)
        try database.execute(
            "PRAGMA page_size = 4096; CREATE TABLE genp(acct TEXT, svce TEXT, v_Data BLOB, labl TEXT);")
        try database.execute("BEGIN;")
        for row in 0..<400 {
            try database.execute(
                "INSERT INTO genp VALUES ('account-\(row)', 'service', randomblob(64), 'label \(row)');")
        }
        try database.execute("COMMIT;")
    }

    @Test(
        "bad files: a DumpError naming the path, never a crash or a hang", .timeLimit(.minutes(5)), arguments: badFiles)
    func badFile(_ bad: BadFile) throws {
        let folder = try ScratchFolder("sqlite-dump")
        let path = folder.path("dump.db")
        try bad.make(path)
        let error = try #require(readError(path))
        #expect(error.kind == bad.kind, "\(error)")
        #expect(error.path == path)
        #expect(error.description.hasPrefix(path + ": "))
        if !bad.messageContains.isEmpty {
            #expect(error.message.contains(bad.messageContains), "\(error.message)")
        }
    }

    // MARK: The WAL, applied in memory

    struct WALCase: CustomStringConvertible, Sendable {
        var description: String
        /// The accounts read, in row order.
        var expected: [String]
        /// Changes the -wal file's bytes.
        var damage: @Sendable (inout Data) throws -> Void
    }

    static let base = ["base-1", "base-2"]
    static let firstOnly = base + ["first-1", "first-2"]
    static let both = base + ["second-updated", "first-2", "second-1"]

    static let walCases: [WALCase] = [
        WALCase(description: "intact: both transactions, the second updating a page of the first", expected: both) {
            _ in
        },
        WALCase(description: "the last frame cut short: the second transaction is left out", expected: firstOnly) {
            wal in
            wal.removeLast(100)
        },
        WALCase(
            description: "a byte of the last page damaged: its checksum fails, the second transaction is left out",
            expected: firstOnly
        ) { wal in
            wal[wal.count - 10] ^= 0x55
        },
        WALCase(description: "a salt of the first frame damaged: the log ends before it", expected: base) { wal in
            wal[32 + 8] ^= 0x01
        },
        WALCase(description: "the header's checksum damaged: the log is not read", expected: base) { wal in
            wal[24] ^= 0x01
        },
        WALCase(description: "checksums of big-endian words (magic 0x377f0683)", expected: both) { wal in
            try WALFixture.rewrite(&wal, bigEndian: true) { _ in }
        },
        WALCase(
            description: "the first transaction's commit mark removed: only what the second commits counts",
            expected: both
        ) { wal in
            try WALFixture.rewrite(&wal) { frames in
                if let commit = frames.firstIndex(where: { $0.pageCount != 0 }) { frames[commit].pageCount = 0 }
            }
        },
    ]

    @Test("the WAL's committed transactions are read as SQLite reads them, from memory", arguments: walCases)
    func walAppliedInMemory(_ walCase: WALCase) throws {
        let folder = try ScratchFolder("sqlite-dump")
        let path = folder.path("export.db")
        try WALFixture.make(path)
        var wal = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        try walCase.damage(&wal)
        try wal.write(to: URL(fileURLWithPath: path + "-wal"))
        let before = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()

        let accounts = try KeychainSQLiteReader.read(path: path).map { $0.account?.text ?? "?" }
        // Nothing was written beside the file (no copy, no -shm).
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted() == before)

        // SQLite itself, on a copy it may recover into.
        let oracle = folder.path("oracle.db")
        try FileManager.default.copyItem(atPath: path, toPath: oracle)
        try wal.write(to: URL(fileURLWithPath: oracle + "-wal"))
        #expect(accounts == walCase.expected)
        #expect(WALFixture.accounts(oracle) == walCase.expected)
        #expect(before == ["export.db", "export.db-wal"])
    }

    @Test("a WAL that shrinks the database (VACUUM) cuts the image to its committed size")
    func walShrinksTheDatabase() throws {
        let folder = try ScratchFolder("sqlite-dump")
        let path = folder.path("export.db")
        let writer = try RawDatabase(path: path, create: true)
        try writer.execute(
            """
            PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;
            CREATE TABLE genp(acct TEXT, v_Data BLOB); CREATE TABLE filler(x BLOB);
            INSERT INTO genp VALUES ('kept', X'01');
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) INSERT INTO filler SELECT randomblob(3000) FROM n;
            PRAGMA wal_checkpoint(TRUNCATE); PRAGMA wal_autocheckpoint = 0;
            DROP TABLE filler; VACUUM; INSERT INTO genp VALUES ('after vacuum', X'02');
            """)
        let mainSize = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(mainSize > 200 * 3000)
        let accounts = try KeychainSQLiteReader.read(path: path).map { $0.account?.text ?? "?" }
        #expect(accounts == ["kept", "after vacuum"])
        withExtendedLifetime(writer) {}
    }

    @Test("an unreadable -wal file is an error, not a silently older snapshot")
    func unreadableWAL() throws {
        let folder = try ScratchFolder("sqlite-dump")
        let path = folder.path("dump.db")
        try RawDatabase.create(path, "CREATE TABLE genp(acct, v_Data);")
        try FileManager.default.createDirectory(atPath: path + "-wal", withIntermediateDirectories: false)
        let error = try #require(readError(path))
        #expect(error.kind == .unreadable)
        #expect(error.message.contains("-wal"))
    }

    @Test("looksLike: the SQLite header, and nothing else")
    func detection() {
        #expect(KeychainSQLiteReader.looksLike(Data("SQLite format 3\0".utf8) + Data(repeating: 0, count: 84)))
        #expect(!KeychainSQLiteReader.looksLike(Data("SQLite format 3".utf8)))
        #expect(!KeychainSQLiteReader.looksLike(Data("<?xml version='1.0'?><map/>".utf8)))
        #expect(!KeychainSQLiteReader.looksLike(Data("bplist00".utf8)))
        #expect(!KeychainSQLiteReader.looksLike(Data()))
    }
}

/// An export in WAL mode whose WAL holds two committed transactions (the second updating a row of the first), made
/// by SQLite, and the means to rewrite its frames.
enum WALFixture {
    /// Writes `path` and `path-wal`; the main file holds two rows, the WAL two transactions.
    static func make(_ path: String) throws {
        let (main, wal) = try written(path)
        // The writer has closed (and checkpointed): the files as they were while it was open.
        try? FileManager.default.removeItem(atPath: path + "-shm")
        try main.write(to: URL(fileURLWithPath: path))
        try wal.write(to: URL(fileURLWithPath: path + "-wal"))
    }

    /// The main file and the WAL while the writer is open.
    private static func written(_ path: String) throws -> (Data, Data) {
        let writer = try RawDatabase(path: path, create: true)
        try writer.execute(
            """
            PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;
            CREATE TABLE genp(acct TEXT, svce TEXT, v_Data BLOB);
            INSERT INTO genp VALUES ('base-1', 's', X'01'), ('base-2', 's', X'02');
            PRAGMA wal_checkpoint(TRUNCATE); PRAGMA wal_autocheckpoint = 0;
            BEGIN; INSERT INTO genp VALUES ('first-1', 's', randomblob(3000)), ('first-2', 's', randomblob(3000)); COMMIT;
            BEGIN; UPDATE genp SET acct = 'second-updated' WHERE acct = 'first-1';
                   INSERT INTO genp VALUES ('second-1', 's', randomblob(5000)); COMMIT;
            """)
        let files = (
            try Data(contentsOf: URL(fileURLWithPath: path)), try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        )
        withExtendedLifetime(writer) {}
        return files
    }

    /// The accounts of `genp` in row order, as SQLite reads the database and its WAL.
    static func accounts(_ path: String) -> [String] {
        guard let database = try? Connection(path: path, mode: .readWrite) else { return ["open failed"] }
        guard let statement = try? database.prepare("SELECT acct FROM genp ORDER BY rowid") else {
            return ["prepare failed"]
        }
        var accounts: [String] = []
        while (try? statement.step()) == true { accounts.append(statement.string(0) ?? "") }
        return accounts
    }

    struct Frame {
        var page: UInt32
        var pageCount: UInt32
        var data: Data
    }

    static func word(_ data: Data, _ offset: Int) -> UInt32 {
        data[data.startIndex + offset..<data.startIndex + offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func bytes(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }

    static func checksum(_ data: [UInt8], bigEndian: Bool, _ sums: inout (UInt32, UInt32)) {
        for index in stride(from: 0, to: data.count, by: 8) {
            func word(_ at: Int) -> UInt32 {
                let b = data[at..<at + 4].map(UInt32.init)
                return bigEndian
                    ? b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0]
            }
            sums.0 = sums.0 &+ word(index) &+ sums.1
            sums.1 = sums.1 &+ word(index + 4) &+ sums.0
        }
    }

    /// Recomputes the header's checksum after its fields were changed.
    static func resumHeader(_ wal: inout Data) throws {
        var sums: (UInt32, UInt32) = (0, 0)
        checksum(Array(wal.prefix(24)), bigEndian: word(wal, 0) & 1 == 1, &sums)
        wal.replaceSubrange(24..<32, with: bytes(sums.0) + bytes(sums.1))
    }

    /// Rewrites the frames of a valid WAL through `edit`, with checksums of big- or little-endian words.
    static func rewrite(_ wal: inout Data, bigEndian: Bool = false, _ edit: (inout [Frame]) -> Void) throws {
        let pageSize = Int(word(wal, 8))
        var frames: [Frame] = []
        var offset = 32
        while offset + 24 + pageSize <= wal.count {
            frames.append(
                Frame(
                    page: word(wal, offset), pageCount: word(wal, offset + 4),
                    data: wal.subdata(in: offset + 24..<offset + 24 + pageSize)))
            offset += 24 + pageSize
        }
        edit(&frames)
        var header = Array(wal.prefix(24))
        header.replaceSubrange(0..<4, with: bytes(bigEndian ? 0x377F_0683 : 0x377F_0682))
        var sums: (UInt32, UInt32) = (0, 0)
        checksum(header, bigEndian: bigEndian, &sums)
        var out = header + bytes(sums.0) + bytes(sums.1)
        let salts = Array(header[16..<24])
        for frame in frames {
            let head = bytes(frame.page) + bytes(frame.pageCount)
            checksum(head, bigEndian: bigEndian, &sums)
            checksum(Array(frame.data), bigEndian: bigEndian, &sums)
            out += head + salts + bytes(sums.0) + bytes(sums.1) + Array(frame.data)
        }
        wal = Data(out)
    }

    static func rewrite(_ path: String, _ edit: (inout [Frame]) -> Void) throws {
        var wal = try Data(contentsOf: URL(fileURLWithPath: path))
        try rewrite(&wal, edit)
        try wal.write(to: URL(fileURLWithPath: path))
    }
}

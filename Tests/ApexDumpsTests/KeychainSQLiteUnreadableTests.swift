import ApexSQLite
import Foundation
import Testing

@testable import ApexDumps

/// A row whose `sync` or `accc` can't be read: that item's protection is unknown, the export reads (issue 28).
extension KeychainSQLiteReaderTests {
    @Test("a sync that is no boolean and an accc that does not decode make that row's protection unknown")
    func unreadableProtection() throws {
        let folder = try DumpScratch()
        let path = folder.path + "/export.db"
        let connection = try Connection(path: path, mode: [.readWrite, .create])
        try connection.execute(
            """
            CREATE TABLE genp(acct TEXT, svce TEXT, v_Data BLOB, pdmn TEXT, sync INTEGER, accc BLOB);
            INSERT INTO genp VALUES ('a', 'svc', X'01', 'ak', 0, NULL);
            INSERT INTO genp VALUES ('b', 'svc', X'01', 'ak', 'maybe', NULL);
            INSERT INTO genp VALUES ('c', 'svc', X'01', 'ak', 1, X'000102');
            """)
        let records = try KeychainSQLiteReader.read(path: path)
        #expect(
            records.map(\.unreadable) == [
                [:], ["sync": "sync is neither a number nor a boolean"],
                ["accc": "accc does not decode as an access control"],
            ])
        #expect(records[1].synchronizable == false && records[1].extra["sync"] != nil)
        #expect(records[2].accessControl == nil && records[2].extra["accc"] == "hex:000102")
        #expect(records.map { $0.unreadableProtection != nil } == [false, true, true])
        withExtendedLifetime(connection) {}
    }
}

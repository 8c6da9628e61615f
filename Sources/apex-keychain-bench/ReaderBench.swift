import ApexDumps
import ApexSQLite
import Foundation

/// `apex-keychain-bench readers`: the dump readers on generated dumps of 1k, 10k and 100k items, each beside a
/// floor measured in the same run: Foundation's plain plist decode of the same bytes, and a bare `SELECT` of
/// the same table through sqlite3.
enum ReaderBench {
    static func run(sizes: [Int]) throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "apex-reader-bench-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        print("reader           items     reader ms   floor ms   ratio   items/s (reader)   Foundation ms")
        for size in sizes {
            let plist = try makePlist(size)
            let reader = try time { _ = try IOSPlistReader.read(plist, path: "bench.plist").count }
            let floor = try time { try ReadFloors.scanXML(plist) }
            let foundation = try time { _ = try PropertyListSerialization.propertyList(from: plist, format: nil) }
            line("ios-plist (xml)", size, reader, floor, foundation)
            let binary = try PropertyListSerialization.data(
                fromPropertyList: try PropertyListSerialization.propertyList(from: plist, format: nil), format: .binary,
                options: 0)
            let binaryReader = try time { _ = try IOSPlistReader.read(binary, path: "bench.plist").count }
            let binaryFloor = try time { try ReadFloors.walkBinaryPlist(binary) }
            let binaryFoundation = try time {
                _ = try PropertyListSerialization.propertyList(from: binary, format: nil)
            }
            line("ios-plist (bin)", size, binaryReader, binaryFloor, binaryFoundation)
            // The binary parser alone (no item conversion), the fastest of nine runs: its cost is a small part of
            // the reader's, and the machine's noise would hide it in a median of three.
            let binaryParse = try fastest(of: 9) { try PlistParser.parseDiscardingTree(binary) }
            line("bplist parse", size, binaryParse, binaryFloor, nil)
            let database = folder.appendingPathComponent("export-\(size).sqlite").path
            try makeSQLite(database, size)
            let sqliteReader = try time { _ = try KeychainSQLiteReader.read(path: database).count }
            let sqliteFloor = try time { try ReadFloors.bareSelect(database, table: "genp") }
            line("keychain-sqlite", size, sqliteReader, sqliteFloor, nil)
        }
        print(
            "floors: libxml2's SAX parse counting every name, attribute and text byte (XML); a walk of the offset table"
        )
        print("touching every object's bytes once (binary); a bare SELECT of every column of genp (no copy).")
        print("bplist parse: the binary plist parser alone (PlistParser, no items built), the fastest of nine runs.")
        print("Foundation: PropertyListSerialization's decode of the same bytes, for comparison.")
        print("peak RSS (VmHWM): \(peakRSS())")
    }

    private static func line(_ name: String, _ size: Int, _ reader: Double, _ floor: Double, _ foundation: Double?) {
        print(
            pad(name, 16) + " " + pad(String(size), 7, right: false) + "  "
                + pad(format(reader * 1000, decimals: 1), 10, right: false)
                + " " + pad(format(floor * 1000, decimals: 1), 10, right: false) + "  "
                + pad(format(reader / floor, decimals: 2), 6, right: false) + "   "
                + pad(format(Double(size) / reader, decimals: 0), 18) + "   "
                + (foundation.map { format($0 * 1000, decimals: 1) } ?? "-"))
    }

    /// `apex-keychain-bench readers --bplist-only [--runs N]`: the binary plist parser alone, `runs` times per size,
    /// timed by the wall clock and by the thread's CPU clock (the parse runs on one thread, and on a loaded machine
    /// the CPU clock is the steadier one).
    static func runBinaryParse(sizes: [Int], runs: Int) throws {
        print("bplist parse     items   fastest wall ms   fastest CPU ms   median CPU ms   runs")
        for size in sizes {
            let binary = try PropertyListSerialization.data(
                fromPropertyList: try PropertyListSerialization.propertyList(from: try makePlist(size), format: nil),
                format: .binary, options: 0)
            try PlistParser.parseDiscardingTree(binary)
            var wall: [Double] = []
            var cpu: [Double] = []
            for _ in 0..<runs {
                let start = Clock.nanoseconds()
                let startCPU = Clock.threadCPUNanoseconds()
                try PlistParser.parseDiscardingTree(binary)
                cpu.append(Double(Clock.threadCPUNanoseconds() - startCPU) / 1e6)
                wall.append(Clock.seconds(since: start) * 1000)
            }
            print(
                pad("bplist parse", 16) + " " + pad(String(size), 7, right: false) + "  "
                    + pad(format(wall.min() ?? 0, decimals: 2), 16, right: false) + " "
                    + pad(format(cpu.min() ?? 0, decimals: 2), 16, right: false) + " "
                    + pad(format(median(cpu), decimals: 2), 15, right: false) + "   " + String(runs))
        }
    }

    /// The fastest of `runs` runs, in seconds.
    private static func fastest(of runs: Int, _ body: () throws -> Void) throws -> Double {
        var best = Double.infinity
        for _ in 0..<runs {
            let start = Clock.nanoseconds()
            try body()
            best = min(best, Clock.seconds(since: start))
        }
        return best
    }

    /// The median of three runs, in seconds.
    private static func time(_ body: () throws -> Void) throws -> Double {
        var samples: [Double] = []
        for _ in 0..<3 {
            let start = Clock.nanoseconds()
            try body()
            samples.append(Clock.seconds(since: start))
        }
        return median(samples)
    }

    private static func makePlist(_ count: Int) throws -> Data {
        var items: [[String: Any]] = []
        items.reserveCapacity(count)
        for index in 0..<count {
            items.append([
                "class": "genp", "svce": "com.example.app", "acct": "user\(index)@example.com",
                "v_Data": Data("sample-token-\(index)".utf8), "pdmn": "ck", "agrp": "ABCDE12345.com.example.app",
                "cdat": Date(timeIntervalSince1970: 1_700_000_000), "mdat": Date(timeIntervalSince1970: 1_700_000_000),
                "sync": 0,
            ])
        }
        return try PropertyListSerialization.data(fromPropertyList: items, format: .xml, options: 0)
    }

    /// A decrypted keychain export of `count` generic passwords, written through ApexSQLite: every result code is
    /// checked, and the statement binds from its own memory (no `SQLITE_TRANSIENT` here).
    private static func makeSQLite(_ path: String, _ count: Int) throws {
        let db = try Connection(path: path, mode: [.readWrite, .create])
        try db.execute(
            """
            CREATE TABLE genp(rowid INTEGER PRIMARY KEY, cdat REAL, mdat REAL, acct BLOB, svce BLOB, v_Data BLOB,
              agrp TEXT, pdmn TEXT, sync INTEGER);
            """)
        let insert = try db.prepare(
            "INSERT INTO genp(cdat, mdat, acct, svce, v_Data, agrp, pdmn, sync) VALUES (7e8, 7e8, ?, 'com.example.app', ?, 'ABCDE12345.com.example.app', 'ck', 0)"
        )
        try db.transaction {
            for index in 0..<count {
                insert.reset()
                try insert.bind(1, "user\(index)@example.com")
                try insert.bind(2, "sample-token-\(index)")
                try insert.run()
            }
        }
    }
}

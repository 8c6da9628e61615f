import ApexDumps
import ApexKeychain
import ApexKeychainStore
import ApexMigration
import ApexSQLite
import CLibXML2
import CSQLite
import CSodium
import ExpoSecureStoreImporter
import Foundation
import ReactNativeKeychainImporter
import SampleDumps

/// `apex-keychain-bench migration`: the end-to-end migration of generated dumps (`LargeSamples`) into a fresh
/// embedded store, broken into read, plan, apply and verify, each beside a floor measured in the same run, with
/// items per second and peak memory; then the dry run and the "already migrated" start-up check.
///
/// The floors are the stages' essential work done the most direct way:
/// - read: libxml2's SAX parse of an XML file counting every name, attribute and text byte (plist, prefs), a walk of a
///   binary plist's offset table touching every object's bytes once, or a bare `SELECT *` of an export's `genp`
///   table;
/// - plan: one `SELECT` of the target table's keys and a hash look-up of every target key;
/// - apply: per item, one durable transaction on a SQLite file of the store's schema and PRAGMAs (WAL,
///   synchronous=FULL) that looks the key up, seals the value (XChaCha20-Poly1305) and inserts the row — the
///   store-write floor;
/// - verify: per item, the row by key and one open of its value.
enum MigrationBench {
    /// One kind of dump.
    struct Scenario {
        let name: String
        let file: @Sendable (Int) -> String
        let importer: any Importer
        let profile: DeviceProfile
        let floor: ReadFloor
    }

    enum ReadFloor {
        case plist, sqlite, sharedPreferences
    }

    static let scenarios = [
        Scenario(
            name: "ios-plist expo", file: { "expo-ios-\($0).plist" }, importer: ExpoSecureStoreImporter(), profile: .ios,
            floor: .plist),
        Scenario(
            name: "ios-bplist expo", file: { "expo-ios-\($0)-binary.plist" }, importer: ExpoSecureStoreImporter(),
            profile: .ios, floor: .plist),
        Scenario(
            name: "ios-sqlite expo", file: { "expo-ios-\($0).sqlite" }, importer: ExpoSecureStoreImporter(),
            profile: .ios, floor: .sqlite),
        Scenario(
            name: "ios-plist rnk", file: { "rnk-ios-\($0).plist" }, importer: ReactNativeKeychainImporter(),
            profile: .ios, floor: .plist),
        Scenario(
            name: "android-xml rnk", file: { "rnk-android-\($0)" }, importer: ReactNativeKeychainImporter(),
            profile: .android, floor: .sharedPreferences),
    ]

    /// One stage's measurement.
    struct Stage {
        var seconds: Double
        var floorSeconds: Double
        var peakMiB: Double
    }

    static func run(sizes: [Int], only: String? = nil, dryRunOnly: Bool = false) async throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("apex-migration-bench-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        print("apex-keychain-bench migration: generated dumps into fresh stores (WAL, synchronous=FULL), one run each")
        print("")
        print(
            pad("source", 16, right: false) + pad("items", 8) + "  " + pad("stage", 7, right: false) + pad("ms", 10)
                + pad("floor ms", 10) + pad("ratio", 7) + pad("items/s", 10) + pad("peak MiB", 10))
        var verdicts: [String] = []
        for size in sizes {
            progress("generating \(size)-item dumps")
            let dumpFolder = folder.appendingPathComponent("dumps-\(size)")
            try SampleTree.write(try LargeSamples.files(size), to: dumpFolder.path)
            for scenario in scenarios where only == nil || scenario.name == only {
                let path = dumpFolder.appendingPathComponent(scenario.file(size)).path
                guard FileManager.default.fileExists(atPath: path) else {
                    progress("skipping \(scenario.name): not generated (this build has no AES-GCM)")
                    continue
                }
                progress("\(scenario.name) \(size)")
                verdicts += try await measure(scenario, size: size, path: path, folder: folder, dryRunOnly: dryRunOnly)
            }
            try? FileManager.default.removeItem(at: dumpFolder)
        }
        print("")
        for verdict in verdicts { print(verdict) }
        print("")
        print("whole = read + the run (plan, apply, verify, ledger, report), timed as one call; target: whole ≤ 2 × (read floor + store-write floor).")
        print("dry run = read + plan against the empty store; target for 100k items: well under a second.")
        print(" import: the importer's mapping alone, a part of plan (measured apart, before it).")
        print("start-up check = Migration.isComplete() after a completed run (one marker lookup); target < 1 ms.")
        print("peak MiB: the process's VmHWM during the stage (reset before it through /proc/self/clear_refs).")
    }

    private static func measure(
        _ scenario: Scenario, size: Int, path: String, folder: URL, dryRunOnly: Bool
    ) async throws -> [String] {
        let name = "\(scenario.name)-\(size)"
        // Read.
        resetPeak()
        var started = Clock.nanoseconds()
        let dumps = try DumpReader.readAll(paths: [path])
        let readSeconds = Clock.seconds(since: started)
        let readPeak = peakMiB()
        started = Clock.nanoseconds()
        try readFloor(scenario.floor, path: path)
        let read = Stage(seconds: readSeconds, floorSeconds: Clock.seconds(since: started), peakMiB: readPeak)

        // The target store.
        let storeURL = folder.appendingPathComponent("\(name).store")
        let keyFile = SQLiteKeychainDatabase.defaultKeyFile(for: storeURL)
        let database = try SQLiteKeychainDatabase.create(at: storeURL, key: .keyFile(keyFile), device: scenario.profile)
        let target = MigrationTarget(database: database, device: database.makeDevice(passcode: .none))
        let migration = Migration(importers: [scenario.importer], source: .dumps(dumps), target: target)

        // The importer's share of the plan: mapping every item, before any look-up in the target.
        started = Clock.nanoseconds()
        let imported = try scenario.importer.importItems(from: dumps, options: ImportOptions()).count
        let importSeconds = Clock.seconds(since: started)
        guard imported == size else { throw BenchError("\(name): the importer found \(imported) of \(size) items") }

        // Plan (the dry run).
        resetPeak()
        started = Clock.nanoseconds()
        let plan = try await migration.plan()
        let planSeconds = Clock.seconds(since: started)
        let planPeak = peakMiB()
        guard plan.count(.create) == size else {
            throw BenchError("\(name): the plan creates \(plan.count(.create)) of \(size) items")
        }
        let writes = plan.actions.compactMap { action -> FloorWrite? in
            guard let target = action.item.target else { return nil }
            let value: Data
            switch action.item.value {
            case .value(let data): value = data
            case .credentials(_, let password): value = Data(password.utf8)
            case .sealed: return nil
            }
            return FloorWrite(service: Array(target.service.utf8), account: Array(target.key.utf8), value: Array(value))
        }
        let floor = try WriteFloor(path: folder.appendingPathComponent("\(name).floor.sqlite").path)
        let planFloor = try floor.plan(writes)
        if dryRunOnly {
            // The report of the plan, in each format the CLI prints; then the CLI binary itself, end to end.
            var reportStages: [(String, Stage)] = []
            let report = MigrationReport(plan: plan, device: scenario.profile.rawValue, includeLabels: false)
            for (style, render) in [
                ("text", { report.textData() }), ("json", { report.json() }),
                ("md", { report.markdownData() }),
            ] as [(String, () -> Data)] {
                resetPeak()
                started = Clock.nanoseconds()
                let bytes = render().count
                let seconds = Clock.seconds(since: started)
                guard bytes > size else { throw BenchError("\(name): the \(style) report is \(bytes) bytes") }
                reportStages.append((" " + style, Stage(seconds: seconds, floorSeconds: 0, peakMiB: peakMiB())))
            }
            var cli: [String] = []
            for style in ["text", "json"] {
                if let seconds = try cliDryRun(path: path, format: style, profile: scenario.profile) {
                    cli.append("CLI --format \(style) \(format(seconds * 1000, decimals: 0)) ms")
                }
            }
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: storeURL.path + suffix)
                try? FileManager.default.removeItem(atPath: floor.path + suffix)
            }
            try? FileManager.default.removeItem(at: keyFile)
            printStages(
                scenario, size: size,
                [
                    ("read", read),
                    ("plan", Stage(seconds: planSeconds, floorSeconds: planFloor, peakMiB: planPeak)),
                    (" import", Stage(seconds: importSeconds, floorSeconds: 0, peakMiB: planPeak)),
                ] + reportStages)
            return [dryRunVerdict(name, read: read.seconds, plan: planSeconds) + (cli.isEmpty ? "" : "; " + cli.joined(separator: ", "))]
        }

        // Run: plan again, apply, verify.
        resetPeak()
        started = Clock.nanoseconds()
        let (report, timings) = try await migration.timedRun()
        let runSeconds = Clock.seconds(since: started)
        let runPeak = peakMiB()
        guard report.summary.verified == size else {
            throw BenchError("\(name): \(report.summary.verified) of \(size) items verified, \(report.summary.failed) failed")
        }
        let writeFloor = try floor.write(writes)
        let verifyFloor = try floor.verify(writes)

        // The start-up check, warm (same connection) and as a launch makes it (opening the store).
        var warm: [Double] = []
        for _ in 0..<200 {
            started = Clock.nanoseconds()
            guard try await migration.isComplete() else { throw BenchError("\(name): not complete after the run") }
            warm.append(Clock.seconds(since: started))
        }
        var cold: [Double] = []
        for _ in 0..<20 {
            started = Clock.nanoseconds()
            let reopened = try SQLiteKeychainDatabase(opening: storeURL, key: .keyFile(keyFile))
            let launch = Migration(
                importers: [scenario.importer], source: .dumps([]),
                target: MigrationTarget(database: reopened, device: reopened.makeDevice(passcode: .none)))
            guard try await launch.isComplete() else { throw BenchError("\(name): not complete when reopened") }
            cold.append(Clock.seconds(since: started))
        }
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: storeURL.path + suffix)
            try? FileManager.default.removeItem(atPath: floor.path + suffix)
        }
        try? FileManager.default.removeItem(at: keyFile)

        let stages: [(String, Stage)] = [
            ("read", read),
            ("plan", Stage(seconds: planSeconds, floorSeconds: planFloor, peakMiB: planPeak)),
            (" import", Stage(seconds: importSeconds, floorSeconds: 0, peakMiB: planPeak)),
            ("apply", Stage(seconds: timings.apply.seconds, floorSeconds: writeFloor, peakMiB: runPeak)),
            ("verify", Stage(seconds: timings.verify.seconds, floorSeconds: verifyFloor, peakMiB: runPeak)),
            ("ledger", Stage(seconds: timings.ledger.seconds, floorSeconds: 0, peakMiB: runPeak)),
        ]
        printStages(scenario, size: size, stages)
        let whole = read.seconds + runSeconds
        let bound = read.floorSeconds + writeFloor
        let dryRun = read.seconds + planSeconds
        return [
            "\(pad(name, 22, right: false)) whole \(format(whole * 1000, decimals: 0)) ms = "
                + "\(format(whole / bound, decimals: 2)) × (read floor + store-write floor) "
                + "\(whole <= 2 * bound ? "ok" : "SLOW"); dry run \(format(dryRun * 1000, decimals: 1)) ms "
                + "(plan \(format(planSeconds * 1000, decimals: 1)) ms); start-up check "
                + "\(format(median(warm) * 1e6, decimals: 1)) µs warm, \(format(median(cold) * 1e6, decimals: 0)) µs "
                + "opening the store \(median(cold) < 0.001 ? "ok" : "SLOW")"
        ]
    }

    private static func printStages(_ scenario: Scenario, size: Int, _ stages: [(String, Stage)]) {
        for (stage, m) in stages {
            print(
                pad(scenario.name, 16, right: false) + pad(String(size), 8) + "  " + pad(stage, 7, right: false)
                    + pad(format(m.seconds * 1000, decimals: 1), 10)
                    + pad(m.floorSeconds > 0 ? format(m.floorSeconds * 1000, decimals: 1) : "-", 10)
                    + pad(m.floorSeconds > 0 ? format(m.seconds / m.floorSeconds, decimals: 2) : "-", 7)
                    + pad(format(Double(size) / m.seconds, decimals: 0), 10) + pad(format(m.peakMiB, decimals: 1), 10))
        }
    }

    private static func dryRunVerdict(_ name: String, read: Double, plan: Double) -> String {
        "\(pad(name, 22, right: false)) dry run \(format((read + plan) * 1000, decimals: 1)) ms "
            + "(read \(format(read * 1000, decimals: 1)) ms, plan \(format(plan * 1000, decimals: 1)) ms)"
    }

    /// The built `apex-keychain` beside this executable, run as `migrate PATH --dry-run --format FORMAT` with its
    /// report sent to /dev/null: seconds from launch to exit, or nil when the binary is not there.
    private static func cliDryRun(path: String, format: String, profile: DeviceProfile) throws -> Double? {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("apex-keychain")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else { return nil }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["migrate", path, "--dry-run", "--format", format, "--device", profile.rawValue, "--quiet"]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        let started = Clock.nanoseconds()
        try process.run()
        process.waitUntilExit()
        let seconds = Clock.seconds(since: started)
        guard process.terminationStatus == 0 else {
            throw BenchError("apex-keychain migrate \(path) --dry-run exited with \(process.terminationStatus)")
        }
        return seconds
    }

    // MARK: Read floors

    private static func readFloor(_ floor: ReadFloor, path: String) throws {
        switch floor {
        case .plist:
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            if data.starts(with: Array("bplist00".utf8)) {
                try ReadFloors.walkBinaryPlist(data)
            } else {
                try ReadFloors.scanXML(data)
            }
        case .sqlite:
            try ReadFloors.bareSelect(path, table: "genp")
        case .sharedPreferences:
            let prefs = URL(fileURLWithPath: path).appendingPathComponent("shared_prefs")
            for file in ["RN_KEYCHAIN.xml", "crypto.KEY_256.xml"] {
                try ReadFloors.scanXML(try Data(contentsOf: prefs.appendingPathComponent(file)))
            }
        }
    }

    // MARK: Memory

    /// Resets the process's peak RSS to its current RSS (Linux: `5` to `/proc/self/clear_refs`).
    private static func resetPeak() {
        try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
    }

    /// `VmHWM` in MiB.
    private static func peakMiB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kib = Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") ?? 0
            return kib / 1024
        }
        return 0
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}

/// One item as the floors write it.
struct FloorWrite {
    let service: [UInt8]
    let account: [UInt8]
    let value: [UInt8]
}

/// The store-write floor: the store's schema and PRAGMAs on a plain SQLite file, driven through the raw C API
/// with statements prepared once.
final class WriteFloor {
    let path: String
    private let db: OpaquePointer
    private let begin: OpaquePointer, commit: OpaquePointer, find: OpaquePointer, insert: OpaquePointer
    private let keys: OpaquePointer, read: OpaquePointer
    private var key = [UInt8](repeating: 0, count: Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES))
    private static let group = Array("ABCDE12345.com.example.app".utf8)

    init(path: String) throws {
        self.path = path
        db = try FloorSide.createStore(path)
        begin = try FloorSide.prepare(db, "BEGIN IMMEDIATE")
        commit = try FloorSide.prepare(db, "COMMIT")
        find = try FloorSide.prepare(db, "SELECT id FROM items WHERE class = 'genp' AND svce = ? AND acct = ? AND agrp = ?")
        insert = try FloorSide.prepare(
            db,
            "INSERT INTO items(class, svce, acct, agrp, sync, crtr, gena, pdmn, accc, cdat, mdat, data) "
                + "VALUES ('genp', ?, ?, ?, 0, \(FloorSide.creator), ?, 'ak', 0, 0, 0, ?)")
        keys = try FloorSide.prepare(db, "SELECT svce, acct FROM items WHERE class = 'genp' AND agrp = ?")
        read = try FloorSide.prepare(
            db, "SELECT gena, pdmn, accc, data FROM items WHERE class = 'genp' AND svce = ? AND acct = ? AND agrp = ?")
        guard sodium_init() >= 0 else { throw BenchError("libsodium failed to initialise") }
        randombytes_buf(&key, key.count)
    }

    deinit {
        for statement in [begin, commit, find, insert, keys, read] { sqlite3_finalize(statement) }
        sqlite3_close(db)
    }

    /// The plan floor: the target's keys in one `SELECT`, then a hash look-up of every key to write.
    func plan(_ writes: [FloorWrite]) throws -> Double {
        let started = Clock.nanoseconds()
        var held = Set<[UInt8]>()
        bind(keys, 1, Self.group)
        while try step(keys) {
            held.insert(column(keys, 0) + [0] + column(keys, 1))
        }
        sqlite3_reset(keys)
        var absent = 0
        for write in writes where !held.contains(write.service + [0] + write.account) { absent += 1 }
        guard absent == writes.count else { throw BenchError("the floor store is not empty") }
        return Clock.seconds(since: started)
    }

    /// The store-write floor: one durable transaction per item (look up, seal, insert).
    func write(_ writes: [FloorWrite]) throws -> Double {
        let started = Clock.nanoseconds()
        for write in writes {
            try run(begin)
            bind(find, 1, write.service)
            bind(find, 2, write.account)
            bind(find, 3, Self.group)
            if try step(find) { throw BenchError("the floor item exists") }
            sqlite3_reset(find)
            let sealed = seal(write)
            bind(insert, 1, write.service)
            bind(insert, 2, write.account)
            bind(insert, 3, Self.group)
            bindBlob(insert, 4, FloorSide.metadata)
            bindBlob(insert, 5, sealed)
            try run(insert)
            try run(commit)
        }
        return Clock.seconds(since: started)
    }

    /// The verify floor: each row by key, its value opened once.
    func verify(_ writes: [FloorWrite]) throws -> Double {
        let started = Clock.nanoseconds()
        for write in writes {
            bind(read, 1, write.service)
            bind(read, 2, write.account)
            bind(read, 3, Self.group)
            guard try step(read) else { throw BenchError("the floor item is missing") }
            let sealed = column(read, 3)
            sqlite3_reset(read)
            guard open(sealed, write) == write.value else { throw BenchError("the floor item does not open") }
        }
        return Clock.seconds(since: started)
    }

    private func associatedData(_ write: FloorWrite) -> [UInt8] {
        Array("apxk-item-v1genp".utf8) + write.service + [0] + write.account + [0] + Self.group + Array("ak".utf8)
    }

    private func seal(_ write: FloorWrite) -> [UInt8] {
        let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
        var out = [UInt8](repeating: 0, count: nonceLength + write.value.count + Int(crypto_aead_xchacha20poly1305_ietf_ABYTES))
        let ad = associatedData(write)
        out.withUnsafeMutableBufferPointer { buffer in
            randombytes_buf(buffer.baseAddress!, nonceLength)
            var length: UInt64 = 0
            _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                buffer.baseAddress! + nonceLength, &length, write.value, UInt64(write.value.count), ad, UInt64(ad.count),
                nil, buffer.baseAddress!, key)
        }
        return out
    }

    private func open(_ sealed: [UInt8], _ write: FloorWrite) -> [UInt8] {
        let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
        let tag = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
        guard sealed.count >= nonceLength + tag else { return [] }
        var out = [UInt8](repeating: 0, count: sealed.count - nonceLength - tag)
        let ad = associatedData(write)
        var length: UInt64 = 0
        let status = sealed.withUnsafeBufferPointer { input in
            crypto_aead_xchacha20poly1305_ietf_decrypt(
                &out, &length, nil, input.baseAddress! + nonceLength, UInt64(sealed.count - nonceLength), ad,
                UInt64(ad.count), input.baseAddress!, key)
        }
        return status == 0 ? out : []
    }

    private func bind(_ statement: OpaquePointer, _ index: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress {
                _ = sqlite3_bind_text(statement, index, base.assumingMemoryBound(to: CChar.self), Int32(raw.count), transientDestructor)
            } else {
                _ = sqlite3_bind_text(statement, index, "", 0, transientDestructor)
            }
        }
    }

    private func bindBlob(_ statement: OpaquePointer, _ index: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            _ = sqlite3_bind_blob(statement, index, raw.baseAddress, Int32(raw.count), transientDestructor)
        }
    }

    private func column(_ statement: OpaquePointer, _ index: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, index))
        guard count > 0, let blob = sqlite3_column_blob(statement, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: blob, count: count))
    }

    private func step(_ statement: OpaquePointer) throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw BenchError("floor: \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    private func run(_ statement: OpaquePointer) throws {
        defer { sqlite3_reset(statement) }
        _ = try step(statement)
    }
}

/// `SQLITE_TRANSIENT`, from ApexSQLite (the floor calls the C API itself).
private let transientDestructor = sqliteTransient

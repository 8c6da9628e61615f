import ApexDumps
import ApexKeychain
import ApexKeychainStore
import ApexMigration
import ApexSQLite
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
/// - apply, verify and ledger: the bulk floor (``BulkFloor``): the same rows the run wrote, sealed under the same
///   associated data and inserted through raw sqlite3 in transactions of the run's batch size (one durable commit
///   per batch, WAL, synchronous=FULL), read back and opened, and the ledger's fingerprints and records.
enum MigrationBench {
    /// The id of the benchmark's migrations (each into a store of its own).
    static let migrationID = MigrationID("bench")!

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
            name: "ios-plist expo", file: { "expo-ios-\($0).plist" }, importer: ExpoSecureStoreImporter(),
            profile: .ios,
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
        /// The ratio to print, when it is not seconds / floorSeconds: the median of each round's ratio.
        var ratio: Double? = nil
    }

    /// A stage's time against its floor, round by round: each round's real run and its floor are measured one
    /// after the other, so their ratio is taken per round, and its median reported with its range. This VM's
    /// speed drifts from one second to the next (a round's three ratios move together, 1.0 to 1.95 × for the
    /// same build), which a ratio of medians taken over different rounds would carry into the figure.
    struct RoundRatios {
        let values: [Double]
        init(_ rounds: [Round], _ stage: (Round) -> Double, _ floor: (Round) -> Double) {
            values = rounds.map { stage($0) / floor($0) }
        }
        var middle: Double { median(values) }
        var range: String {
            "\(format(values.min() ?? 0, decimals: 2))–\(format(values.max() ?? 0, decimals: 2))"
        }
    }

    static func run(sizes: [Int], only: String? = nil, dryRunOnly: Bool = false, runs: Int = 5) async throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "apex-migration-bench-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        print(
            "apex-keychain-bench migration: generated dumps into fresh stores (WAL, synchronous=FULL); the real run and "
                + "its floor: medians of \(max(runs, 1)) rounds; a ratio to a floor is the median of the rounds' own "
                + "ratios, [their range]")
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
                verdicts += try await measure(
                    scenario, size: size, path: path, folder: folder, dryRunOnly: dryRunOnly, runs: runs)
            }
            try? FileManager.default.removeItem(at: dumpFolder)
        }
        print("")
        for verdict in verdicts { print(verdict) }
        print("")
        print(
            "whole = read + the run (plan, apply, verify, ledger, report), timed as one call; targets: ≤ 3 × the dry run"
        )
        print("  from 20k items, under 10 s at 100k.")
        print(
            "dry run = read + plan against the empty store + its report (as `migrate --dry-run` builds it), in the same"
        )
        print("  process just before the run.")
        print("CLI = the built apex-keychain, `migrate --store` into a new store, after its `--dry-run` there; its CPU")
        print("  time (user and system), and the steal: time the hypervisor ran other guests while this machine's")
        print("  cores wanted to run (/proc/stat). On a shared virtual machine steal is why one binary's wall-clock")
        print("  time moves from run to run; the wall-clock figures include it.")
        print("bulk floor = the rows the run wrote, sealed under the store's associated data and inserted through raw")
        print(
            "  sqlite3 in transactions of the run's batch size (\(MigrationPolicy.Batching.standard.items) items), read back and opened;"
        )
        print(
            "  its ledger part: one HMAC and one digest per item, each batch's record built, sealed and written twice.")
        print(" import: the importer's mapping alone, a part of plan (measured apart, before it).")
        print("start-up check = Migration.isComplete() after a completed run (one marker lookup); target < 1 ms.")
        print("peak MiB: the process's VmHWM during the stage (reset before it through /proc/self/clear_refs).")
    }

    private static func measure(
        _ scenario: Scenario, size: Int, path: String, folder: URL, dryRunOnly: Bool, runs: Int
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

        // The target store, new for each round of the real run, and the migration of the dumps into it.
        func newTarget(_ url: URL) throws -> (SQLiteKeychainDatabase, Migration) {
            let store = try SQLiteKeychainDatabase.create(
                at: url, key: .keyFile(SQLiteKeychainDatabase.defaultKeyFile(for: url)), device: scenario.profile)
            let target = MigrationTarget(database: store, device: store.makeDevice(passcode: .none))
            return (
                store,
                Migration(id: Self.migrationID, importers: [scenario.importer], source: .dumps(dumps), target: target)
            )
        }
        let storeURL = folder.appendingPathComponent("\(name).store")
        let (database, migration) = try newTarget(storeURL)

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
        // The dry run's report, as `migrate --dry-run` builds it (the run builds its own; neither is rendered here).
        started = Clock.nanoseconds()
        let planReport = MigrationReport(plan: plan, device: scenario.profile.rawValue, includeLabels: false)
        let reportSeconds = Clock.seconds(since: started)
        guard planReport.items.count == size else { throw BenchError("\(name): the dry run reports no items") }
        guard plan.count(.create) == size else {
            throw BenchError("\(name): the plan creates \(plan.count(.create)) of \(size) items")
        }
        let places = plan.actions.compactMap {
            $0.item.target.map { Array($0.service.utf8) + [0] + Array($0.key.utf8) }
        }
        let floor = try BulkFloor(path: folder.appendingPathComponent("\(name).floor.sqlite").path)
        let planFloor = try floor.plan(places)
        if dryRunOnly {
            // The report of the plan, in each format the CLI prints; then the CLI binary itself, end to end.
            var reportStages: [(String, Stage)] = []
            let report = planReport
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
            remove(store: storeURL, floor: floor.path)
            printStages(
                scenario, size: size,
                [
                    ("read", read),
                    ("plan", Stage(seconds: planSeconds, floorSeconds: planFloor, peakMiB: planPeak)),
                    (" import", Stage(seconds: importSeconds, floorSeconds: 0, peakMiB: planPeak)),
                ] + reportStages)
            return [
                dryRunVerdict(name, read: read.seconds, plan: planSeconds)
                    + (cli.isEmpty ? "" : "; " + cli.joined(separator: ", "))
            ]
        }

        // Run: plan again, apply, verify; then the bulk floor. The first round in the store made above, each other
        // in a store of its own; every figure below is the median of the rounds.
        var rounds: [Round] = []
        for index in 0..<max(runs, 1) {
            let round: Round
            if index == 0 {
                round = try await runRound(
                    name, size: size, importer: scenario.importer, migration: migration, database: database,
                    floor: floor, startUp: true)
            } else {
                let url = folder.appendingPathComponent("\(name)-\(index).store")
                let (store, again) = try newTarget(url)
                let floorAgain = try BulkFloor(
                    path: folder.appendingPathComponent("\(name)-\(index).floor.sqlite").path)
                round = try await runRound(
                    name, size: size, importer: scenario.importer, migration: again, database: store,
                    floor: floorAgain, startUp: false)
                remove(store: url, floor: floorAgain.path)
            }
            rounds.append(round)
        }
        remove(store: storeURL, floor: floor.path)
        let (warm, cold) = (rounds[0].warm, rounds[0].cold)
        let timings = (
            apply: median(rounds.map(\.apply)), verify: median(rounds.map(\.verify)),
            ledger: median(rounds.map(\.ledger))
        )
        let bulk = (
            apply: median(rounds.map(\.bulk.apply)), verify: median(rounds.map(\.bulk.verify)),
            ledger: median(rounds.map(\.bulk.ledger))
        )
        let floorSeconds = bulk.apply + bulk.verify + bulk.ledger
        let runSeconds = median(rounds.map(\.seconds))
        let (runCPU, floorCPU) = (median(rounds.map(\.cpu)), median(rounds.map(\.floorCPU)))
        let runPeak = rounds.map(\.peakMiB).max() ?? 0
        let ratios = (
            apply: RoundRatios(rounds, \.apply, \.bulk.apply), verify: RoundRatios(rounds, \.verify, \.bulk.verify),
            ledger: RoundRatios(rounds, \.ledger, \.bulk.ledger), cpu: RoundRatios(rounds, \.cpu, \.floorCPU)
        )

        let stages: [(String, Stage)] = [
            ("read", read),
            ("plan", Stage(seconds: planSeconds, floorSeconds: planFloor, peakMiB: planPeak)),
            (" import", Stage(seconds: importSeconds, floorSeconds: 0, peakMiB: planPeak)),
            (
                "apply",
                Stage(seconds: timings.apply, floorSeconds: bulk.apply, peakMiB: runPeak, ratio: ratios.apply.middle)
            ),
            (
                "verify",
                Stage(seconds: timings.verify, floorSeconds: bulk.verify, peakMiB: runPeak, ratio: ratios.verify.middle)
            ),
            (
                "ledger",
                Stage(seconds: timings.ledger, floorSeconds: bulk.ledger, peakMiB: runPeak, ratio: ratios.ledger.middle)
            ),
        ]
        printStages(scenario, size: size, stages)
        let whole = read.seconds + runSeconds
        let bound = read.floorSeconds + planFloor + floorSeconds
        let dryRun = read.seconds + planSeconds + reportSeconds
        let cli = size >= 1000 ? try cliPair(path: path, profile: scenario.profile, folder: folder) : nil
        func verdict(_ ok: Bool, when applies: Bool = true) -> String { applies ? (ok ? " ok" : " SLOW") : "" }
        func ratio(_ ratios: RoundRatios, target: Double) -> String {
            "\(format(ratios.middle, decimals: 2)) × [\(ratios.range)] (≤ \(format(target, decimals: 1)))"
                + verdict(ratios.middle <= target)
        }
        return [
            "\(pad(name, 22, right: false)) whole \(format(whole * 1000, decimals: 0)) ms"
                + "\(verdict(whole < 10, when: size >= 100_000)) = \(format(whole / dryRun, decimals: 2)) × the dry run "
                + "(\(format(dryRun * 1000, decimals: 1)) ms; ≤ 3)\(verdict(whole <= 3 * dryRun, when: size >= 20_000))"
                + " = \(format(whole / bound, decimals: 2)) × (read, plan and bulk floors)",
            "\(pad("", 22)) against the bulk floor: apply \(ratio(ratios.apply, target: 1.5)); verify "
                + "\(ratio(ratios.verify, target: 2)); ledger \(ratio(ratios.ledger, target: 2))",
            "\(pad("", 22)) CPU time: the run \(format(runCPU * 1000, decimals: 0)) ms "
                + "(\(format(runCPU / Double(size) * 1e6, decimals: 1)) µs an item, plan included), the bulk floor "
                + "\(format(floorCPU * 1000, decimals: 0)) ms (\(format(ratios.cpu.middle, decimals: 2)) × [\(ratios.cpu.range)])",
            cli.map {
                "\(pad("", 22)) CLI (median of \($0.rounds)): migrate \(format($0.run * 1000, decimals: 0)) ms = "
                    + "\(format($0.run / $0.dryRun, decimals: 2)) × migrate --dry-run "
                    + "(\(format($0.dryRun * 1000, decimals: 0)) ms; ≤ 3)\(verdict($0.run <= 3 * $0.dryRun, when: size >= 20_000))"
                    + "\n\(pad("", 22)) the real run's CPU time \(format($0.cpu * 1000, decimals: 0)) ms"
                    + stolenNote($0.stolen)
            } ?? "\(pad("", 22)) CLI: not measured (no apex-keychain beside this binary)",
            "\(pad("", 22)) start-up check \(format(median(warm) * 1e6, decimals: 1)) µs warm, "
                + "\(format(median(cold) * 1e6, decimals: 0)) µs opening the store\(verdict(median(cold) < 0.001))",
        ]
    }

    /// `; the host took N ms from this machine's cores meanwhile (steal)`, when the steal during a run is known.
    private static func stolenNote(_ stolen: Double?) -> String {
        guard let stolen else { return "" }
        return "; the host took \(format(stolen * 1000, decimals: 0)) ms from this machine's cores meanwhile (steal)"
    }

    /// One round of the real run and its bulk floor.
    struct Round {
        var seconds: Double
        /// The process's CPU time during the run, and during the bulk floor.
        var cpu: Double, floorCPU: Double
        var peakMiB: Double
        var apply: Double, verify: Double, ledger: Double
        var bulk: (apply: Double, verify: Double, ledger: Double)
        /// The start-up check (first round only).
        var warm: [Double] = [], cold: [Double] = []
    }

    /// The real run of `migration` into `database` (new and empty), then the bulk floor writing the same rows into
    /// `floor`; with `startUp`, the start-up check after it.
    private static func runRound(
        _ name: String, size: Int, importer: any Importer, migration: Migration, database: SQLiteKeychainDatabase,
        floor: BulkFloor, startUp: Bool
    ) async throws -> Round {
        resetPeak()
        var started = Clock.nanoseconds()
        var cpuStarted = Clock.processCPUNanoseconds()
        let (report, timings) = try await migration.timedRun()
        let runSeconds = Clock.seconds(since: started)
        let cpu = Double(Clock.processCPUNanoseconds() - cpuStarted) / 1e9
        let runPeak = peakMiB()
        guard report.summary.verified == size else {
            throw BenchError(
                "\(name): \(report.summary.verified) of \(size) items verified, \(report.summary.failed) failed")
        }
        // The bulk floor writes again the very rows the run wrote, in batches of the run's size.
        let written = try database.attributes(matching: ItemQuery(itemClass: .genericPassword))
            .filter { $0.service != BulkFloor.service }
            .sorted { ($0.service, $0.account) < ($1.service, $1.account) }
        let rows = try written.map { FloorRow($0, value: try database.value(for: $0.primaryKey)) }
        try floor.checkAssociatedData(rows, against: written)
        cpuStarted = Clock.processCPUNanoseconds()
        let bulk = try floor.run(rows, batch: MigrationPolicy.Batching.standard.items)
        let floorCPU = Double(Clock.processCPUNanoseconds() - cpuStarted) / 1e9
        var round = Round(
            seconds: runSeconds, cpu: cpu, floorCPU: floorCPU, peakMiB: runPeak, apply: timings.apply,
            verify: timings.verify,
            ledger: timings.ledger, bulk: bulk)
        guard startUp else { return round }
        // The start-up check, warm (same connection) and as a launch makes it (opening the store).
        for _ in 0..<200 {
            started = Clock.nanoseconds()
            guard try await migration.isComplete() else { throw BenchError("\(name): not complete after the run") }
            round.warm.append(Clock.seconds(since: started))
        }
        for _ in 0..<20 {
            started = Clock.nanoseconds()
            let reopened = try SQLiteKeychainDatabase(
                opening: database.url, key: .keyFile(SQLiteKeychainDatabase.defaultKeyFile(for: database.url)))
            let launch = Migration(
                id: Self.migrationID, importers: [importer], source: .dumps([]),
                target: MigrationTarget(database: reopened, device: reopened.makeDevice(passcode: .none)))
            guard try await launch.isComplete() else { throw BenchError("\(name): not complete when reopened") }
            round.cold.append(Clock.seconds(since: started))
        }
        return round
    }

    /// Removes a store (its WAL, shared memory and key file) and a floor's file.
    private static func remove(store: URL, floor: String) {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: store.path + suffix)
            try? FileManager.default.removeItem(atPath: floor + suffix)
        }
        try? FileManager.default.removeItem(at: SQLiteKeychainDatabase.defaultKeyFile(for: store))
    }

    private static func printStages(_ scenario: Scenario, size: Int, _ stages: [(String, Stage)]) {
        for (stage, m) in stages {
            print(
                pad(scenario.name, 16, right: false) + pad(String(size), 8) + "  " + pad(stage, 7, right: false)
                    + pad(format(m.seconds * 1000, decimals: 1), 10)
                    + pad(m.floorSeconds > 0 ? format(m.floorSeconds * 1000, decimals: 1) : "-", 10)
                    + pad(m.floorSeconds > 0 ? format(m.ratio ?? m.seconds / m.floorSeconds, decimals: 2) : "-", 7)
                    + pad(format(Double(size) / m.seconds, decimals: 0), 10) + pad(format(m.peakMiB, decimals: 1), 10))
        }
    }

    private static func dryRunVerdict(_ name: String, read: Double, plan: Double) -> String {
        "\(pad(name, 22, right: false)) dry run \(format((read + plan) * 1000, decimals: 1)) ms "
            + "(read \(format(read * 1000, decimals: 1)) ms, plan \(format(plan * 1000, decimals: 1)) ms)"
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
            let kib =
                Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") ?? 0
            return kib / 1024
        }
        return 0
    }
}

// apex-keychain-bench: times the public Keychain API on the embedded SQLite store against a raw
// sqlite3 + libsodium floor doing the same SQL and crypto. See --help.
import Foundation

/// The whole run, off the main actor: the Keychain calls are nonisolated, so none of them hops executors.
enum Bench {
    static func run(_ config: Config) async throws {
        let fm = FileManager.default
        let directory: URL
        if let path = config.directory {
            directory = URL(fileURLWithPath: path)
            try fm.createDirectory(at: directory, withIntermediateDirectories: true)
            for name in ["api.store", "api.store.key", "floor.sqlite"]
            where fm.fileExists(atPath: directory.appendingPathComponent(name).path) {
                throw BenchError("\(directory.appendingPathComponent(name).path) exists; use an empty --dir")
            }
        } else {
            let base = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("apex-keychain-bench.XXXXXX")
            var template = Array(base.path.utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                throw BenchError("can't create a temporary directory")
            }
            directory = URL(fileURLWithPath: String(cString: made))
        }
        defer {
            if !config.keep {
                for name in ["api.store", "api.store.key", "floor.sqlite"] {
                    for suffix in ["", "-wal", "-shm"] {
                        try? fm.removeItem(at: directory.appendingPathComponent(name + suffix))
                    }
                }
                if config.directory == nil { try? fm.removeItem(at: directory) }
            }
        }

        print(Report.header(config, directory: directory))
        let started = Clock.nanoseconds()
        let (rows, diagnostics): ([Measurement], [Diagnostics])
        do {
            var runner = try Runner(config: config, directory: directory)
            (rows, diagnostics) = try await runner.run()
            if runner.api.sink == 42 && runner.floor.sink == 42 { print("") }  // keeps results observable
        }
        print("")
        print(Report.table(rows))
        print("")
        print(Report.flatness(rows, sizes: config.sizes))
        print("")
        print(Report.diagnostics(diagnostics, rows: rows))
        print("")
        print(Report.rounds(rows))
        print("")
        print("peak RSS (VmHWM): \(peakRSS())")
        print("total time: \(format(Clock.seconds(since: started), decimals: 1)) s")
    }
}

if CommandLine.arguments.dropFirst().first == "readers" {
    let quick = CommandLine.arguments.contains("--quick")
    let sizes = quick ? [1000, 10000] : [1000, 10000, 100_000]
    do {
        if CommandLine.arguments.contains("--bplist-only") {
            let runs = CommandLine.arguments.firstIndex(of: "--runs").flatMap {
                $0 + 1 < CommandLine.arguments.count ? Int(CommandLine.arguments[$0 + 1]) : nil
            }
            try ReaderBench.runBinaryParse(sizes: sizes, runs: max(runs ?? 31, 1))
        } else {
            try ReaderBench.run(sizes: sizes)
        }
    } catch {
        FileHandle.standardError.write(Data("apex-keychain-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}

if CommandLine.arguments.dropFirst().first == "planning" {
    let quick = CommandLine.arguments.contains("--quick")
    do {
        try await PlanningBench.run(sizes: quick ? [10000] : [10000, 100_000], runs: quick ? 1 : 3)
    } catch {
        FileHandle.standardError.write(Data("apex-keychain-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}

if CommandLine.arguments.dropFirst().first == "backup" {
    switch BackupBench.parse(Array(CommandLine.arguments.dropFirst(2))) {
    case .failure(let error):
        FileHandle.standardError.write(Data("apex-keychain-bench: \(error)\n\(BackupBench.usage)".utf8))
        exit(2)
    case .success(let options):
        do {
            try BackupBench.run(options)
        } catch {
            FileHandle.standardError.write(Data("apex-keychain-bench: \(error)\n".utf8))
            exit(1)
        }
    }
    exit(0)
}

if CommandLine.arguments.dropFirst().first == "migration" {
    var arguments = Array(CommandLine.arguments.dropFirst(2))
    var sizes = [1000, 20000, 100_000]
    var only: String?
    var dryRunOnly = false
    var runs = 5
    let usage =
        "usage: apex-keychain-bench migration [--quick | --sizes N,N,...] [--only SOURCE] [--dry-run] [--runs N]\n"
    while let argument = arguments.first {
        arguments.removeFirst()
        switch argument {
        case "--quick":
            sizes = [1000, 20000]
        case "--dry-run":
            dryRunOnly = true
        case "--runs":
            guard let count = arguments.first.flatMap({ Int($0) }), count > 0 else {
                FileHandle.standardError.write(Data(("apex-keychain-bench: --runs needs a count\n" + usage).utf8))
                exit(2)
            }
            runs = count
            arguments.removeFirst()
        case "--sizes":
            let parsed = (arguments.first ?? "").split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
            guard !parsed.isEmpty else {
                FileHandle.standardError.write(Data(("apex-keychain-bench: --sizes needs N,N,...\n" + usage).utf8))
                exit(2)
            }
            sizes = parsed
            arguments.removeFirst()
        case "--only":
            guard let name = arguments.first, MigrationBench.scenarios.contains(where: { $0.name == name }) else {
                let names = MigrationBench.scenarios.map { "'\($0.name)'" }.joined(separator: ", ")
                FileHandle.standardError.write(Data("apex-keychain-bench: --only takes one of \(names)\n".utf8))
                exit(2)
            }
            only = name
            arguments.removeFirst()
        default:
            FileHandle.standardError.write(Data(usage.utf8))
            exit(2)
        }
    }
    do {
        try await MigrationBench.run(sizes: sizes, only: only, dryRunOnly: dryRunOnly, runs: runs)
    } catch {
        FileHandle.standardError.write(Data("apex-keychain-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}

switch Config.parse(Array(CommandLine.arguments.dropFirst())) {
case .help:
    print(Config.help)
case .failure(let message):
    FileHandle.standardError.write(Data("apex-keychain-bench: \(message)\n".utf8))
    exit(2)
case .run(let config):
    do {
        try await Bench.run(config)
    } catch {
        FileHandle.standardError.write(Data("apex-keychain-bench: \(error)\n".utf8))
        exit(1)
    }
}
exit(0)

import ApexKeychainStore
import Foundation

// The migration benchmark's runs of the built command-line tool (the user's view of the same migration), beside
// its rounds in process (MigrationBench.swift).
extension MigrationBench {
    /// The built `apex-keychain` beside this executable, or nil when it is not there.
    private static var cliBinary: URL? {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("apex-keychain")
        return FileManager.default.isExecutableFile(atPath: binary.path) ? binary : nil
    }

    /// Runs the built `apex-keychain` with `arguments`, its output sent to /dev/null: seconds from launch to exit.
    private static func runCLI(_ binary: URL, _ arguments: [String]) throws -> Double {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        let started = Clock.nanoseconds()
        try process.run()
        process.waitUntilExit()
        let seconds = Clock.seconds(since: started)
        guard process.terminationStatus == 0 else {
            throw BenchError(
                "apex-keychain \(arguments.prefix(3).joined(separator: " ")) exited with \(process.terminationStatus)")
        }
        return seconds
    }

    /// `migrate PATH --dry-run --format FORMAT` (no store): seconds from launch to exit, or nil without the binary.
    static func cliDryRun(path: String, format: String, profile: DeviceProfile) throws -> Double? {
        guard let binary = cliBinary else { return nil }
        return try runCLI(
            binary, ["migrate", path, "--dry-run", "--format", format, "--device", profile.rawValue, "--quiet"])
    }

    /// The user's view of the target: `migrate PATH --store S --dry-run --format json` and then the real
    /// `migrate PATH --store S --format json`, each into a store just made with `store init`, three rounds;
    /// the medians; with the real run's CPU time (user and system) and the time the host took from the machine's
    /// cores during it (nil where unknown). Nil without the binary.
    static func cliPair(
        path: String, profile: DeviceProfile, folder: URL
    ) throws -> (run: Double, dryRun: Double, cpu: Double, stolen: Double?, rounds: Int)? {
        guard let binary = cliBinary else { return nil }
        var (runs, dryRuns, cpu, stolen): ([Double], [Double], [Double], [Double]) = ([], [], [], [])
        let rounds = 3
        for round in 0..<rounds {
            let store = folder.appendingPathComponent("cli-\(round).store").path
            _ = try runCLI(binary, ["store", "init", "--store", store, "--device", profile.rawValue])
            let migrate = ["migrate", path, "--store", store, "--format", "json", "--quiet"]
            dryRuns.append(try runCLI(binary, migrate + ["--dry-run"]))
            let (cpuBefore, stolenBefore) = (Clock.childrenCPUSeconds(), Clock.stolenSeconds())
            runs.append(try runCLI(binary, migrate))
            cpu.append(Clock.childrenCPUSeconds() - cpuBefore)
            if let stolenBefore, let stolenAfter = Clock.stolenSeconds() { stolen.append(stolenAfter - stolenBefore) }
            for suffix in ["", "-wal", "-shm", ".key"] { try? FileManager.default.removeItem(atPath: store + suffix) }
        }
        return (median(runs), median(dryRuns), median(cpu), stolen.count == rounds ? median(stolen) : nil, rounds)
    }
}

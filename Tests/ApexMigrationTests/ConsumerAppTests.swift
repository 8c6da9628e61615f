import Foundation
import Testing

/// `samples/ConsumerApp`, a package of its own that depends on this one by path and on its library products by
/// name: built with `swift build` as another package would build it, then run. It proves the products an app
/// needs are exported, and that the start-up migration works from outside the package.
///
/// The build recompiles the package's libraries into `.build/consumer-app` (minutes the first time on a small
/// machine, seconds once it is there), offline: the consumer has no other dependency.
@Suite("Consumer app")
struct ConsumerAppTests {
    /// The package's root, from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The consumer's build folder: inside the root's `.build`, the same on every run so that later builds are
    /// incremental, and never committed.
    static let scratch = root.appendingPathComponent(".build/consumer-app")

    /// The `swift` driver: the one of the toolchain the tests run on (the folder of the Swift runtime this process
    /// loaded), then PATH's, then the usual install folders.
    static func swiftExecutable() -> URL? {
        var candidates: [URL] = []
        if let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8),
            let line = maps.split(separator: "\n").first(where: { $0.hasSuffix("/libswiftCore.so") }),
            let start = line.firstIndex(of: "/")
        {
            // <toolchain>/usr/lib/swift/linux/libswiftCore.so → <toolchain>/usr/bin/swift
            let library = URL(fileURLWithPath: String(line[start...])).resolvingSymlinksInPath()
            let usr = library.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            candidates.append(usr.appendingPathComponent("bin/swift"))
        }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            candidates.append(URL(fileURLWithPath: String(folder)).appendingPathComponent("swift"))
        }
        candidates.append(URL(fileURLWithPath: "/opt/swift/usr/bin/swift"))
        candidates.append(URL(fileURLWithPath: "/usr/bin/swift"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// What a finished child process gave.
    struct Finished {
        var status: Int32
        var output: String
    }

    /// Runs `executable` with stdout and stderr into `log`, killing it after `limit`.
    static func run(
        _ executable: URL, _ arguments: [String], log: URL, limit: Duration, environment: [String: String]? = nil
    ) async throws -> Finished {
        try Data().write(to: log)
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = root
        if let environment { process.environment = environment }
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + limit
        while process.isRunning {
            if ContinuousClock.now > deadline || Task.isCancelled {
                process.terminate()
                process.waitUntilExit()
                Issue.record(
                    "\(executable.lastPathComponent) \(arguments.joined(separator: " ")) took longer than \(limit): killed"
                )
                break
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
        process.waitUntilExit()
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return Finished(status: process.terminationStatus, output: output)
    }

    /// The last lines of a log, for a failure's message.
    static func tail(_ text: String, lines: Int = 40) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    @Test(
        "the consumer builds against the products and migrates: exit 0, then already migrated", .timeLimit(.minutes(30))
    )
    func buildsAndMigrates() async throws {
        let swift = try #require(
            Self.swiftExecutable(), "no swift executable: not beside the runtime, on PATH or in /opt/swift")
        try FileManager.default.createDirectory(at: Self.scratch, withIntermediateDirectories: true)
        // SwiftPM keeps the file list of a path dependency from the last build: a source file added to this
        // package since would be missing. Its description is dropped so that it is read anew (objects are kept).
        if let found = FileManager.default.enumerator(at: Self.scratch, includingPropertiesForKeys: nil) {
            for case let file as URL in found where file.lastPathComponent == "description.json" {
                try? FileManager.default.removeItem(at: file)
            }
        }
        // The driver finds swift-build and the compiler beside itself; pkg-config and the rest come from PATH.
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = swift.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        let build = try await Self.run(
            swift,
            [
                "build", "--package-path", Self.root.appendingPathComponent("samples/ConsumerApp").path,
                "--scratch-path", Self.scratch.path, "-Xswiftc", "-warnings-as-errors",
            ],
            log: Self.scratch.appendingPathComponent("build.log"), limit: .seconds(25 * 60), environment: environment)
        try #require(build.status == 0, "swift build of samples/ConsumerApp failed:\n\(Self.tail(build.output))")

        let binary = Self.scratch.appendingPathComponent("debug/ConsumerApp")
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "no ConsumerApp at \(binary.path)")
        let run = try await Self.run(
            binary, [], log: Self.scratch.appendingPathComponent("run.log"), limit: .seconds(120))
        #expect(run.status == 0, "ConsumerApp:\n\(run.output)")
        #expect(
            run.output == """
                first launch: migrated: 4 found, 4 verified, 0 failed, 0 conflicts, 0 blocked
                read back: 4 of 4 items
                next launch: already migrated

                """)
        for secret in [
            "consumer-password-0001", "consumer-refresh-0002", "consumer-token-0003", "consumer-session-0004",
        ] {
            #expect(!run.output.contains(secret), "the app printed a secret")
        }
    }
}

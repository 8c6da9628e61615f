import Foundation
import Testing

/// Review: the tool holds every secret of the dumps until it exits, and a crash core held all of them. It makes
/// itself not dumpable and sets its core size limit to 0 before it reads anything, unless
/// `APEX_KEYCHAIN_CORE_DUMPS=1` asks for cores.
@Suite("core dumps")
struct CoreDumpTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// The soft core size limit of a running process, from `/proc/<pid>/limits`.
    static func coreLimit(_ pid: Int32) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8) else { return nil }
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max core file size") }) else {
            return nil
        }
        return line.dropFirst("Max core file size".count).split(separator: " ").first.map(String.init)
    }

    /// Whether a thread of a process sleeps in a kernel function whose name contains `function`.
    static func threadWaits(_ pid: Int32, in function: String) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.contains { task in
            let wchan = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/wchan", encoding: .utf8)) ?? ""
            return wchan.contains(function)
        }
    }

    /// Starts `store set` from a shell that allows unlimited cores, with stdin a pipe the test holds open (so the
    /// tool waits for its value), and returns the core limit it runs with once it waits.
    func coreLimitWhileWaiting(environment: [String: String]) async throws -> String? {
        let store = try await sandbox.initStore()
        let binary = try #require(CLIBinary.url)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", "ulimit -c unlimited; exec \"$0\" \"$@\"", binary.path, "store", "set", "--store", store, "k",
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.currentDirectoryURL = sandbox.url
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Once the tool blocks on its stdin, everything before the read has run (a loaded machine may take long to
        // get there: the whole suite runs at once).
        let deadline = ContinuousClock.now + .seconds(120)
        var waiting = false
        while !waiting, ContinuousClock.now < deadline {
            waiting = Self.threadWaits(process.processIdentifier, in: "pipe_read")
            if !waiting { try await Task.sleep(for: .milliseconds(5)) }
        }
        let limit = Self.coreLimit(process.processIdentifier)
        try input.fileHandleForWriting.write(contentsOf: Data("v".utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(waiting, "the tool never waited on its stdin")
        #expect(process.terminationStatus == 0)
        return limit
    }

    @Test("the tool runs with a core size limit of 0 whatever the shell allowed")
    func noCoreDumps() async throws {
        #expect(try await coreLimitWhileWaiting(environment: [:]) == "0")
    }

    @Test("APEX_KEYCHAIN_CORE_DUMPS=1 keeps the shell's core limit")
    func coreDumpsOnRequest() async throws {
        #expect(try await coreLimitWhileWaiting(environment: ["APEX_KEYCHAIN_CORE_DUMPS": "1"]) == "unlimited")
    }
}

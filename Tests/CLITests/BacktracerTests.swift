import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 28: on SIGQUIT or SIGSEGV, the Swift runtime's backtracer read the memory of a process that holds
/// decrypted values, offered on the terminal to attach a debugger, and left its echo off for 30 s. The tool gives
/// those signals their default action before anything else, unless `APEX_KEYCHAIN_CORE_DUMPS=1` asks to debug it:
/// they end it at once, as the kernel would.
@Suite("the Swift runtime's backtracer")
struct BacktracerTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// The backtracer as its defaults have it (and as a user's environment may ask): on, and interactive when
    /// stdin is a terminal.
    static let backtracerOn = ["SWIFT_BACKTRACE": "enable=yes"]

    /// What the backtracer writes when it catches a signal.
    static func showsBacktracer(_ transcript: String) -> Bool {
        transcript.contains("Program crashed") || transcript.contains("Backtrace") || transcript.contains("debugger")
    }

    /// Sends `signal` to `pid` and waits (at most 20 s) until it ends: its wait status and how long that took.
    static func end(
        _ pid: pid_t, with signal: Int32, on terminal: PseudoTerminal
    ) -> (status: Int32?, seconds: Double) {
        let start = Date()
        kill(pid, signal)
        _ = terminal.waitFor("\u{0}never written\u{0}", seconds: 20, unlessExits: pid)
        let seconds = Date().timeIntervalSince(start)
        var status: Int32 = 0
        switch waitpid(pid, &status, WNOHANG) {
        case 0: return (nil, seconds)
        case pid: return (status, seconds)
        default: return (terminal.drain(until: pid), seconds)  // waitFor saw it end
        }
    }

    @Test(
        "SIGQUIT or a crash signal at a secret prompt ends the tool at once, by that signal: no backtracer, and echo is back on",
        arguments: [SIGQUIT, SIGSEGV, SIGBUS, SIGABRT])
    func signalAtPrompt(_ signal: Int32) async throws {
        let store = try await sandbox.initStore()
        let binary = try #require(CLIBinary.url)
        let terminal = try PseudoTerminal()
        let pid = try terminal.spawn(
            binary.path, ["store", "set", "--store", store, "k"], environment: Self.backtracerOn)
        defer {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == 0 {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
            }
        }
        try #require(terminal.waitFor("Value for 'k' in service 'apex-keychain': "), "no prompt")
        try #require(terminal.waitForEchoOff(), "echo is off at the prompt")
        let (status, seconds) = Self.end(pid, with: signal, on: terminal)
        let ended = try #require(status, "the tool was still running 20 s after signal \(signal)")
        #expect(ended & 0x7F == signal, "the tool ended with status \(ended)")
        #expect(seconds < 10, "it took \(seconds) s")
        #expect(!Self.showsBacktracer(terminal.transcript), "\(terminal.transcript)")
        #expect(terminal.echoes, "echo is back on")
    }

    @Test(
        "SIGQUIT or SIGSEGV while the tool waits for its stdin ends it at once by that signal: no backtracer",
        arguments: [SIGQUIT, SIGSEGV])
    func signalWhileWaiting(_ signal: Int32) async throws {
        let store = try await sandbox.initStore()
        let binary = try #require(CLIBinary.url)
        let fifo = sandbox.path("stdin.pipe")
        try #require(mkfifo(fifo, 0o600) == 0)
        let terminal = try PseudoTerminal()
        let pid = try terminal.spawn(
            binary.path, ["store", "set", "--store", store, "k"], stdin: fifo, environment: Self.backtracerOn)
        defer {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == 0 {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
            }
        }
        try #require(await Self.waitsOnStandardInput(pid), "the tool never waited on its stdin")
        let (status, seconds) = Self.end(pid, with: signal, on: terminal)
        let ended = try #require(status, "the tool was still running 20 s after signal \(signal)")
        #expect(ended & 0x7F == signal, "the tool ended with status \(ended)")
        #expect(seconds < 10, "it took \(seconds) s")
        #expect(!Self.showsBacktracer(terminal.transcript), "\(terminal.transcript)")
        #expect(terminal.echoes)
    }

    @Test("APEX_KEYCHAIN_CORE_DUMPS=1, which asks to debug the tool, leaves the backtracer as the environment sets it")
    func backtracerOnRequest() async throws {
        let store = try await sandbox.initStore()
        let binary = try #require(CLIBinary.url)
        let fifo = sandbox.path("stdin.pipe")
        try #require(mkfifo(fifo, 0o600) == 0)
        let terminal = try PseudoTerminal()
        let pid = try terminal.spawn(
            binary.path, ["store", "set", "--store", store, "k"], stdin: fifo,
            environment: ["SWIFT_BACKTRACE": "enable=yes,interactive=no", "APEX_KEYCHAIN_CORE_DUMPS": "1"])
        defer {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == 0 {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
            }
        }
        try #require(await Self.waitsOnStandardInput(pid), "the tool never waited on its stdin")
        kill(pid, SIGQUIT)
        // The backtracer writes its report, then lets the tool go on (a signal sent is no fault that comes back).
        #expect(terminal.waitFor("Program crashed", seconds: 60, unlessExits: pid), "\(terminal.transcript)")
    }

    /// Whether the tool comes to block on its stdin (a pipe) within 120 s: everything before the read has run.
    static func waitsOnStandardInput(_ pid: pid_t) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            if CoreDumpTests.threadWaits(pid, in: "pipe_read") { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }
}

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal, and `apex-keychain` run on it as on a user's terminal: in a new session whose controlling
/// terminal it is, so that the tool's `/dev/tty` is this terminal and Ctrl-C typed into it is SIGINT.
final class PseudoTerminal {
    let master: Int32
    /// The terminal side, kept open here to read its settings after the tool is gone.
    let terminal: Int32
    let terminalPath: String

    /// A C function of the C library that Swift's Glibc module leaves out (the pseudo-terminal calls).
    private static func libc<F>(_ name: String, as type: F.Type) throws -> F {
        let symbol = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), name), "no \(name) in the C library")
        return unsafeBitCast(symbol, to: type)
    }

    init() throws {
        let openpt = try Self.libc("posix_openpt", as: (@convention(c) (Int32) -> Int32).self)
        let grantpt = try Self.libc("grantpt", as: (@convention(c) (Int32) -> Int32).self)
        let unlockpt = try Self.libc("unlockpt", as: (@convention(c) (Int32) -> Int32).self)
        let ptsname = try Self.libc("ptsname_r", as: (@convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32).self)
        master = openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)
        try #require(master >= 0, "no pseudo-terminal: \(String(cString: strerror(errno)))")
        try #require(grantpt(master) == 0 && unlockpt(master) == 0)
        var name = [CChar](repeating: 0, count: 128)
        try #require(ptsname(master, &name, name.count) == 0)
        terminalPath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        terminal = open(terminalPath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        try #require(terminal >= 0)
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        close(terminal)
        close(master)
    }

    /// glibc's `POSIX_SPAWN_SETSID`, which the Glibc module leaves out.
    private static let spawnSetSID: Int16 = 0x80

    /// Starts `program` with `arguments` in a new session, with this terminal as its stdin, stdout, stderr and
    /// controlling terminal.
    func spawn(_ program: String, _ arguments: [String]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        // A session leader that opens a terminal without O_NOCTTY makes it its controlling terminal.
        posix_spawnattr_setflags(&attributes, Self.spawnSetSID)
        posix_spawn_file_actions_addopen(&actions, 0, terminalPath, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        // Without the Swift runtime's backtracer, which handles SIGQUIT (and asks on the terminal for 30 s).
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        try #require(rc == 0, "posix_spawn: \(String(cString: strerror(rc)))")
        return pid
    }

    /// Reads what the tool wrote until `text` appears, for at most `seconds`; whether it did.
    func waitFor(_ text: String, seconds: Double = 30) -> Bool {
        var output = Data()
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            let count = read(master, &buffer, buffer.count)
            if count > 0 {
                output.append(contentsOf: buffer[0..<count])
                if String(decoding: output, as: UTF8.self).contains(text) { return true }
            } else {
                usleep(2000)
            }
        }
        return false
    }

    /// Types `bytes` as the user would.
    func type(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Whether the terminal echoes what is typed.
    var echoes: Bool {
        var settings = termios()
        guard tcgetattr(terminal, &settings) == 0 else { return false }
        return settings.c_lflag & tcflag_t(ECHO) != 0
    }
}

/// The passphrase prompt turns echo off; a signal that ends the tool there gives it back.
@Suite("terminal echo")
struct TerminalEchoTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// How the tool is ended at the prompt: Ctrl-C typed, or a signal sent.
    enum Ending: String, CaseIterable, CustomTestStringConvertible {
        case controlC, sigterm, sighup, controlBackslash
        var testDescription: String { rawValue }
        var signal: Int32 {
            switch self {
            case .controlC: SIGINT
            case .sigterm: SIGTERM
            case .sighup: SIGHUP
            case .controlBackslash: SIGQUIT
            }
        }
    }

    @Test("a signal at the passphrase prompt restores echo, then ends the tool by that signal", arguments: Ending.allCases)
    func echoRestored(_ ending: Ending) async throws {
        let store = sandbox.path("store.db")
        let passphrase = try sandbox.writeSecret("passphrase", "correct horse\n")
        let created = try await sandbox.run(["store", "init", "--store", store, "--passphrase-file", passphrase])
        try #require(created.status == 0)
        let binary = try #require(CLIBinary.url)
        let terminal = try PseudoTerminal()
        #expect(terminal.echoes)
        let pid = try terminal.spawn(binary.path, ["store", "list", "--store", store])
        var status: Int32 = 0
        defer {
            if waitpid(pid, &status, WNOHANG) == 0 {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
            }
        }
        try #require(terminal.waitFor("Passphrase for \(store): "), "no prompt")
        // The prompt is written before echo goes off: wait until it is off.
        for _ in 0..<500 where terminal.echoes { usleep(2000) }
        try #require(!terminal.echoes, "echo is off at the prompt")
        switch ending {
        case .controlC: terminal.type([0x03])
        case .controlBackslash: terminal.type([0x1C])
        case .sigterm, .sighup: kill(pid, ending.signal)
        }
        try #require(waitpid(pid, &status, 0) == pid)
        let signalled = status & 0x7F
        #expect(signalled == ending.signal, "the tool ended with status \(status)")
        #expect(terminal.echoes, "echo is back on")
    }

    @Test("a passphrase typed at the prompt opens the store, and echo is back on afterwards")
    func echoRestoredAfterAnswer() async throws {
        let store = sandbox.path("store.db")
        let passphrase = try sandbox.writeSecret("passphrase", "correct horse\n")
        try #require(try await sandbox.run(["store", "init", "--store", store, "--passphrase-file", passphrase]).status == 0)
        let binary = try #require(CLIBinary.url)
        let terminal = try PseudoTerminal()
        let pid = try terminal.spawn(binary.path, ["store", "list", "--store", store])
        try #require(terminal.waitFor("Passphrase for \(store): "))
        for _ in 0..<500 where terminal.echoes { usleep(2000) }
        terminal.type(Array("correct horse\n".utf8))
        var status: Int32 = 0
        try #require(waitpid(pid, &status, 0) == pid)
        #expect(status == 0)
        #expect(terminal.echoes)
    }
}

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
        let ptsname = try Self.libc(
            "ptsname_r", as: (@convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32).self)
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
    /// controlling terminal, and without the Swift runtime's backtracer unless `environment` sets
    /// `SWIFT_BACKTRACE`.
    /// - Parameters:
    ///   - stdout: a file to send stdout to instead of the terminal.
    ///   - stdin: a file to open (read-write: a FIFO then never ends) as stdin instead of the terminal.
    ///   - stderr: a file to send stderr to instead of the terminal (which stays the controlling terminal).
    ///   - environment: variables to set (or replace).
    func spawn(
        _ program: String, _ arguments: [String], stdout: String? = nil, stdin: String? = nil,
        stderr: String? = nil, environment extra: [String: String] = [:]
    ) throws -> pid_t {
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
        // Nothing else of the test process leaks into the tool: a write end of another test's pipe, held by a tool
        // that waits, would keep that test's child from ever seeing the end of its input.
        let closeFrom = try Self.libc(
            "posix_spawn_file_actions_addclosefrom_np",
            as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        try #require(closeFrom(&actions, 3) == 0)
        posix_spawn_file_actions_addopen(&actions, 2, terminalPath, O_RDWR, 0)
        if let stdin {
            posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDWR, 0)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 2, 0)
        }
        if let stdout {
            posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 2, 1)
        }
        if let stderr {
            posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        }
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        // Without the Swift runtime's backtracer, which handles SIGQUIT (and asks on the terminal for 30 s).
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment.merge(extra) { $1 }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        try #require(rc == 0, "posix_spawn: \(String(cString: strerror(rc)))")
        return pid
    }

    /// Everything the tool wrote to the terminal so far (read by ``waitFor(_:seconds:)`` and ``drain(until:)``).
    private(set) var output = Data()
    /// Where the next ``waitFor(_:seconds:)`` starts looking in ``output``.
    private var cursor = 0

    /// ``output`` as text.
    var transcript: String { String(decoding: output, as: UTF8.self) }

    /// Reads what is there to read now; whether anything was.
    private func readAvailable() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(master, &buffer, buffer.count)
        guard count > 0 else { return false }
        output.append(contentsOf: buffer[0..<count])
        return true
    }

    /// Reads what the tool writes until `text` appears after the previous match, for at most `seconds`; whether
    /// it did. With `pid`, it also gives up as soon as that tool has exited (its status is kept for
    /// ``drain(until:)``).
    func waitFor(_ text: String, seconds: Double = 30, unlessExits pid: pid_t? = nil) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        let wanted = Data(text.utf8)
        while true {
            if let range = output.range(of: wanted, in: cursor..<output.count) {
                cursor = range.upperBound
                return true
            }
            guard Date() < deadline else { return false }
            if let pid, exitStatus == nil {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid { exitStatus = status }
            }
            if !readAvailable() {
                if exitStatus != nil { return false }
                usleep(2000)
            }
        }
    }

    /// The wait status of the tool, once ``waitFor(_:seconds:unlessExits:)`` has seen it exit.
    private var exitStatus: Int32?

    /// Reads what the tool writes until it exits, then returns its wait status.
    func drain(until pid: pid_t) -> Int32 {
        var status: Int32 = 0
        if let exitStatus {
            status = exitStatus
        } else {
            while waitpid(pid, &status, WNOHANG) == 0 {
                if !readAvailable() { usleep(2000) }
            }
        }
        while readAvailable() {}
        return status
    }

    /// Waits until echo is off (a secret prompt turns it off just after writing the prompt).
    func waitForEchoOff() -> Bool {
        for _ in 0..<2500 where echoes { usleep(2000) }
        return !echoes
    }

    /// Types `bytes` as the user would.
    func type(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Sets the terminal's size, as a terminal window does.
    func resize(columns: Int, rows: Int = 24) {
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(terminal, UInt(TIOCSWINSZ), &size)
    }

    /// Whether the terminal echoes what is typed.
    var echoes: Bool {
        var settings = termios()
        guard tcgetattr(terminal, &settings) == 0 else { return false }
        return settings.c_lflag & tcflag_t(ECHO) != 0
    }
}

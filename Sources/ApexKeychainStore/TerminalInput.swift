import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reading a secret from the controlling terminal (`/dev/tty`) with echo off. The terminal rather than stdin,
/// so that stdin stays free for values.
///
/// While echo is off, a signal that ends the process (SIGINT from Ctrl-C, SIGQUIT, SIGTERM, SIGHUP, and a crash:
/// SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP) first restores the terminal as it was, then takes its
/// course: a shell is never left without echo. Signals the
/// process ignores stay ignored; a handler installed before is put back and runs.
public enum TerminalInput {
    /// One read at a time: the terminal's saved state has one slot.
    private static let reading = Mutex(())

    /// Which terminal to read from.
    public enum Terminal: Sendable {
        /// The process's controlling terminal, `/dev/tty`: stdin stays free for values.
        case controlling
        /// The terminal that stdin is (opened anew by its name, so that the prompt can be written to it too).
        case standardInput
    }

    /// The longest line kept: one byte more means the line was longer.
    public static let maximumLineLength = 4096

    /// Writes `prompt` to the terminal and reads one line without echo.
    /// - Returns: the line without its newline (at most ``maximumLineLength`` + 1 bytes are kept: more than
    ///   ``maximumLineLength`` means a longer line), or nil when there is no terminal.
    public static func readSecret(prompt: String, from terminal: Terminal = .controlling) -> Data? {
        readLine(prompt: prompt, from: terminal, echo: false)
    }

    /// Writes `prompt` to the terminal and reads one line, echoed as it is typed (an answer to a question).
    /// - Returns: the line without its newline, or nil when there is no terminal.
    public static func readAnswer(prompt: String, from terminal: Terminal = .controlling) -> String? {
        readLine(prompt: prompt, from: terminal, echo: true).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether stdin is a terminal.
    public static var standardInputIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    private static func open(_ terminal: Terminal) -> Int32 {
        switch terminal {
        case .controlling:
            return Glibc.open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        case .standardInput:
            guard isatty(STDIN_FILENO) == 1, let name = ttyname(STDIN_FILENO) else { return -1 }
            return Glibc.open(name, O_RDWR | O_CLOEXEC | O_NOCTTY)
        }
    }

    private static func readLine(prompt: String, from terminal: Terminal, echo: Bool) -> Data? {
        reading.withLock { _ in
            let fd = open(terminal)
            guard fd >= 0 else { return nil }
            defer { close(fd) }
            var original = termios()
            guard tcgetattr(fd, &original) == 0 else { return nil }
            _ = prompt.withCString { write(fd, $0, strlen($0)) }
            if !echo {
                var silent = original
                silent.c_lflag &= ~tcflag_t(ECHO)
                EchoRestorer.arm(fd: fd, original)
                tcsetattr(fd, TCSAFLUSH, &silent)
            }
            defer {
                if !echo {
                    tcsetattr(fd, TCSAFLUSH, &original)
                    EchoRestorer.disarm()
                    // The newline typed was not echoed.
                    _ = write(fd, "\n", 1)
                }
            }
            var bytes = Data()
            var byte: UInt8 = 0
            while read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
                bytes.append(byte)
                if bytes.count > maximumLineLength { break }
            }
            return bytes
        }
    }
}

/// The signal handlers that give the terminal its echo back when a signal ends the process during a read.
///
/// Async-signal-safe: the handler reads only what ``arm(fd:_:)`` wrote before installing it (the descriptor,
/// the saved terminal state and the previous actions, in memory allocated once), and calls only `tcsetattr`,
/// `sigaction` and `raise`.
private enum EchoRestorer {
    /// The signals that end a process: asked for (SIGINT from Ctrl-C, SIGQUIT, SIGTERM, SIGHUP), and the crash
    /// signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP), which the tool leaves at their default action.
    static let signals: [Int32] = [SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP]
    /// The terminal's descriptor while a read is under way, else -1.
    static let terminal = Atomic<Int32>(-1)
    /// The terminal state to restore.
    nonisolated(unsafe) static let saved = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    /// The action each of ``signals`` had before, in the same order.
    nonisolated(unsafe) static let previous = UnsafeMutablePointer<sigaction>.allocate(capacity: signals.count)
    /// Whether ``signals``' handler was installed (a signal that was ignored is left ignored).
    nonisolated(unsafe) static let installed = UnsafeMutablePointer<Bool>.allocate(capacity: signals.count)

    /// The index of `number` in ``signals``.
    static func index(_ number: Int32) -> Int {
        switch number {
        case SIGINT: 0
        case SIGQUIT: 1
        case SIGTERM: 2
        case SIGHUP: 3
        case SIGSEGV: 4
        case SIGBUS: 5
        case SIGILL: 6
        case SIGFPE: 7
        case SIGABRT: 8
        default: 9
        }
    }

    /// Restores the terminal, puts the signal's previous action back, and raises the signal again: it is
    /// delivered, with that action, when the handler returns.
    static let handler: @convention(c) (Int32) -> Void = { number in
        let fd = EchoRestorer.terminal.load(ordering: .acquiring)
        if fd >= 0 { _ = tcsetattr(fd, TCSANOW, EchoRestorer.saved) }
        _ = sigaction(number, EchoRestorer.previous + EchoRestorer.index(number), nil)
        _ = raise(number)
    }

    /// Saves `state` of the terminal `fd` and installs the handlers.
    static func arm(fd: Int32, _ state: termios) {
        saved.pointee = state
        terminal.store(fd, ordering: .releasing)
        for (index, number) in signals.enumerated() {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = handler
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            installed[index] = false
            // SIG_IGN is the handler address 1.
            guard sigaction(number, nil, previous + index) == 0,
                unsafeBitCast(previous[index].__sigaction_handler.sa_handler, to: Int.self) != 1
            else { continue }
            installed[index] = sigaction(number, &action, nil) == 0
        }
    }

    /// Puts the previous actions back.
    static func disarm() {
        for index in signals.indices where installed[index] {
            _ = sigaction(signals[index], previous + index, nil)
            installed[index] = false
        }
        terminal.store(-1, ordering: .releasing)
    }
}

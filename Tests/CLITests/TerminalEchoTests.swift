import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

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

    @Test(
        "a signal at the passphrase prompt restores echo, then ends the tool by that signal", arguments: Ending.allCases
    )
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
        try #require(terminal.waitForEchoOff(), "echo is off at the prompt")
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
        try #require(
            try await sandbox.run(["store", "init", "--store", store, "--passphrase-file", passphrase]).status == 0)
        let binary = try #require(CLIBinary.url)
        let terminal = try PseudoTerminal()
        let pid = try terminal.spawn(binary.path, ["store", "list", "--store", store])
        try #require(terminal.waitFor("Passphrase for \(store): "))
        try #require(terminal.waitForEchoOff(), "echo is off at the prompt")
        terminal.type(Array("correct horse\n".utf8))
        var status: Int32 = 0
        try #require(waitpid(pid, &status, 0) == pid)
        #expect(status == 0)
        #expect(terminal.echoes)
    }
}

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `store init --passphrase` (issue 31): the passphrase of a new store typed on the terminal, twice, without echo,
/// as `store set` asks for a value; without the flag, `init` makes a key-file store and asks nothing, on a
/// terminal or not.
@Suite("store init --passphrase")
struct StoreInitPassphraseTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// Runs the tool on a new pseudo-terminal, stdout to a file (`stdout` in the sandbox).
    func spawn(_ arguments: [String]) throws -> (PseudoTerminal, pid_t) {
        let binary = try #require(CLIBinary.url)
        let terminal = try PseudoTerminal()
        return (terminal, try terminal.spawn(binary.path, arguments, stdout: sandbox.path("stdout")))
    }

    /// Waits for `prompt`, then for echo to go off, then types `line` and its newline.
    func answer(_ terminal: PseudoTerminal, _ prompt: String, _ line: String) throws {
        try #require(terminal.waitFor(prompt), "no prompt '\(prompt)': \(terminal.transcript)")
        try #require(terminal.waitForEchoOff(), "echo is off at '\(prompt)'")
        terminal.type(Array("\(line)\n".utf8))
    }

    @Test("asks twice with echo off; the passphrase typed locks the store, which has no key file")
    func asksTwice() async throws {
        let store = sandbox.path("store.db")
        let (terminal, pid) = try spawn(["store", "init", "--store", store, "--passphrase"])
        try answer(terminal, "New passphrase for \(store): ", canary)
        try answer(terminal, "The same passphrase again: ", canary)
        let status = terminal.drain(until: pid)
        #expect(status == 0, "\(terminal.transcript)")
        #expect(terminal.echoes, "echo is back on")
        #expect(!terminal.transcript.contains(canary), "the passphrase was echoed: \(terminal.transcript)")
        #expect(terminal.transcript == "New passphrase for \(store): \r\nThe same passphrase again: \r\n")
        let out = try String(contentsOfFile: sandbox.path("stdout"), encoding: .utf8)
        #expect(out == "store:    \(store)\ndevice:   linux\nservice:  apex-keychain\nkey:      passphrase\n")
        #expect(!FileManager.default.fileExists(atPath: store + ".key"))

        let file = try sandbox.writeSecret("passphrase", canary)
        let set = try await sandbox.run(
            ["store", "set", "--store", store, "--passphrase-file", file, "k"], stdin: Data("v".utf8))
        #expect(set.status == 0, "\(set.err)")
        let wrong = try sandbox.writeSecret("wrong", "not-it")
        let refused = try await sandbox.run(["store", "list", "--store", store, "--passphrase-file", wrong])
        #expect(refused.status == 77)
    }

    @Test("two passphrases that differ are refused (64) and nothing is written")
    func refusesAMismatch() async throws {
        let store = sandbox.path("store.db")
        let (terminal, pid) = try spawn(["store", "init", "--store", store, "--passphrase"])
        try answer(terminal, "New passphrase for \(store): ", "first-pass")
        try answer(terminal, "The same passphrase again: ", "other-pass")
        let status = terminal.drain(until: pid)
        #expect(status >> 8 == 64, "\(terminal.transcript)")
        #expect(terminal.echoes)
        #expect(
            terminal.transcript.contains(
                "apex-keychain: \(store): the two passphrases typed differ; nothing was written\r\n"),
            "\(terminal.transcript)")
        #expect(!terminal.transcript.contains("first-pass") && !terminal.transcript.contains("other-pass"))
        let left = try FileManager.default.contentsOfDirectory(atPath: sandbox.url.path).filter {
            $0.hasPrefix("store.db")
        }
        #expect(left == [], "\(left)")
    }

    @Test("an empty passphrase is refused (64) after the first prompt, and nothing is written")
    func refusesEmpty() async throws {
        let store = sandbox.path("store.db")
        let (terminal, pid) = try spawn(["store", "init", "--store", store, "--passphrase"])
        try answer(terminal, "New passphrase for \(store): ", "")
        #expect(terminal.drain(until: pid) >> 8 == 64, "\(terminal.transcript)")
        #expect(terminal.transcript.contains("apex-keychain: \(store): the passphrase is empty; nothing was written"))
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test("without --passphrase, init on a terminal asks nothing and makes a key-file store, as it does off one")
    func keyFileOnATerminal() async throws {
        let store = sandbox.path("store.db")
        let (terminal, pid) = try spawn(["store", "init", "--store", store])
        #expect(terminal.drain(until: pid) == 0, "\(terminal.transcript)")
        #expect(terminal.transcript == "")
        #expect(FileManager.default.fileExists(atPath: store + ".key"))
    }

    @Test(
        "--passphrase without a terminal: exit 75, saying to pass --passphrase-file, and nothing is written",
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/setsid"),
            "needs /usr/bin/setsid, to run the tool without a controlling terminal"))
    func noTerminal() async throws {
        let store = sandbox.path("store.db")
        let result = try await sandbox.run(["store", "init", "--store", store, "--passphrase"])
        #expect(result.status == 75)
        #expect(
            result.err
                == "apex-keychain: \(store): there is no terminal to ask for the passphrase; pass --passphrase-file FILE\n"
        )
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test("--passphrase with --passphrase-file is a usage error; on a store that exists, 73 before any prompt")
    func refusedBeforeAsking() async throws {
        let store = sandbox.path("store.db")
        let file = try sandbox.writeSecret("passphrase", "pw")
        let both = try await sandbox.run(["store", "init", "--store", store, "--passphrase", "--passphrase-file", file])
        #expect(both.status == 64)
        #expect(both.err.hasPrefix("apex-keychain: '--passphrase' and '--passphrase-file' can't be used together\n"))

        let existing = try await sandbox.initStore()
        let (terminal, pid) = try spawn(["store", "init", "--store", existing, "--passphrase"])
        #expect(terminal.drain(until: pid) >> 8 == 73, "\(terminal.transcript)")
        #expect(terminal.transcript == "apex-keychain: \(existing): a file already exists there\r\n")
    }
}

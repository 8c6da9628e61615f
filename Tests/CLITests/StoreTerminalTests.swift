import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The store commands on a terminal (issue 14, items 14 and 15): `store set` asks for the value without echo when
/// stdin is a terminal; `store clear` asks before it removes anything.
@Suite("store commands on a terminal")
struct StoreTerminalTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// Runs the tool on a new pseudo-terminal.
    func spawn(_ arguments: [String]) throws -> (PseudoTerminal, pid_t) {
        let binary = try #require(CLIBinary.url)
        let terminal = try PseudoTerminal()
        return (terminal, try terminal.spawn(binary.path, arguments))
    }

    @Test(
        "set on a terminal asks for the value with echo off, stores the line typed without its newline, and never shows it"
    )
    func setAsksWithoutEcho() async throws {
        let store = try await sandbox.initStore()
        let (terminal, pid) = try spawn(["store", "set", "--store", store, "api-token"])
        try #require(
            terminal.waitFor("Value for 'api-token' in service 'apex-keychain': "), "no prompt: \(terminal.transcript)")
        try #require(terminal.waitForEchoOff(), "echo is off at the prompt")
        terminal.type(Array("\(canary)\n".utf8))
        let status = terminal.drain(until: pid)
        #expect(status == 0, "\(terminal.transcript)")
        #expect(terminal.echoes, "echo is back on")
        #expect(!terminal.transcript.contains(canary), "the value was echoed: \(terminal.transcript)")
        #expect(terminal.transcript == "Value for 'api-token' in service 'apex-keychain': \r\n")
        let get = try await sandbox.run(["store", "get", "--store", store, "api-token"])
        #expect(get.out == canary)
    }

    @Test("set --username on a terminal asks for the password, naming the key and the service")
    func setAsksForThePassword() async throws {
        let store = try await sandbox.initStore()
        let (terminal, pid) = try spawn(
            ["store", "set", "--store", store, "--service", "auth", "--username", "alice", "credentials"])
        try #require(terminal.waitFor("Password for 'credentials' in service 'auth': "), "\(terminal.transcript)")
        try #require(terminal.waitForEchoOff())
        terminal.type(Array("pw-123\n".utf8))
        #expect(terminal.drain(until: pid) == 0, "\(terminal.transcript)")
        let get = try await sandbox.run(["store", "get", "--store", store, "--service", "auth", "credentials"])
        #expect(get.out == "pw-123")
        let info = try await sandbox.run(["store", "info", "--store", store, "--service", "auth", "credentials"])
        #expect(info.out.contains("\nlabel:          alice\n"))
    }

    @Test("an empty line typed is refused (64) and nothing is written; with --allow-empty it is stored")
    func setRefusesAnEmptyLine() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "k", "kept")
        let (terminal, pid) = try spawn(["store", "set", "--store", store, "k"])
        try #require(terminal.waitFor("Value for 'k' in service 'apex-keychain': "))
        try #require(terminal.waitForEchoOff())
        terminal.type(Array("\n".utf8))
        let status = terminal.drain(until: pid)
        #expect(status >> 8 == 64, "\(terminal.transcript)")
        #expect(
            terminal.transcript.contains(
                "apex-keychain: the value typed is empty; nothing was written (pass --allow-empty to store an empty value)"
            ))
        #expect(try await sandbox.run(["store", "get", "--store", store, "k"]).out == "kept")

        let (again, second) = try spawn(["store", "set", "--store", store, "--allow-empty", "k"])
        try #require(again.waitFor("Value for 'k' in service 'apex-keychain': "))
        try #require(again.waitForEchoOff())
        again.type(Array("\n".utf8))
        #expect(again.drain(until: second) == 0, "\(again.transcript)")
        let get = try await sandbox.run(["store", "get", "--store", store, "k"])
        #expect(get.status == 0)
        #expect(get.stdout.isEmpty)
    }

    @Test(
        "clear on a terminal asks first: 'n' (or just Enter) removes nothing and exits 1, 'y' removes and says how many",
        arguments: ["n\n", "\n", "y\n", "YES\n"])
    func clearAsks(_ answer: String) async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "a", "v")
        try await sandbox.set(store, "b", "v")
        let (terminal, pid) = try spawn(["store", "clear", "--store", store])
        try #require(
            terminal.waitFor("Remove 2 items from service 'apex-keychain' of \(store)? [y/N] "),
            "\(terminal.transcript)")
        #expect(terminal.echoes, "a question is answered with echo on")
        terminal.type(Array(answer.utf8))
        let status = terminal.drain(until: pid)
        let list = try await sandbox.run(["store", "list", "--store", store])
        if answer.lowercased().hasPrefix("y") {
            #expect(status == 0, "\(terminal.transcript)")
            #expect(terminal.transcript.hasSuffix("removed 2 items from service 'apex-keychain'\r\n"))
            #expect(list.out == "")
        } else {
            #expect(status >> 8 == 1, "\(terminal.transcript)")
            #expect(terminal.transcript.hasSuffix("apex-keychain: \(store): not confirmed; nothing was removed\r\n"))
            #expect(list.out == "a\nb\n")
        }
    }

    @Test("clear --yes on a terminal removes without asking")
    func clearYes() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "a", "v")
        let (terminal, pid) = try spawn(["store", "clear", "--store", store, "--yes"])
        #expect(terminal.drain(until: pid) == 0)
        #expect(terminal.transcript == "removed 1 item from service 'apex-keychain'\r\n")
    }
}

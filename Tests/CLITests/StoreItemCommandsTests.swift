import Foundation
import Testing

/// `store set`, `get`, `list`, `remove` and `clear` on a key-file store.
@Suite("store item commands")
struct StoreItemCommandsTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    @Test("set then get round-trips a string exactly, with no newline added")
    func stringRoundTrip() async throws {
        let store = try await sandbox.initStore()
        let value = "pâssword → 🔑 with spaces  "
        let set = try await sandbox.run(["store", "set", "--store", store, "api-token"], stdin: Data(value.utf8))
        #expect(set.status == 0)
        #expect(set.out == "")
        #expect(set.err == "")
        let get = try await sandbox.run(["store", "get", "--store", store, "api-token"])
        #expect(get.status == 0)
        #expect(get.stdout == Data(value.utf8))
        #expect(get.err == "")
    }

    @Test("every byte value round-trips exactly, stored as bytes")
    func allByteValues() async throws {
        let store = try await sandbox.initStore()
        let bytes = Data((0...255).map { UInt8($0) } + (0...255).reversed().map { UInt8($0) })
        try await sandbox.set(store, "blob", bytes)
        let get = try await sandbox.run(["store", "get", "--store", store, "blob"])
        #expect(get.status == 0)
        #expect(get.stdout == bytes)
    }

    @Test("--bytes stores valid UTF-8 as bytes, and it still round-trips")
    func forcedBytes() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "k", "plain text", ["--bytes"])
        let get = try await sandbox.run(["store", "get", "--store", store, "k"])
        #expect(get.stdout == Data("plain text".utf8))
    }

    @Test("a trailing newline is part of the value", arguments: ["line\n", "two\n\n", "crlf\r\n", "\n"])
    func trailingNewline(_ value: String) async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "k", value)
        let get = try await sandbox.run(["store", "get", "--store", store, "k"])
        #expect(get.stdout == Data(value.utf8))
    }

    @Test("an empty stdin is refused (64) and nothing is written; with --allow-empty it stores the empty string")
    func emptyValue() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "empty", "kept")
        for options in [[], ["--username", "alice"]] {
            let key = options.isEmpty ? "empty" : "credentials"
            let refused = try await sandbox.run(["store", "set", "--store", store] + options + [key])
            #expect(refused.status == 64)
            #expect(refused.out == "")
            #expect(
                refused.err == """
                    apex-keychain: the value read from stdin is empty; nothing was written (pass --allow-empty to \
                    store an empty value)
                    Run 'apex-keychain store set --help' for usage.

                    """)
        }
        #expect(try await sandbox.run(["store", "get", "--store", store, "empty"]).out == "kept")
        #expect(try await sandbox.run(["store", "list", "--store", store]).out == "empty\n")
        try await sandbox.set(store, "empty", Data(), ["--allow-empty"])
        let get = try await sandbox.run(["store", "get", "--store", store, "empty"])
        #expect(get.status == 0)
        #expect(get.stdout.isEmpty)
        let list = try await sandbox.run(["store", "list", "--store", store])
        #expect(list.out == "empty\n")
    }

    @Test("set replaces the value of a key")
    func replaces() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "k", "old")
        try await sandbox.set(store, "k", "new")
        let get = try await sandbox.run(["store", "get", "--store", store, "k"])
        #expect(get.out == "new")
    }

    @Test("get of a missing key exits 1 naming the key, the service and the store, and prints nothing")
    func missingKey() async throws {
        let store = try await sandbox.initStore()
        let result = try await sandbox.run(["store", "get", "--store", store, "nope"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.err == "apex-keychain: no item 'nope' in service 'apex-keychain' of \(store)\n")
        let other = try await sandbox.run(["store", "get", "--store", store, "--service", "mail", "nope"])
        #expect(other.err == "apex-keychain: no item 'nope' in service 'mail' of \(store)\n")
    }

    @Test("a key that starts with '-' is given after '--'")
    func dashKey() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "-k", "dash")
        let get = try await sandbox.run(["store", "get", "--store", store, "--", "-k"])
        #expect(get.out == "dash")
    }

    @Test("list prints the service's keys sorted, one per line; services don't meet")
    func listSorted() async throws {
        let store = try await sandbox.initStore()
        for key in ["zeta", "alpha", "Beta", "mid dle", "alpha2"] { try await sandbox.set(store, key, "v") }
        try await sandbox.set(store, "other", "v", ["--service", "mail"])
        let list = try await sandbox.run(["store", "list", "--store", store])
        #expect(list.status == 0)
        #expect(list.out == "Beta\nalpha\nalpha2\nmid dle\nzeta\n")
        let mail = try await sandbox.run(["store", "list", "--store", store, "--service", "mail"])
        #expect(mail.out == "other\n")
        let get = try await sandbox.run(["store", "get", "--store", store, "other"])
        #expect(get.status == 1)
    }

    @Test("list --all-services prints SERVICE<TAB>KEY lines sorted by service, then key")
    func listAllServices() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "b", "v")
        try await sandbox.set(store, "a", "v")
        try await sandbox.set(store, "token", "v", ["--service", "mail"])
        try await sandbox.set(store, "z", "v", ["--service", "Zoo"])
        try await sandbox.set(store, "k", "v", ["--service", "auth", "--access-control", "none"])
        let list = try await sandbox.run(["store", "list", "--store", store, "--all-services"])
        #expect(list.status == 0)
        #expect(list.out == "Zoo\tz\napex-keychain\ta\napex-keychain\tb\nauth\tk\nmail\ttoken\n")
        let both = try await sandbox.run(["store", "list", "--store", store, "--all-services", "--service", "mail"])
        #expect(both.status == 64)
    }

    @Test("remove deletes one item and prints nothing; a missing key is not an error")
    func remove() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "a", "v")
        try await sandbox.set(store, "b", "v")
        let remove = try await sandbox.run(["store", "remove", "--store", store, "a"])
        #expect(remove.status == 0)
        #expect(remove.out == "")
        #expect(remove.err == "")
        let list = try await sandbox.run(["store", "list", "--store", store])
        #expect(list.out == "b\n")
        let again = try await sandbox.run(["store", "remove", "--store", store, "a"])
        #expect(again.status == 0)
        let get = try await sandbox.run(["store", "get", "--store", store, "a"])
        #expect(get.status == 1)
    }

    @Test("clear --yes removes every item of the service, and only of that service, and says how many")
    func clear() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "a", "v")
        try await sandbox.set(store, "b", "v")
        try await sandbox.set(store, "kept", "v", ["--service", "mail"])
        let clear = try await sandbox.run(["store", "clear", "--store", store, "--yes"])
        #expect(clear.status == 0)
        #expect(clear.out == "removed 2 items from service 'apex-keychain'\n")
        #expect(clear.err == "")
        let all = try await sandbox.run(["store", "list", "--store", store, "--all-services"])
        #expect(all.out == "mail\tkept\n")
        let one = try await sandbox.run(["store", "clear", "--store", store, "--service", "mail", "--yes"])
        #expect(one.out == "removed 1 item from service 'mail'\n")
    }

    @Test("clear without a terminal and without --yes removes nothing (64), saying how many items --yes would remove")
    func clearWithoutTerminal() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "a", "v")
        let refused = try await sandbox.run(["store", "clear", "--store", store])
        #expect(refused.status == 64)
        #expect(refused.out == "")
        #expect(
            refused.err == """
                apex-keychain: \(store): 'store clear' would remove 1 item from service 'apex-keychain', and there is \
                no terminal to confirm it; pass --yes
                Run 'apex-keychain store clear --help' for usage.

                """)
        #expect(try await sandbox.run(["store", "list", "--store", store]).out == "a\n")
        // Nothing to remove: nothing to confirm.
        let empty = try await sandbox.run(["store", "clear", "--store", store, "--service", "empty"])
        #expect(empty.status == 0)
        #expect(empty.out == "removed 0 items from service 'empty'\n")
    }

    @Test("credentials: --username stores stdin as the password; get prints the password")
    func credentials() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "credentials", "hunter2\n", ["--username", "alice"])
        try await sandbox.set(store, "credentials:example.com", "s3cret", ["--username", "bob"])
        let get = try await sandbox.run(["store", "get", "--store", store, "credentials"])
        #expect(get.status == 0)
        #expect(get.out == "hunter2\n")
        let server = try await sandbox.run(["store", "get", "--store", store, "credentials:example.com"])
        #expect(server.out == "s3cret")
        let info = try await sandbox.run(["store", "info", "--store", store, "credentials:example.com"])
        #expect(info.out.contains("\nlabel:          bob\n"))
        #expect(!info.out.contains("s3cret"))
    }

    @Test("--username needs a credentials key (64)")
    func usernameNeedsCredentialsKey() async throws {
        let store = try await sandbox.initStore()
        let result = try await sandbox.run(
            ["store", "set", "--store", store, "--username", "alice", "token"], stdin: Data("pw".utf8))
        #expect(result.status == 64)
        #expect(
            result.err == """
                apex-keychain: '--username' stores credentials: the key must be 'credentials' or 'credentials:<server>'
                Run 'apex-keychain store set --help' for usage.

                """)
        let list = try await sandbox.run(["store", "list", "--store", store])
        #expect(list.out == "")
    }
}

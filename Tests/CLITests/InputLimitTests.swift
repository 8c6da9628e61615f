import Foundation
import Testing

/// Inputs are read up to a limit, never without end: a passphrase is at most 1 KiB, a value at most the 16 MiB
/// a store holds. Past it, a usage error (64) naming the input, and nothing is written.
@Suite("input limits")
struct InputLimitTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let valueLimit = 16 << 20

    @Test("store set < /dev/zero stops at the limit: exit 64, nothing written")
    func endlessValue() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "k", "kept")
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let result = try await sandbox.run(["store", "set", "--store", store, "k"], stdinFile: "/dev/zero")
        #expect(result.status == 64)
        #expect(result.out == "")
        #expect(
            result.err == """
                apex-keychain: the value read from stdin is larger than 16777216 bytes (16 MiB), the largest a store \
                holds; nothing was written
                Run 'apex-keychain store set --help' for usage.

                """)
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        #expect(try await sandbox.run(["store", "get", "--store", store, "k"]).out == "kept")
    }

    @Test("a value of exactly 16 MiB is stored and read back; one byte more is refused")
    func valueAtTheLimit() async throws {
        let store = try await sandbox.initStore()
        var value = Data(repeating: 0xA5, count: Self.valueLimit)
        try await sandbox.set(store, "big", value)
        #expect(try await sandbox.run(["store", "get", "--store", store, "big"]).stdout == value)
        value.append(0x5A)
        let result = try await sandbox.run(["store", "set", "--store", store, "big"], stdin: value)
        #expect(result.status == 64)
        #expect(result.err.hasPrefix("apex-keychain: the value read from stdin is larger than 16777216 bytes (16 MiB)"))
        #expect(try await sandbox.run(["store", "get", "--store", store, "big"]).stdout.count == Self.valueLimit)
    }

    @Test(
        "--passphrase-file /dev/zero stops at 1 KiB: exit 64 naming the file, and init creates nothing",
        arguments: ["init", "list"])
    func endlessPassphrase(_ command: String) async throws {
        let store = sandbox.path("store.db")
        if command == "list" { _ = try await sandbox.initStore() }
        let result = try await sandbox.run(["store", command, "--store", store, "--passphrase-file", "/dev/zero"])
        #expect(result.status == 64)
        #expect(result.out == "")
        #expect(
            result.err.hasPrefix(
                "apex-keychain: \(store): the passphrase file /dev/zero is too large: a passphrase is at most 1024 bytes "
                    + "(1 KiB), and one trailing newline\n"))
        if command == "init" { #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.url.path).isEmpty) }
    }

    @Test("a passphrase of 1 KiB creates and opens a store; one byte more is refused, with or without a newline")
    func passphraseAtTheLimit() async throws {
        let store = sandbox.path("store.db")
        let longest = String(repeating: "p", count: 1024)
        let file = try sandbox.writeSecret("longest", longest + "\n")
        #expect(try await sandbox.run(["store", "init", "--store", store, "--passphrase-file", file]).status == 0)
        #expect(try await sandbox.run(["store", "list", "--store", store, "--passphrase-file", file]).status == 0)
        for text in [longest + "p", longest + "p\n", longest + "\n\n"] {
            let tooLong = try sandbox.writeSecret("too-long", text)
            let result = try await sandbox.run(["store", "list", "--store", store, "--passphrase-file", tooLong])
            #expect(result.status == 64, "\(text.count) bytes")
            #expect(result.err.contains("the passphrase file \(tooLong) is too large"))
        }
    }
}

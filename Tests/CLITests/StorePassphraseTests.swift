import Foundation
import Testing

/// Stores locked with a passphrase. Each open runs Argon2id, so these tests are few and do several checks each.
@Suite("passphrase stores")
struct StorePassphraseTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    @Test("init --passphrase-file creates no key file; the same passphrase opens the store, a wrong one is refused")
    func opensWithTheSamePassphrase() async throws {
        let store = sandbox.path("store.db")
        let file = try sandbox.writeSecret("passphrase", "correct horse\n")
        let initResult = try await sandbox.run(["store", "init", "--store", store, "--passphrase-file", file])
        #expect(initResult.status == 0)
        #expect(
            initResult.out == "store:    \(store)\ndevice:   linux\nservice:  apex-keychain\nkey:      passphrase\n")
        #expect(!FileManager.default.fileExists(atPath: store + ".key"))

        let set = try await sandbox.run(
            ["store", "set", "--store", store, "--passphrase-file", file, "k"], stdin: Data("v1".utf8))
        #expect(set.status == 0)
        // One trailing newline is not part of the passphrase: the file without it opens the store too.
        let bare = try sandbox.writeSecret("bare", "correct horse")
        let get = try await sandbox.run(["store", "get", "--store", store, "--passphrase-file", bare, "k"])
        #expect(get.status == 0)
        #expect(get.out == "v1")

        let wrong = try sandbox.writeSecret("wrong", "correct horse\n\n")
        let refused = try await sandbox.run(["store", "get", "--store", store, "--passphrase-file", wrong, "k"])
        #expect(refused.status == 77)
        #expect(refused.out == "")
        #expect(refused.err == "apex-keychain: \(store): the passphrase does not open this store\n")

        let keyFile = try await sandbox.run(["store", "list", "--store", store, "--key-file", file])
        #expect(keyFile.status == 77)
        #expect(keyFile.err == "apex-keychain: \(store): this store is locked with a passphrase, not a key file\n")
    }

    @Test("the passphrase file answers the passcode prompt of a passcode-protected item")
    func answersPasscodePrompts() async throws {
        let store = sandbox.path("store.db")
        let file = try sandbox.writeSecret("passphrase", "pin-1234")
        #expect(try await sandbox.run(["store", "init", "--store", store, "--passphrase-file", file]).status == 0)
        let set = try await sandbox.run(
            ["store", "set", "--store", store, "--passphrase-file", file, "--access-control", "passcode", "k"],
            stdin: Data("guarded".utf8))
        #expect(set.status == 0)
        let get = try await sandbox.run(["store", "get", "--store", store, "--passphrase-file", file, "k"])
        #expect(get.status == 0)
        #expect(get.out == "guarded")
    }

    @Test(
        "without --passphrase-file and without a terminal: exit 75, saying to pass --passphrase-file",
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/setsid"),
            "needs /usr/bin/setsid, to run the tool without a controlling terminal"))
    func noTerminal() async throws {
        let store = sandbox.path("store.db")
        let file = try sandbox.writeSecret("passphrase", "pw")
        #expect(try await sandbox.run(["store", "init", "--store", store, "--passphrase-file", file]).status == 0)
        // setsid: a new session has no controlling terminal, even when the tests run in one.
        let result = try await sandbox.run(["store", "list", "--store", store], launcher: ["/usr/bin/setsid", "-w"])
        #expect(result.status == 75)
        #expect(
            result.err == """
                apex-keychain: \(store): the store is locked with a passphrase and there is no terminal to ask for \
                it; pass --passphrase-file FILE

                """)
    }
}

import Foundation
import Testing

/// Issue 14, item 16: a passphrase file is a secret, like a key file. One that group or others can access is
/// refused (77) before a byte of it is read; an empty one is a usage error (64), not a refused passphrase.
@Suite("passphrase files")
struct PassphraseFileTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    func chmod(_ path: String, _ mode: Int) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    @Test(
        "init refuses a passphrase file that group or others can access (77), names it, and creates nothing",
        arguments: [0o644, 0o640, 0o604, 0o620, 0o602])
    func initRefusesAnOpenFile(_ mode: Int) async throws {
        let store = sandbox.path("store.db")
        let file = try sandbox.write("passphrase", "correct horse\n")
        try chmod(file, mode)
        let result = try await sandbox.run(["store", "init", "--store", store, "--passphrase-file", file])
        #expect(result.status == 77)
        #expect(
            result.err == "apex-keychain: \(store): the passphrase file \(file) is accessible by others "
                + "(mode \(String(mode, radix: 8))); run: chmod 600 \(file)\n")
        #expect(result.out == "")
        #expect(!FileManager.default.fileExists(atPath: store))
        #expect(!FileManager.default.fileExists(atPath: store + ".key"))
    }

    @Test("every store command refuses a passphrase file others can read; once it is 0600 it opens the store")
    func commandsRefuseAnOpenFile() async throws {
        let store = sandbox.path("store.db")
        let file = try sandbox.writeSecret("passphrase", "correct horse\n")
        #expect(try await sandbox.run(["store", "init", "--store", store, "--passphrase-file", file]).status == 0)
        try await sandbox.set(store, "k", "v", ["--passphrase-file", file])
        try chmod(file, 0o644)
        let refused =
            "apex-keychain: \(store): the passphrase file \(file) is accessible by others (mode 644); "
            + "run: chmod 600 \(file)\n"
        for command in [["list"], ["get", "k"], ["info", "k"], ["remove", "k"]] {
            let result = try await sandbox.run(
                ["store", command[0], "--store", store, "--passphrase-file", file] + command.dropFirst())
            #expect(result.status == 77, "\(command)")
            #expect(result.err == refused, "\(command)")
            #expect(result.out == "", "\(command)")
        }
        let set = try await sandbox.run(
            ["store", "set", "--store", store, "--passphrase-file", file, "k"], stdin: Data("other".utf8))
        #expect(set.status == 77)
        let dump = try ConcurrentMigrateTests.dump(run: "mode", count: 1, in: sandbox)
        let migrate = try await sandbox.run(["migrate", "--store", store, "--passphrase-file", file, dump])
        #expect(migrate.status == 77)
        #expect(migrate.err == refused)
        try chmod(file, 0o600)
        let get = try await sandbox.run(["store", "get", "--store", store, "--passphrase-file", file, "k"])
        #expect(get.status == 0)
        #expect(get.out == "v")
    }

    @Test(
        "a passphrase piped in through /dev/stdin (a pipe, private to the process) opens the store",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/bin/sh"), "needs /bin/sh, to pipe a passphrase"))
    func pipedPassphrase() async throws {
        let store = sandbox.path("store.db")
        let file = try sandbox.writeSecret("passphrase", "correct horse\n")
        #expect(try await sandbox.run(["store", "init", "--store", store, "--passphrase-file", file]).status == 0)
        try await sandbox.set(store, "k", "v", ["--passphrase-file", file])
        let result = try await sandbox.run(
            ["store", "get", "--store", store, "--passphrase-file", "/dev/stdin", "k"],
            launcher: ["/bin/sh", "-c", "printf 'correct horse' | \"$0\" \"$@\""])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "v")
    }

    @Test(
        "an empty passphrase file, or one holding only a newline, is a usage error (64)",
        arguments: ["", "\n"])
    func emptyFile(_ contents: String) async throws {
        let store = sandbox.path("store.db")
        let good = try sandbox.writeSecret("good", "correct horse")
        #expect(try await sandbox.run(["store", "init", "--store", store, "--passphrase-file", good]).status == 0)
        let empty = try sandbox.writeSecret("empty", contents)
        let result = try await sandbox.run(["store", "list", "--store", store, "--passphrase-file", empty])
        #expect(result.status == 64)
        #expect(
            result.err == """
                apex-keychain: \(store): the passphrase file \(empty) holds an empty passphrase
                Run 'apex-keychain store list --help' for usage.

                """)
    }
}

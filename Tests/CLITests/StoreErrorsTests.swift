import ApexTestSupport
import Foundation
import Testing

/// What goes wrong before any item is touched: usage errors, and stores or key files that can't be used.
@Suite("errors and exit codes")
struct StoreErrorsTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    // MARK: Usage errors (64)

    @Test("an unknown option is a usage error naming it, without what follows '='")
    func unknownOption() async throws {
        let result = try await sandbox.run(["store", "get", "--store", "s.db", "--frobnicate=x", "k"])
        #expect(result.status == 64)
        #expect(result.out == "")
        #expect(
            result.err == """
                apex-keychain: unknown option '--frobnicate'
                Run 'apex-keychain store get --help' for usage.

                """)
    }

    @Test("a missing KEY is a usage error")
    func missingKey() async throws {
        let result = try await sandbox.run(["store", "get", "--store", "s.db"])
        #expect(result.status == 64)
        #expect(
            result.err == """
                apex-keychain: missing expected argument '<key>'
                Run 'apex-keychain store get --help' for usage.

                """)
    }

    @Test("a missing --store is a usage error")
    func missingStore() async throws {
        let result = try await sandbox.run(["store", "remove", "k"])
        #expect(result.status == 64)
        #expect(
            result.err == """
                apex-keychain: missing required option '--store <store>'
                Run 'apex-keychain store remove --help' for usage.

                """)
    }

    @Test("an unknown --accessible value is a usage error listing the accepted values")
    func badAccessible() async throws {
        let store = try await sandbox.initStore()
        let result = try await sandbox.run(
            ["store", "set", "--store", store, "--accessible", "sometimes", "k"], stdin: Data("v".utf8))
        #expect(result.status == 64)
        #expect(
            result.err == """
                apex-keychain: invalid value 'sometimes' for '--accessible <accessible>'; expected one of: \
                afterFirstUnlock, afterFirstUnlockThisDeviceOnly, whenUnlocked, whenUnlockedThisDeviceOnly, \
                whenPasscodeSetThisDeviceOnly
                Run 'apex-keychain store set --help' for usage.

                """)
        let list = try await sandbox.run(["store", "list", "--store", store])
        #expect(list.out == "")
    }

    @Test(
        "unknown commands are usage errors pointing to the right help, without repeating the word; no subcommand prints the help"
    )
    func unknownCommand() async throws {
        let store = try await sandbox.run(["store", "frob"])
        #expect(store.status == 64)
        #expect(
            store.err == """
                apex-keychain: unknown command; expected one of: init, list, get, set, info, remove, clear
                Run 'apex-keychain store --help' for usage.

                """)
        let root = try await sandbox.run(["migrate-everything"])
        #expect(root.status == 64)
        #expect(
            root.err == """
                apex-keychain: unknown command; expected one of: inspect, migrate, store, version
                Run 'apex-keychain --help' for usage.

                """)
        // With no subcommand at all, the help is printed (swift-argument-parser's convention).
        let none = try await sandbox.run([])
        #expect(none.status == 0)
        #expect(none.out.hasPrefix("OVERVIEW: "))
    }

    @Test("--key-file and --passphrase-file together are a usage error")
    func keyFileAndPassphrase() async throws {
        let result = try await sandbox.run(
            ["store", "list", "--store", "s.db", "--key-file", "a", "--passphrase-file", "b"])
        #expect(result.status == 64)
        #expect(result.err.hasPrefix("apex-keychain: '--key-file' and '--passphrase-file' can't be used together\n"))
    }

    // MARK: Stores that can't be used

    @Test("a missing store exits 66 naming it")
    func missingStoreFile() async throws {
        let store = sandbox.path("absent.db")
        let result = try await sandbox.run(["store", "get", "--store", store, "k"])
        #expect(result.status == 66)
        #expect(result.out == "")
        #expect(result.err == "apex-keychain: \(store): no store here (create one with 'store init')\n")
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test("a file of random bytes is not a store: exit 65 naming it, and it is left as it was")
    func randomBytes() async throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let store = try sandbox.write("random.db", bytes)
        let result = try await sandbox.run(["store", "list", "--store", store])
        #expect(result.status == 65)
        #expect(result.err == "apex-keychain: \(store): not a store: the file is not a SQLite database\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == bytes)
    }

    @Test("a SQLite database of another schema is not a store (65)")
    func otherSQLite() async throws {
        let store = sandbox.path("other.db")
        try RawDatabase.create(
            store, "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('x');")
        let result = try await sandbox.run(["store", "get", "--store", store, "k"])
        #expect(result.status == 65)
        #expect(result.err == "apex-keychain: \(store): not a store: a SQLite database without the store's tables\n")
    }

    @Test("a store of a newer version is refused (65)")
    func newerVersion() async throws {
        let store = try await sandbox.initStore()
        try RawDatabase(path: store).execute("PRAGMA user_version = 99;")
        let result = try await sandbox.run(["store", "list", "--store", store])
        #expect(result.status == 65)
        #expect(result.err.hasPrefix("apex-keychain: \(store): the store has schema version 99"))
    }

    // MARK: Key files (77; 66 when there is none)

    @Test("a key file readable by others is refused (77) with a message saying to chmod 600")
    func keyFileReadableByOthers() async throws {
        let store = try await sandbox.initStore()
        let keyFile = store + ".key"
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyFile)
        let result = try await sandbox.run(["store", "list", "--store", store])
        #expect(result.status == 77)
        #expect(
            result.err == """
                apex-keychain: \(store): \(keyFile): the key file is accessible by others (mode 644); run: chmod \
                600 \(keyFile)

                """)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile)
        #expect(try await sandbox.run(["store", "list", "--store", store]).status == 0)
    }

    @Test("another store's key file is refused (77); --key-file names the right one")
    func wrongKeyFile() async throws {
        let store = try await sandbox.initStore("a.db")
        let other = try await sandbox.initStore("b.db")
        try await sandbox.set(store, "k", "v")
        let result = try await sandbox.run(["store", "get", "--store", store, "--key-file", other + ".key", "k"])
        #expect(result.status == 77)
        #expect(result.err == "apex-keychain: \(store): the key file \(other).key does not open this store\n")
        try FileManager.default.moveItem(atPath: store + ".key", toPath: sandbox.path("moved.key"))
        let moved = try await sandbox.run([
            "store", "get", "--store", store, "--key-file", sandbox.path("moved.key"), "k",
        ])
        #expect(moved.out == "v")
    }

    @Test("a missing key file is an input that does not exist (66, as a passphrase file's), named")
    func missingKeyFile() async throws {
        let store = try await sandbox.initStore()
        try FileManager.default.removeItem(atPath: store + ".key")
        let result = try await sandbox.run(["store", "list", "--store", store])
        #expect(result.status == 66)
        #expect(
            result.err
                == "apex-keychain: \(store): \(store).key: the key file can't be read: No such file or directory\n")
        let named = try await sandbox.run(["store", "list", "--store", store, "--key-file", sandbox.path("none.key")])
        #expect(named.status == 66)
    }

    @Test("--key-file naming a pipe is no key file (66), refused at once where reading it waited for a writer")
    func keyFileIsAPipe() async throws {
        let store = try await sandbox.initStore()
        let pipe = sandbox.path("key.pipe")
        #expect(mkfifo(pipe, 0o600) == 0)
        let result = try await sandbox.run(["store", "list", "--store", store, "--key-file", pipe])
        #expect(result.status == 66)
        #expect(result.err == "apex-keychain: \(store): \(pipe): a pipe, socket or device, not a key file\n")
    }

    @Test("--key-file naming a folder is no key file (66), not a key file 'accessible by others'")
    func keyFileIsAFolder() async throws {
        let store = try await sandbox.initStore()
        let folder = sandbox.path("keys")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let result = try await sandbox.run(["store", "list", "--store", store, "--key-file", folder])
        #expect(result.status == 66)
        #expect(result.err == "apex-keychain: \(store): \(folder): a folder, not a key file\n")
    }
}

/// Issue 28: a folder or a FIFO given as `--store` exited 74 (an I/O error), where docs/CLI.md says 66: it is no
/// store file. The store is looked at before SQLite opens it, so a pipe is refused at once, never read.
@Suite("a --store that is not a regular file")
struct StoreNotARegularFileTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// The commands that open a store, with `--store` appended.
    static let commands: [[String]] = [
        ["store", "list"], ["store", "info", "k"], ["store", "get", "k"],
        ["migrate", sample("react-native-keychain/ios/keychain.plist"), "--bundle-id", "com.example.sampleapp"],
    ]

    @Test("a folder, a pipe or a device as --store is no store (66), named with what it is, for every command")
    func notARegularFile() async throws {
        let folder = sandbox.path("store.db")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let pipe = sandbox.path("store.pipe")
        #expect(mkfifo(pipe, 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: sandbox.path("link.db"), withDestinationPath: folder)
        let cases = [
            (folder, "a folder"), (sandbox.path("link.db"), "a folder"), (pipe, "a pipe"), ("/dev/null", "a device"),
        ]
        for (store, what) in cases {
            for command in Self.commands {
                let result = try await sandbox.run(command + ["--store", store])
                #expect(result.status == 66, "\(command) \(store): \(result.err)")
                #expect(result.out == "")
                #expect(
                    result.err == "apex-keychain: \(store): it is \(what), not a store file\n",
                    "\(command) \(store)")
            }
        }
        // Nothing was made beside them.
        #expect(!FileManager.default.fileExists(atPath: pipe + "-wal"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }
}

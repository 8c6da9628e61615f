import Foundation
import Testing

/// `store init`: what it creates, what it prints, and what it refuses.
@Suite("store init")
struct StoreInitTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int)
    }

    @Test("creates the store and its key file, both private (0600), and prints a summary")
    func createsStoreAndKeyFile() async throws {
        let store = sandbox.path("store.db")
        let result = try await sandbox.run(["store", "init", "--store", store])
        #expect(result.status == 0)
        #expect(result.err == "")
        #expect(result.out == "store:    \(store)\ndevice:   linux\nservice:  apex-keychain\nkey file: \(store).key\n")
        #expect(try mode(store) == 0o600)
        #expect(try mode(store + ".key") == 0o600)
        let list = try await sandbox.run(["store", "list", "--store", store])
        #expect(list.status == 0)
        #expect(list.out == "")
    }

    @Test("--device records the profile, whose default service the item commands use")
    func deviceProfile() async throws {
        let store = sandbox.path("phone.db")
        let result = try await sandbox.run(["store", "init", "--store", store, "--device", "ios"])
        #expect(result.status == 0)
        #expect(result.out == "store:    \(store)\ndevice:   ios\nservice:  com.example.app\nkey file: \(store).key\n")
        try await sandbox.set(store, "k", "v")
        let all = try await sandbox.run(["store", "list", "--store", store, "--all-services"])
        #expect(all.out == "com.example.app\tk\n")
    }

    @Test("refuses a store that exists (73) and leaves it as it was")
    func refusesExistingStore() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "k", "kept")
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let keyBefore = try Data(contentsOf: URL(fileURLWithPath: store + ".key"))
        let result = try await sandbox.run(["store", "init", "--store", store])
        #expect(result.status == 73)
        #expect(result.out == "")
        #expect(result.err == "apex-keychain: \(store): a file already exists there\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: store + ".key")) == keyBefore)
        let get = try await sandbox.run(["store", "get", "--store", store, "k"])
        #expect(get.out == "kept")
    }

    @Test("refuses a folder that does not exist (73), naming the store and the cause")
    func refusesMissingFolder() async throws {
        let store = sandbox.path("missing/store.db")
        let result = try await sandbox.run(["store", "init", "--store", store])
        #expect(result.status == 73)
        // It names the folder, not the key file that could not be made in it.
        #expect(result.err == "apex-keychain: \(store): the folder \(sandbox.path("missing")) does not exist\n")
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test("refuses an unknown device profile (64), listing the profiles")
    func unknownDevice() async throws {
        let store = sandbox.path("store.db")
        let result = try await sandbox.run(["store", "init", "--store", store, "--device", "windows"])
        #expect(result.status == 64)
        #expect(
            result.err == """
                apex-keychain: invalid value 'windows' for '--device <profile>'; expected one of: ios, \
                ios-no-biometrics, ios-no-passcode, android, android-10, linux
                Run 'apex-keychain store init --help' for usage.

                """)
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test("refuses an empty passphrase file as a usage error (64) and creates nothing")
    func emptyPassphrase() async throws {
        let store = sandbox.path("store.db")
        let file = try sandbox.writeSecret("passphrase", "\n")
        let result = try await sandbox.run(["store", "init", "--store", store, "--passphrase-file", file])
        #expect(result.status == 64)
        #expect(
            result.err == """
                apex-keychain: \(store): the passphrase file \(file) holds an empty passphrase
                Run 'apex-keychain store init --help' for usage.

                """)
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test("a missing passphrase file is a missing input (66)")
    func missingPassphraseFile() async throws {
        let store = sandbox.path("store.db")
        let file = sandbox.path("nowhere")
        let result = try await sandbox.run(["store", "init", "--store", store, "--passphrase-file", file])
        #expect(result.status == 66)
        #expect(
            result.err == "apex-keychain: \(store): can't read the passphrase file \(file): No such file or directory\n"
        )
        #expect(!FileManager.default.fileExists(atPath: store))
    }
}

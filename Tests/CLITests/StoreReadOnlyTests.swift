import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Stores the tool can't write: in a read-only folder, or a read-only file. They are read; a write fails (74)
/// saying why, and changes nothing. The tool runs as an unprivileged user (`nobody`, through `setpriv`) when the
/// tests run as root, whom permissions don't stop.
@Suite("read-only and damaged stores")
struct StoreReadOnlyTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let nobody: UInt32 = 65534
    static let setpriv = "/usr/bin/setpriv"

    /// How to run the tool without the right to write what it doesn't own: as `nobody` when root.
    static let unprivileged: [String]? = {
        guard geteuid() == 0 else { return [] }
        guard FileManager.default.isExecutableFile(atPath: setpriv) else { return nil }
        return [setpriv, "--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups", "--"]
    }()

    /// Whether `nobody` can run the built tool here (its folders may be closed to others).
    static let canRunUnprivileged: Bool = {
        guard let launcher = unprivileged, let binary = CLIBinary.url else { return false }
        guard let program = launcher.first else { return true }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = Array(launcher.dropFirst()) + [binary.path, "--version"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    /// A key-file store `ro/store.db` holding `k` = "secret-value", given to the unprivileged user when root.
    func makeStore() async throws -> (folder: String, store: String) {
        let folder = sandbox.path("ro")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let store = try await sandbox.initStore("ro/store.db")
        try await sandbox.set(store, "k", "secret-value")
        if geteuid() == 0 {
            for path in [folder, store, store + ".key"] { try #require(chown(path, Self.nobody, Self.nobody) == 0) }
        }
        return (folder, store)
    }

    /// Every file in `folder` with its contents.
    func snapshot(_ folder: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: folder).appendingPathComponent(name))
        }
        return files
    }

    /// Runs the tool as the unprivileged user.
    func runUnprivileged(_ arguments: [String], stdin: Data = Data()) async throws -> CLIResult {
        try await sandbox.run(arguments, stdin: stdin, launcher: Self.unprivileged ?? [])
    }

    /// Reads the store, then tries to write it: the write exits 74 saying the store is read-only.
    func expectReadOnly(_ store: String) async throws {
        let list = try await runUnprivileged(["store", "list", "--store", store])
        #expect(list.status == 0, "\(list.err)")
        #expect(list.out == "k\n")
        let get = try await runUnprivileged(["store", "get", "--store", store, "k"])
        #expect(get.status == 0, "\(get.err)")
        #expect(get.out == "secret-value")
        #expect(try await runUnprivileged(["store", "info", "--store", store, "k"]).status == 0)
        for write in [["set", "k"], ["remove", "k"], ["clear"]] {
            let result = try await runUnprivileged(
                ["store", write[0], "--store", store] + write.dropFirst(), stdin: Data("new-secret".utf8))
            #expect(result.status == 74, "\(write[0]): \(result.err)")
            #expect(result.out == "")
            #expect(
                result.err
                    == "apex-keychain: \(store): INTERNAL: service 'apex-keychain': database error: \(store): the "
                    + "store is open read-only (this process can't write the store file or its folder); nothing was written\n",
                "\(write[0])")
        }
    }

    @Test(
        "a store in a read-only folder is read; set, remove and clear exit 74 saying why, and nothing changes",
        .enabled(if: canRunUnprivileged, "needs to run the built tool as an unprivileged user (nobody)"))
    func readOnlyFolder() async throws {
        let (folder, store) = try await makeStore()
        let before = try snapshot(folder)
        #expect(Set(before.keys) == ["store.db", "store.db.key"])
        try #require(chmod(folder, 0o555) == 0)
        defer { _ = chmod(folder, 0o755) }
        try await expectReadOnly(store)
        #expect(try snapshot(folder) == before)
    }

    @Test(
        "a read-only store file is read; a write exits 74 saying why, and the file is unchanged",
        .enabled(if: canRunUnprivileged, "needs to run the built tool as an unprivileged user (nobody)"))
    func readOnlyFile() async throws {
        let (_, store) = try await makeStore()
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        try #require(chmod(store, 0o400) == 0)
        try await expectReadOnly(store)
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }

    @Test("a truncated store exits 65 saying it is damaged or truncated, not that it is not SQLite, and is kept")
    func truncatedStore() async throws {
        let store = try await sandbox.initStore()
        for index in 0..<20 { try await sandbox.set(store, "k\(index)", Data(repeating: UInt8(index), count: 4000)) }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: store))
        let truncated = bytes.prefix(bytes.count / 2)
        try truncated.write(to: URL(fileURLWithPath: store))
        let result = try await sandbox.run(["store", "list", "--store", store])
        #expect(result.status == 65)
        #expect(result.out == "")
        #expect(
            result.err == "apex-keychain: \(store): the store is damaged or truncated (SQLite: database disk image is "
                + "malformed); don't delete it: restore it from a backup, or keep it for recovery\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == truncated)
    }
}

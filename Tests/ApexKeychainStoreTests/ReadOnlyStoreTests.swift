import ApexKeychain
import ApexKeychainStore
import ApexTestSupport
import Foundation
import Testing

/// Stores this process can't write: in a read-only folder, or a read-only file. The tests run as root, whom
/// permissions don't stop, so the folder or file is made immutable (`chattr +i`), which stops root too.
@Suite(
    "Read-only stores", .serialized,
    .enabled(if: ImmutableFiles.foldersAvailable, "needs chattr +i on a folder: root, on a file system with the flag"))
struct ReadOnlyStoreTests {
    let scratch: ScratchFolder

    init() throws { scratch = try ScratchFolder("store-test") }

    /// The contents of every file in `folder`, by name.
    func snapshot(_ folder: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            files[name] = try Data(contentsOf: folder.appendingPathComponent(name))
        }
        return files
    }

    /// A store in `folder` holding two items, closed.
    func makeStore(in folder: String) async throws -> TestStore {
        let store = try TestStore(scratch, folder: folder)
        let kc = try keychain(try store.create())
        try await kc.setItem("a", "secret-of-a", SetOptions(label: "label of a"))
        try await kc.setCredentials(Credentials(username: "alice", password: "password-of-alice"))
        return store
    }

    /// Expects a write through `kc` to fail, saying the store is read-only, without a value in the message.
    func expectWriteRefused(_ kc: Keychain, sourceLocation: SourceLocation = #_sourceLocation) async {
        let error = await #expect(throws: KeychainError.self, sourceLocation: sourceLocation) {
            try await kc.setItem("a", "new-secret")
        }
        #expect(error?.code == .INTERNAL, sourceLocation: sourceLocation)
        #expect(
            error?.message.contains("the store is open read-only") == true, "\(error?.message ?? "")",
            sourceLocation: sourceLocation)
        #expect(error?.message.contains("new-secret") == false, sourceLocation: sourceLocation)
    }

    @Test(
        "a store in a read-only folder opens read-only: its items read back, and a write fails saying why, changing nothing"
    )
    func readOnlyFolder() async throws {
        // Characters that mean something in a SQLite URI, in the path.
        let store = try await makeStore(in: "read only ?#%20")
        let folder = store.url.deletingLastPathComponent()
        let before = try snapshot(folder)
        #expect(Set(before.keys) == ["store.db", "store.db.key"], "the store was closed cleanly")
        try #require(ImmutableFiles.chattr("+i", folder.path))
        defer { ImmutableFiles.chattr("-i", folder.path) }
        do {
            let db = try store.open()
            #expect(db.isReadOnly)
            let kc = try keychain(db)
            #expect(try await kc.getItem("a") == "secret-of-a")
            #expect(try await kc.getCredentials() == Credentials(username: "alice", password: "password-of-alice"))
            #expect(try await kc.getAllKeys() == ["a", "credentials"])
            await expectWriteRefused(kc)
            #expect(try await kc.getItem("a") == "secret-of-a")
        }
        ImmutableFiles.chattr("-i", folder.path)
        #expect(try snapshot(folder) == before, "nothing in the folder changed")
        let kc = try keychain(try store.open())
        #expect(try await kc.getItem("a") == "secret-of-a")
    }

    @Test("a read-only store file in a writable folder opens read-only, and a write fails saying why")
    func readOnlyFile() async throws {
        let store = try await makeStore(in: "file")
        let before = try Data(contentsOf: store.url)
        try #require(ImmutableFiles.chattr("+i", store.url.path))
        defer { ImmutableFiles.chattr("-i", store.url.path) }
        do {
            let db = try store.open()
            #expect(db.isReadOnly)
            let kc = try keychain(db)
            #expect(try await kc.getItem("a") == "secret-of-a")
            await expectWriteRefused(kc)
        }
        ImmutableFiles.chattr("-i", store.url.path)
        #expect(try Data(contentsOf: store.url) == before)
    }

    @Test("a read-only folder whose store has changes in its -wal file is refused as unreadable, naming the -wal file")
    func readOnlyFolderWithWAL() async throws {
        let store = try await makeStore(in: "live")
        let copy = try TestStore(scratch, folder: "copy")
        do {
            // While a connection is open, the last writes are in the WAL only: copy the store then.
            let kc = try keychain(try store.open())
            try await kc.setItem("b", "secret-of-b")
            for (from, to) in [
                (store.url.path, copy.url.path), (store.url.path + "-wal", copy.url.path + "-wal"),
                (store.keyFile.path, copy.keyFile.path),
            ] {
                try FileManager.default.copyItem(atPath: from, toPath: to)
            }
        }
        let folder = copy.url.deletingLastPathComponent()
        try #require(ImmutableFiles.chattr("+i", folder.path))
        defer { ImmutableFiles.chattr("-i", folder.path) }
        let error = storeError { () throws(StoreError) in try copy.open() }
        #expect(error?.kind == .unreadable)
        #expect(error?.path == copy.url.path)
        #expect(error?.message.contains("the store's folder is read-only") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(copy.url.path + "-wal") == true, "\(error?.message ?? "")")
        ImmutableFiles.chattr("-i", folder.path)
        #expect(try await keychain(try copy.open()).getItem("b") == "secret-of-b", "the -wal file held the last write")
    }

    @Test("a version 1 store in a read-only folder is read as it stands, without being migrated")
    func readOnlyVersion1() async throws {
        let folder = scratch.file("v1")
        let files = try SchemaMigrationTests.copyFixture(to: folder)
        let before = try snapshot(folder)
        try #require(ImmutableFiles.chattr("+i", folder.path))
        defer { ImmutableFiles.chattr("-i", folder.path) }
        do {
            let db = try SQLiteKeychainDatabase(opening: files.url, key: .keyFile(files.keyFile))
            #expect(db.isReadOnly)
            let kc = try keychain(db, service: SchemaMigrationTests.service)
            #expect(try await kc.getItem("token") == "old-secret-value")
            #expect(try await kc.getCredentials() == Credentials(username: "alice", password: "old-password-hunter2"))
        }
        ImmutableFiles.chattr("-i", folder.path)
        #expect(try snapshot(folder) == before)
        #expect(try RawDatabase(files.url).integer("PRAGMA user_version") == 1)
    }
}

import ApexKeychain
import ApexKeychainStore
import ApexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What an interrupted `create` leaves, and how the next `create` of the same store deals with it. A creation
/// writes `.NAME.creating-PID-UUID` temporaries, links the key file into place, then the store.
@Suite("Interrupted creation")
struct InterruptedCreationTests {
    let scratch: ScratchFolder
    let store: TestStore

    init() throws {
        scratch = try ScratchFolder("store-test")
        store = TestStore(scratch)
    }

    /// A process id that no process has (above the kernel's limit of 2^22): the creation it names is over.
    static let deadPID = 2_147_483_646

    func temporaryName(_ name: String, pid: Int = deadPID) -> String { ".\(name).creating-\(pid)-\(UUID().uuidString)" }

    /// A complete store at `temporary`, as a creation killed before its link into place leaves it. It is made in a
    /// folder of its own and copied: the file a creation links into place is the one it locked, and a process this
    /// test process spawns meanwhile (other tests run beside this one) holds that lock until its exec. A copy is a
    /// new file, whose lock no one holds.
    func leftStore(at temporary: URL, key: StoreKeySource) throws {
        let folder = scratch.file(".made-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let made = folder.appendingPathComponent(temporary.lastPathComponent)
        do { _ = try SQLiteKeychainDatabase.create(at: made, key: key, device: .ios) }
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: made.path + suffix) {
            try FileManager.default.copyItem(atPath: made.path + suffix, toPath: temporary.path + suffix)
        }
    }

    /// The names in the folder once the store is closed.
    func namesAfterCreating() throws -> [String] {
        do { _ = try store.create() }
        return try scratch.names()
    }

    @Test("temporaries of creations that are over don't stop a new creation, and are removed")
    func deadTemporariesRemoved() async throws {
        let storeTemporary = temporaryName("store.db")
        try Data("SQLite format 3\0 and then nothing".utf8).write(to: scratch.file(storeTemporary))
        try Data("a WAL".utf8).write(to: scratch.file(storeTemporary + "-wal"))
        try Data("apex-keychain key v1\nAAAA\n".utf8).write(to: scratch.file(temporaryName("store.db.key")))
        // The temporaries of an earlier version: the same names.
        try Data().write(to: scratch.file(temporaryName("store.db", pid: 1_000_000_000)))
        #expect(try namesAfterCreating() == ["store.db", "store.db.key"])
        #expect(try await keychain(store.open()).getAllKeys() == [])
    }

    @Test("a key file left by a creation killed between its two links is removed: it unwraps that creation's store")
    func keyFileOfKilledCreationRemoved() async throws {
        // What the killed creation left: its complete store under its temporary name, and its key file in place.
        let temporary = scratch.file(temporaryName("store.db"))
        try leftStore(at: temporary, key: .keyFile(store.keyFile))
        let leftKey = try Data(contentsOf: store.keyFile)
        #expect(Set(try scratch.names()) == [temporary.lastPathComponent, "store.db.key"])

        #expect(try namesAfterCreating() == ["store.db", "store.db.key"])
        #expect(try Data(contentsOf: store.keyFile) != leftKey, "a new key file")
        let kc = try keychain(try store.open())
        try await kc.setItem("k", "v")
        #expect(try await kc.getItem("k") == "v")
    }

    @Test("a key file with no store beside it that is not shown to be a leftover is refused, naming it and the fix")
    func unknownKeyFileRefused() throws {
        // Another store's key file, as if that store had been moved away; and a dead creation's store that this
        // key file does not unwrap.
        let other = try TestStore(scratch, folder: "other")
        do { _ = try other.create() }
        try FileManager.default.copyItem(at: other.keyFile, to: store.keyFile)
        let stranger = scratch.file(temporaryName("store.db"))
        try leftStore(at: stranger, key: .passphrase(Data("p".utf8)))
        let key = try Data(contentsOf: store.keyFile)

        let error = storeError { () throws(StoreError) in try store.create() }
        #expect(error?.kind == .cannotCreate)
        #expect(error?.path == store.keyFile.path)
        #expect(error?.message.contains("rm '\(store.keyFile.path)'") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("store init") == true)
        #expect(try Data(contentsOf: store.keyFile) == key, "the key file is kept")
        #expect(
            try scratch.names() == ["other", "store.db.key"], "the dead creation's store is removed, no store is made")
        // The key file still opens its store.
        #expect(throws: Never.self) { _ = try SQLiteKeychainDatabase(opening: other.url, key: .keyFile(store.keyFile)) }
    }

    @Test("the temporaries of a creation still running are left alone: its process lives, or it holds their lock")
    func runningTemporariesKept() throws {
        let mine = temporaryName("store.db", pid: Int(getpid()))
        try Data().write(to: scratch.file(mine))
        let locked = temporaryName("store.db")
        try Data().write(to: scratch.file(locked))
        let fd = open(scratch.file(locked).path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(flock(fd, LOCK_EX) == 0)
        #expect(try namesAfterCreating() == [locked, mine, "store.db", "store.db.key"].sorted())
    }
}

import ApexKeychain
import ApexKeychainStore
import ApexTestSupport
import Foundation
import Testing

/// A store of schema version 1, written by the version before the label and dates were bound to the values
/// (`Fixtures/store-v1.db`, made with `apex-keychain store init --device ios` and `store set` of that version:
/// `token` = "old-secret-value" labelled "old label", credentials alice / "old-password-hunter2", and
/// `guarded` = "guarded-old" with biometryAny, all in service com.example.app).
@Suite("Schema version 1 stores")
struct SchemaMigrationTests {
    let scratch: ScratchFolder
    let store: TestStore

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let service = "com.example.app"

    /// Copies the version 1 store and its key file (0600) into `folder` of the scratch directory.
    static func copyFixture(to folder: URL) throws -> TestStore.Files {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("store.db")
        let keyFile = SQLiteKeychainDatabase.defaultKeyFile(for: url)
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("store-v1.db"), to: url)
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("store-v1.db.key"), to: keyFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile.path)
        return TestStore.Files(url: url, keyFile: keyFile)
    }

    init() throws {
        scratch = try ScratchFolder("store-test")
        store = TestStore(scratch)
        _ = try Self.copyFixture(to: scratch.url)
    }

    @Test("a version 1 store opens, is migrated to version 2, and its items read back, each under its old binding")
    func opensAndMigrates() async throws {
        #expect(try store.raw().integer("PRAGMA user_version") == 1)
        let db = try store.open()
        #expect(db.isReadOnly == false)
        #expect(try store.raw().integer("PRAGMA user_version") == 2)
        #expect(try store.raw().text("SELECT group_concat(seal) FROM items") == "1,1,1")
        let kc = try keychain(db, service: Self.service)
        #expect(try await kc.getItem("token") == "old-secret-value")
        #expect(try await kc.getItemInfo("token")?.label == "old label")
        #expect(try await kc.getCredentials() == Credentials(username: "alice", password: "old-password-hunter2"))
        #expect(try await kc.getItem("guarded") == "guarded-old")
        #expect(try store.integrityCheck() == "ok")
    }

    @Test("the next write of a version 1 row binds its label: edited in the file afterwards, the value does not open")
    func nextWriteBindsLabel() async throws {
        do {
            let kc = try keychain(try store.open(), service: Self.service)
            try await kc.setCredentials(Credentials(username: "alice", password: "new-password"))
        }
        #expect(try store.raw().text("SELECT seal FROM items WHERE acct = 'credentials'") == "2")
        #expect(
            try store.raw().text("SELECT seal FROM items WHERE acct = 'token'") == "1",
            "rows not written keep binding 1")
        let raw = try store.raw()
        try raw.execute("UPDATE items SET labl = 'mallory' WHERE acct = 'credentials'")
        #expect(raw.changes == 1)
        let kc = try keychain(try store.open(), service: Self.service)
        let error = await #expect(throws: KeychainError.self) { _ = try await kc.getCredentials() }
        #expect(error?.code == .INTERNAL)
        #expect(error?.message.contains("damaged") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("new-password") == false)
        #expect(try await kc.getItem("token") == "old-secret-value")
    }

    @Test("a version 1 row whose binding was set to 2 in the file does not open")
    func bindingRaised() async throws {
        _ = try store.open()
        let raw = try store.raw()
        try raw.execute("UPDATE items SET seal = 2 WHERE acct = 'token'")
        #expect(raw.changes == 1)
        let kc = try keychain(try store.open(), service: Self.service)
        let error = await #expect(throws: KeychainError.self) { _ = try await kc.getItem("token") }
        #expect(error?.code == .INTERNAL)
        #expect(try await kc.getItem("guarded") == "guarded-old")
    }
}

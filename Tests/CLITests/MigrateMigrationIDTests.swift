import Foundation
import Testing

/// `migrate --migration-id` names the migration whose records the run keeps and reads, as an app's
/// `Migration(id:)` does: a run under the id of the migration that wrote the items finds its own
/// items with access control `exists`, where another id can't compare them without a prompt (`conflict`).
@Suite("migrate --migration-id")
struct MigrateMigrationIDTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let plist = sample("react-native-keychain/ios/keychain.plist")

    /// The report's summary of a `migrate --format json` run.
    func summary(_ arguments: [String]) async throws -> (status: Int32, summary: [String: Int]) {
        let result = try await sandbox.run(["migrate", Self.plist, "--format", "json"] + arguments)
        let report = try #require(JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any])
        return (result.status, try #require(report["summary"] as? [String: Int]))
    }

    /// A new phone store whose bundle id is the sample's.
    func newStore() async throws -> String {
        let store = sandbox.path("store.db")
        let created = try await sandbox.run(
            ["store", "init", "--store", store, "--device", "ios", "--bundle-id", "com.example.sampleapp"])
        try #require(created.status == 0, "\(created.err)")
        return store
    }

    @Test(
        "a run under the id that wrote the items finds them all; under another id, those with access control conflict")
    func sameIDFindsItsItems() async throws {
        let store = try await newStore()
        let first = try await summary(["--store", store, "--migration-id", "legacy-v1"])
        try #require(first.status == 0)
        #expect(first.summary["verified"] == 10)

        let other = try await summary(["--store", store])
        #expect(other.status == 1)
        #expect(other.summary["conflict"] == 4 && other.summary["exists"] == 6, "\(other.summary)")

        let same = try await summary(["--store", store, "--migration-id", "legacy-v1"])
        #expect(same.status == 0)
        #expect(same.summary["exists"] == 10 && same.summary["conflict"] == 0, "\(same.summary)")
    }

    @Test(
        "ids are compared byte for byte: a canonically equivalent spelling is another migration, with records of its own"
    )
    func idsByBytes() async throws {
        let store = try await newStore()
        let composed = try await summary(["--store", store, "--migration-id", "caf\u{E9}"])
        try #require(composed.status == 0)
        // The same text in other code points: none of the records above are its own.
        let decomposed = try await summary(["--store", store, "--migration-id", "cafe\u{301}", "--dry-run"])
        #expect(decomposed.summary["conflict"] == 4 && decomposed.summary["exists"] == 6, "\(decomposed.summary)")
        // Its first record is its first, not numbered after the other migration's.
        let other = try await sandbox.run(
            [
                "migrate", sample("expo-secure-store/ios/keychain.plist"), "--store", store, "--migration-id",
                "cafe\u{301}", "--quiet",
            ])
        try #require(other.status == 0, "\(other.err)")
        let records = try await sandbox.run(
            ["store", "list", "--store", store, "--service", "apex-keychain.migration"])
        let keys = records.out.split(separator: "\n").map(String.init)
        #expect(keys.contains { $0.utf8.elementsEqual("entries:cafe\u{301}:0000000001".utf8) }, "\(keys)")
        #expect(keys.contains { $0.utf8.elementsEqual("entries:caf\u{E9}:0000000001".utf8) }, "\(keys)")
    }

    @Test("an empty id, or one too long for the ledger's keys, is a usage error")
    func badIDs() async throws {
        // (An argument can't hold U+0000: the command line ends it there.)
        for id in ["", String(repeating: "x", count: 216)] {
            let result = try await sandbox.run(["migrate", Self.plist, "--migration-id", id])
            #expect(result.status == 64)
            #expect(result.err.contains("'--migration-id': the migration id "), "\(result.err)")
            #expect(result.err.contains("a migration id must be 1 to 215 characters"), "\(result.err)")
        }
        let longest = try await sandbox.run(
            ["migrate", Self.plist, "--migration-id", String(repeating: "x", count: 215), "--quiet"])
        #expect(longest.status == 0, "\(longest.err)")
    }
}

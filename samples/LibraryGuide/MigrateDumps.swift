// docs/LIBRARY.md, "A start-up migration into the store": from `import` down, this file is
// the guide's block, line for line (LibraryGuideTests compares them). Change both together.
import ApexDumps
import ApexKeychainStore
import ApexMigration
import ExpoSecureStoreImporter
import ReactNativeKeychainImporter

/// Migrates the dumps found under `paths` (files or folders) into the store, once. Returns the report of the run,
/// or nil when an earlier call completed the migration.
func migrateDumps(at paths: [String], into store: SQLiteKeychainDatabase) async throws -> MigrationReport? {
    let dumps = try DumpReader.scan(paths: paths).dumps
    // One migration of a store at a time, as `apex-keychain migrate --store` does; released when `lock` goes.
    let lock = try StoreLock(store: store.url, waiting: {})
    defer { withExtendedLifetime(lock) {} }
    let migration = Migration(
        id: MigrationID("dumps-v1")!,
        importers: [ReactNativeKeychainImporter(), ExpoSecureStoreImporter()],
        source: .dumps(dumps),
        target: MigrationTarget(database: store, device: store.makeDevice()),
        policy: MigrationPolicy(
            importOptions: ImportOptions(bundleID: "com.example.app"),
            // A store with a key file has no passcode, and never will: don't keep retrying what needs one.
            giveUp: .init(reasons: [.keychain(.PASSCODE_NOT_SET)])))
    // Told after each batch of writes: how many of the items to write are done.
    switch try await migration.runIfNeeded(progress: { print("migrated \($0.done) of \($0.total) items") }) {
    case .alreadyComplete: return nil
    case .ran(let report): return report
    }
}

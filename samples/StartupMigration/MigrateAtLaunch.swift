// The start-up migration, as README.md's "Migrating at app start-up" shows it: from `import` down, this file is
// that block, line for line. Change both together.
import ApexKeychain
import ApexMigration
import ExpoSecureStoreImporter

/// Moves what the old library left in the app's keychain into the package, once. Call it at every launch, before
/// the first keychain read: once a run has completed, it costs one lookup. `database` and `device` are the
/// keychain the app uses from now on, which also holds the old library's items. Returns a line for the app's log.
func migrateAtLaunch(database: any KeychainDatabase, device: any Device) async -> String {
    let migration = Migration(
        // Names this migration's records in the keychain: a later launch finds them under the same id.
        id: MigrationID("legacy-v1")!,
        // One importer per library the app used, in order of precedence: ReactNativeKeychainImporter(), …
        importers: [ExpoSecureStoreImporter()],
        source: .database(database, device: device),
        target: MigrationTarget(database: database, device: device),
        // Stops retrying after 10 launches, except items that wait for the user to set a passcode or enrol
        // biometrics (GiveUp.keepWaiting): a given-up item's secret stays behind in the old library.
        policy: MigrationPolicy(removeSource: true, giveUp: .init(afterRuns: 10)))
    do {
        switch try await migration.runIfNeeded() {
        case .alreadyComplete:
            return "already migrated"
        case .ran(let report):
            // Pending items are retried at the next launch, which plans and writes only them.
            if report.items.contains(where: { $0.state == .pending && $0.cause == .keychain(.PASSCODE_NOT_SET) }) {
                offerToSetAPasscode()
            }
            let s = report.summary
            return "migrated: \(s.verified) verified, \(s.failed) failed, \(s.conflict) conflicts, \(s.blocked) blocked"
        }
    } catch {
        // The run stopped: the app goes on without the keys not migrated yet (the old library's items stay where
        // they are), and the next launch runs again.
        switch error {
        case .tryLater(let why):
            // The keychain can't be read or written now: a background launch before the first unlock, or a locked
            // device. Nothing was written, removed or marked.
            return "try later: \(why)"
        case .conflicts(let count):
            // Thrown only with `MigrationPolicy(onConflict: .fail)`, which this policy doesn't set. Nothing was
            // written.
            return "not migrated: \(count) conflicting items"
        case .invalidPolicy(let why):
            // The migration can't run as written (no importer): each launch stops the same way until an update of
            // the app fixes it. Nothing was read or written.
            return "migration stopped: \(why)"
        case .source(let why):
            // The old items can't be read (a database fault). Nothing was removed.
            return "migration stopped: \(why)"
        case .target(let failure):
            // The keychain failed for another reason (a database fault, `failure.code`). An old item is removed
            // only once its copy has been read back, so nothing is lost.
            return "migration stopped: \(failure.code.rawValue)"
        case .restoringParkedItems(let why):
            // Old items an interrupted launch moved aside could not be put back yet: they stay aside, and the
            // next launch tries again.
            return "migration stopped: \(why)"
        case .importer(let problem):
            // An importer can't use what it found: nothing was migrated or removed. Each launch stops the same
            // way until an update of the app fixes the cause: report it.
            return "migration stopped: \(problem)"
        }
    }
}

/// The app's own screen that asks the user to set a passcode: the items that need one wait for it.
func offerToSetAPasscode() {}

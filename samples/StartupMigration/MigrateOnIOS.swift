import ApexKeychain
import ApexKeychainApple
import ApexMigration
import ExpoSecureStoreImporter

/// The start-up migration on an iPhone: the old library's items and the package's share one keychain, which
/// `Migration.onDevice` takes once. Every keychain call blocks its thread, so this runs off the main thread.
/// Returns a line for the app's log (counts only: never a value).
func migrateOnDevice(database: any KeychainDatabase, device: any Device) async -> String {
    let migration = Migration.onDevice(
        id: MigrationID("legacy-v1")!, importers: [ExpoSecureStoreImporter()], database: database, device: device,
        // Items the old library kept behind Face ID stay pending: a launch never prompts.
        policy: MigrationPolicy(removeSource: true))
    do {
        switch try await migration.runIfNeeded() {
        case .alreadyComplete:
            return "already migrated"
        case .ran(let report):
            return "migrated: \(report.summary.verified) verified, \(report.summary.blocked) blocked"
        }
    } catch .tryLater(let why) {
        // Protected data isn't available (a launch before the first unlock, or in the background while locked):
        // nothing was changed. Run again at the next launch, or on protectedDataDidBecomeAvailableNotification.
        return "try later: \(why)"
    } catch {
        return "migration stopped: \(error)"
    }
}

#if canImport(Security) && canImport(LocalAuthentication)
    /// From the `App`'s `init` or `application(_:didFinishLaunchingWithOptions:)`, on the main actor.
    @MainActor
    func startMigrationAtLaunch() {
        // The keychain-access-groups entitlement's groups, then <team id>.<bundle id>: an app can't read them.
        let platform = LocalAuthenticationFramework(accessGroups: ["ABCDE12345.com.example.app"])
        Task.detached(priority: .userInitiated) {
            do {
                let device = try LocalAuthenticationDevice(platform: platform)
                let database = SecItemKeychainDatabase(calls: SecItemFramework())
                print(await migrateOnDevice(database: database, device: device))
            } catch {
                print("no keychain: \(error)")
            }
        }
    }
#endif

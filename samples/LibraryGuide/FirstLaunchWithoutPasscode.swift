// docs/LIBRARY.md, "In an app's tests": from `import` down, this file is the guide's block, line for line
// (LibraryGuideTests compares them, and runs it with Swift Testing's `#expect` as `expect`). Change both together.
import ApexKeychain
import ApexMigration
import ReactNativeKeychainImporter

/// An app's test of its start-up migration: react-native-keychain's item that needs a passcode waits, pending,
/// while the device has none, and moves at the first launch after one is set.
func firstLaunchWithoutPasscode(expect: (Bool, String) -> Void) async throws {
    let database = InMemoryKeychainDatabase()
    let device = SimulatedDevice(passcodeSet: false)
    let seed = ReactNativeKeychainImporter.Seed(username: "sample-user", password: "sample-password", accessible: .akpu)
    try ReactNativeKeychainImporter.seed([seed], into: database, device: device)
    let migration = Migration.onDevice(
        id: MigrationID("legacy-v1")!, importers: [ReactNativeKeychainImporter()], database: database, device: device)

    guard case .ran(let first) = try await migration.runIfNeeded() else { return expect(false, "launch 1 runs") }
    expect(first.items.first?.state == .pending && !first.isComplete, "pending without a passcode")

    device.setPasscode(true)
    device.relaunch()
    guard case .ran(let second) = try await migration.runIfNeeded() else { return expect(false, "launch 2 runs") }
    expect(second.items.first?.result == .verified && second.isComplete, "migrated once a passcode is set")
}

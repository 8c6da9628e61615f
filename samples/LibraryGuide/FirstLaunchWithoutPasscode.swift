// docs/LIBRARY.md, "In an app's tests": from `import` down, this file is the guide's block, line for line
// (LibraryGuideTests compares them, and runs it with Swift Testing's `#expect` as `expect`). Change both together.
import ApexKeychain
import ApexMigration
import ReactNativeKeychainImporter

/// An app's test of its start-up migration on a phone without a passcode: react-native-keychain's sign-in, which
/// needs none, moves at the first launch, the app reads it, and the next launch costs one look-up.
func firstLaunchWithoutPasscode(expect: (Bool, String) -> Void) async throws {
    let database = InMemoryKeychainDatabase()
    let device = SimulatedDevice(passcodeSet: false)
    let seed = ReactNativeKeychainImporter.Seed(username: "sample-user", password: "sample-password")
    try ReactNativeKeychainImporter.seed([seed], into: database, device: device)
    let migration = Migration.onDevice(
        id: MigrationID("legacy-v1")!, importers: [ReactNativeKeychainImporter()], database: database, device: device)

    guard case .ran(let first) = try await migration.runIfNeeded() else { return expect(false, "launch 1 runs") }
    expect(first.entry(forKey: "credentials")?.result == .verified && first.isComplete, "migrated, no passcode")
    let app = try Keychain(KeychainOptions(service: device.defaultService), database: database, device: device)
    expect(try await app.getCredentials()?.username == "sample-user", "the app reads its sign-in")

    device.relaunch()
    guard case .alreadyComplete = try await migration.runIfNeeded() else { return expect(false, "launch 2 skips") }
}

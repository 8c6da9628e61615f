import ApexKeychain
import ApexMigration
import ApexTestSupport
import Foundation
import Testing

/// A target with access control, read back through the context the run's one prompt left (no prompt of its own):
/// the read checks the item's protection as well as its value, in one call.
@Suite("On-device migration: the read-back through the run's prompt")
struct SharedContextReadBackTests {
    @Test(
        "a protected target read back through the run's context is verified only with the protection it was written with",
        arguments: DatabaseKind.allCases, [false, true])
    func protectionChecked(kind: DatabaseKind, weakened: Bool) async throws {
        let device = SimulatedDevice()
        let base = try kind.make(device: device)
        let source = try OnDeviceMigrationTests.addToken(
            to: base, device, protection: .aku, accessControl: .biometryAny)
        let database = MisreadingDatabase(base)
        database.misreadPackageProtection = weakened
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device),
            policy: MigrationPolicy(
                removeSource: true, importOptions: ImportOptions(serviceMap: ["app": "app.migrated"]),
                // The iOS keychain doesn't disclose another library's access control: the app names it.
                protectedSourceItems: .readWithPrompt(
                    Prompt(title: "Move your saved sign-in"), accessControl: kind == .secItem ? .biometryAny : nil)))
        let report = try await migration.run()
        #expect(device.promptCount == 1, "the run's one prompt, and none for the read-back")
        let item = try #require(report.items.first)
        if weakened {
            #expect(item.result == .unverified && item.cause == .readBackDiffers, "\(item.resultReason ?? "")")
            #expect(try OnDeviceMigrationTests.foreign(base).map(\.primaryKey) == [source.attributes.primaryKey])
        } else {
            #expect(item.result == .verified, "\(item.resultReason ?? "")")
            #expect(try OnDeviceMigrationTests.foreign(base).isEmpty, "the source removed once verified")
        }
    }
}

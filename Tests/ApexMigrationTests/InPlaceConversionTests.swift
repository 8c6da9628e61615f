import ApexKeychain
import ApexMigration
import ApexTestSupport
import Foundation
import Synchronization
import Testing

/// A source item that holds its own target key (on the device, with `removeSource`), neither with access control:
/// turned into the package's item in one replacement, so that the key never goes empty and the value is never in
/// two items; put back as it was when the target does not read back.
@Suite("On-device migration: a source item turned into its target in place")
struct InPlaceConversionTests {
    /// A fresh database of `kind` holding another library's `token` in service `app` (protected `protection`),
    /// behind a ``MisreadingDatabase``.
    static func keychain(
        _ kind: DatabaseKind, protection: ProtectionDomain
    ) throws -> (
        base: any KeychainDatabase, database: MisreadingDatabase, device: SimulatedDevice, source: KeychainItem
    ) {
        let device = SimulatedDevice()
        let base = try kind.make(device: device)
        let source = try OnDeviceMigrationTests.addToken(to: base, device, protection: protection)
        return (base, MisreadingDatabase(base), device, source)
    }

    static func migration(_ database: any KeychainDatabase, _ device: SimulatedDevice) -> Migration {
        Migration(
            id: .forTests, importers: [PlainImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device), policy: MigrationPolicy(removeSource: true))
    }

    @Test(
        "the item becomes the package's: its value, the target's protection, one item under the key",
        arguments: DatabaseKind.allCases)
    func converted(kind: DatabaseKind) async throws {
        let (base, database, device, _) = try Self.keychain(kind, protection: .aku)
        let report = try await Self.migration(database, device).run()
        #expect(report.items.map(\.result) == [.verified], "\(report.items.map(\.resultReason))")
        #expect(try OnDeviceMigrationTests.foreign(base).isEmpty, "nothing of the source left beside it")
        let items = try base.attributes(matching: ItemQuery(service: "app", account: "token"))
        #expect(items.count == 1 && items.allSatisfy(\.isApexItem))
        #expect(items.first?.protectionDomain == .aku)
        #expect(database.renames == 0, "never moved aside")
        let app = try Keychain(KeychainOptions(service: "app"), database: base, device: device)
        #expect(try await app.getItem("token") == "sample-token-0001")
        #expect(try await app.getItemInfo("token")?.accessible == .whenUnlockedThisDeviceOnly)
    }

    @Test(
        "a converted item that reads back different is put back as it was, in one replacement, and stays pending",
        arguments: DatabaseKind.allCases)
    func restoredWhenUnverified(kind: DatabaseKind) async throws {
        let (base, database, device, source) = try Self.keychain(kind, protection: .ck)
        database.misreadPackageValues = true
        let migration = Self.migration(database, device)
        let report = try await migration.run()
        #expect(report.items.first?.result == .failed)
        #expect(report.items.first?.cause == .readBackDiffers, "\(report.items.map(\.resultReason))")
        let back = try OnDeviceMigrationTests.foreign(base)
        #expect(back.map(\.primaryKey) == [source.attributes.primaryKey], "the other library's item again")
        #expect(back.first?.protectionDomain == .ck)
        #expect(back.first.map { ($0.generic ?? Data()).isEmpty } == true, "none of the package's metadata")
        #expect(try base.value(for: source.attributes.primaryKey) == Data("sample-token-0001".utf8))
        #expect(try await OnDeviceMigrationTests.journalKeys(base, device).isEmpty, "nothing to mend")
        #expect(try await migration.isComplete() == false)

        // The next launch, reading right, migrates it.
        database.misreadPackageValues = false
        let again = try await migration.run()
        #expect(again.items.map(\.result) == [.verified])
        #expect(try OnDeviceMigrationTests.foreign(base).isEmpty)
    }

    @Test("the conversion refuses a target with access control and a holder under another key")
    func conversionRefusals() async throws {
        let device = SimulatedDevice()
        let database = InMemoryKeychainDatabase()
        let source = try OnDeviceMigrationTests.addToken(to: database, device, protection: .ck)
        let app = try Keychain(KeychainOptions(service: "app"), database: database, device: device)
        let value = Keychain.AbsentValue.string(Data("v".utf8))
        let protected = SetOptions(accessControl: .passcode)
        #expect(throws: KeychainError.self) {
            _ = try app.convert(source.attributes.primaryKey, to: "token", value, protected)
        }
        #expect(throws: KeychainError.self) {
            _ = try app.convert(source.attributes.primaryKey, to: "other", value, SetOptions())
        }
        #expect(try OnDeviceMigrationTests.foreign(database) == [source.attributes], "untouched")
        // A holder that went: nothing written.
        _ = try database.delete(source.attributes.primaryKey)
        #expect(try app.convert(source.attributes.primaryKey, to: "token", value, SetOptions()) == nil)
        #expect(try database.attributes(matching: ItemQuery()).isEmpty)
    }
}

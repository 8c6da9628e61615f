import ApexDumps
import ApexKeychain
import ApexMigration
import Foundation
import Testing

/// An item with access control is written, then read back with a prompt. When no prompt can be shown (a
/// passphrase store opened without its passphrase for prompts, an app in the background), the item is in the
/// target but not verified: `unverified`, pending, counted as written. It was `failed`, whose meaning is "the
/// target is as it was", and the summary's `written` left it out.
@Suite("A read-back that can't prompt")
struct UnreadableReadBackTests {
    @Test("a written item that can't be read back without a prompt is unverified and pending, and it is in the target")
    func writtenButNotReadBack() async throws {
        let device = SimulatedDevice(defaultAnswer: .notInteractive)
        let target = MigrationTarget(database: InMemoryKeychainDatabase(), device: device)
        let records: [(String, String, String, String, AccessControlFlags)] = [
            ("app", "token", "sample-a", "ck", []), ("app", "pin", "sample-b", "aku", [.userPresence]),
        ]
        let report = try await Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(records)]), target: target
        ).run()
        #expect(report.items.map(\.result) == [.verified, .unverified])
        #expect(report.items[1].cause == .keychain(.INTERACTION_NOT_ALLOWED))
        #expect(report.items[1].resultReason?.hasPrefix("INTERACTION_NOT_ALLOWED: ") == true)
        #expect(report.items[1].state == .pending)
        // The summary's `failed` counts what was not verified, this item too.
        #expect(report.summary.written == 2 && report.summary.verified == 1 && report.summary.failed == 1)
        let info = try await target.keychain(service: "app").getItemInfo("pin")
        #expect(info?.accessControl == .biometryAnyOrPasscode, "the item was written")
    }
}

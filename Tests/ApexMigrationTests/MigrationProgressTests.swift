import ApexDumps
import ApexKeychain
import ApexMigration
import Synchronization
import Testing

/// A run's progress callback is told a `MigrationProgress`, with labelled fields (it was two unlabelled `Int`s).
@Suite("MigrationProgress")
struct MigrationProgressTests {
    @Test("a run tells its progress by batch: done rises to the total of items to write, which stays the same")
    func progressOfARun() async throws {
        let records: [(String, String, String, String, AccessControlFlags)] = [
            ("app", "a", "sample-a", "ck", []), ("app", "b", "sample-b", "ck", []), ("app", "c", "sample-c", "ck", []),
        ]
        let seen = Mutex<[MigrationProgress]>([])
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(records)]), target: memoryTarget(),
            policy: MigrationPolicy(batching: .oneByOne))
        let report = try await migration.run { progress in seen.withLock { $0.append(progress) } }
        #expect(report.summary.verified == 3)
        let told = seen.withLock { $0 }
        #expect(!told.isEmpty)
        #expect(told.allSatisfy { $0.total == 3 })
        #expect(zip(told, told.dropFirst()).allSatisfy { $0.done <= $1.done }, "\(told.map(\.done))")
        #expect(told.map(\.done).contains(1), "one batch of one item at a time: \(told.map(\.done))")
        let last = try #require(told.last)
        #expect(last == MigrationProgress(done: 3, total: 3) && last.isFinished && last.fractionDone == 1)
        #expect(told.dropLast().allSatisfy { $0.fractionDone < 1 || $0.isFinished })
    }

    @Test("fractionDone and isFinished follow done and total")
    func fraction() {
        #expect(MigrationProgress(done: 1, total: 4).fractionDone == 0.25)
        #expect(!MigrationProgress(done: 1, total: 4).isFinished)
        #expect(
            MigrationProgress(done: 0, total: 0).fractionDone == 1 && MigrationProgress(done: 0, total: 0).isFinished)
    }
}

import ApexDumpModel
import ApexKeychain
import Foundation

/// The outcome of one planned action after a run.
public enum ItemResult: String, Sendable, Codable {
    /// Written and read back equal.
    case verified
    /// Written, but the read-back differed or failed.
    case unverified
    /// The write failed; the target is as it was.
    case failed
}

/// What became of one planned `create` in a run: the result, and for one that was not verified, why (an error
/// code and message, never a value).
public struct ItemOutcome: Sendable, Equatable {
    /// The result.
    public var result: ItemResult
    /// Why the item failed or was not verified, for programs; nil when it was verified.
    public var cause: MigrationReason?
    /// Why, for people: the error's code and message, or a note on a verified item whose sources remain.
    public var reason: String?

    /// Creates an outcome.
    public init(_ result: ItemResult, cause: MigrationReason? = nil, reason: String? = nil) {
        self.result = result
        self.cause = cause
        self.reason = reason
    }

    /// A write the keychain refused.
    init(refusal error: KeychainError) {
        self.init(
            .failed, cause: .keychain(error.code),
            reason: "\(error.code.rawValue): \(error.message)" + Remedy.keychain(error.code))
    }

    /// A written item whose read-back the keychain refused. For a refusal that leaves the item where it is (a
    /// prompt that can't be shown or was cancelled: ``MigrationReason/transientCodes``) it is in the target,
    /// not verified; any other (`KEY_INVALIDATED` removes the item) counts as a failed write.
    init(unreadable error: KeychainError) {
        let kept = MigrationReason.transientCodes.contains(error.code)
        self.init(
            kept ? .unverified : .failed, cause: .keychain(error.code),
            reason: "\(error.code.rawValue): \(error.message)")
    }
}

/// Where a run spent its time, by stage: what an app measuring its start-up, or the benchmark, wants to know.
/// Items go in batches: a batch's writes, source removals and commit are counted as `apply`, its read-backs as
/// `verify`, its ledger records (and the commit of the last batch's verified record) as `ledger`. Each is in seconds,
/// measured with the package's monotonic clock (`MonotonicClock`).
package struct MigrationTimings: Sendable, Equatable {
    /// Making the plan: the importers' mapping and the look-ups in the target.
    package var plan: TimeInterval = 0
    /// Writing the `create`s through the core, and committing them (source removal included).
    package var apply: TimeInterval = 0
    /// Reading each written item back and comparing it.
    package var verify: TimeInterval = 0
    /// The ledger's records (fingerprints, batches, the completion marker).
    package var ledger: TimeInterval = 0

    /// Creates empty timings.
    package init() {}
}

/// Writes every `create` through the core's API, reads each back, records it in the ledger, and removes a source
/// item only once its target item was read back equal.
///
/// Items go in batches (``MigrationPolicy/Batching``: 512 items or 50 ms of writes by default), one transaction
/// of the target database each (``KeychainDatabase/atomically(_:)``, one durable commit):
/// 1. the batch before's items without access control read back (the others were read back, with their
///    prompts, after its own transaction committed), its ledger record again with the verified entries, then (with
///    `removeSource`) the sources of its verified items removed and the parked sources of the others put back;
/// 2. this batch's ledger record, every entry pending, then each item's conditional write (with
///    `removeSource`, the source items under its target key journalled and parked first, or the item's own source
///    turned into it in place).
/// The last batch's step 1 has a transaction of its own.
///
/// A process that dies during a transaction leaves none of its writes: the batch's items and entries, and the
/// batch before's verified entries and source removals. The next run writes the batch again, finds the batch
/// before written and pending in the ledger, and finishes it (`exists`, or a `create` that expects the item it
/// finds). So a source item is removed only after the transaction that wrote its target committed, after the
/// target was read back equal from the committed store, and after its entry was recorded verified.
/// On a database that can't group writes (the protocol's default `atomically`), the same calls run in the same
/// order, each durable on its own: the unbatched path, which leaves the same store and ledger.
struct Applier {
    let target: MigrationTarget
    let ledger: Ledger
    let policy: MigrationPolicy
    let source: DatabaseSource?

    /// What the writes of a plan came to.
    struct Applied {
        /// The outcome of each `create` that was written or tried, by index.
        var outcomes: [Int: ItemOutcome] = [:]
        /// The `create`s whose target key no longer held what the plan saw when the write came: nothing was
        /// written, and they are conflicts.
        var changed: [Int] = []
    }

    /// A `create` ready to be written. A class: it goes from queue to batch to read-back, and a copy of a
    /// struct of this size (the source item, the target) costs a retain of each of its fields.
    final class Ready {
        let index: Int
        let item: SourceItem
        let target: TargetItem
        let keychain: Keychain
        let fingerprint: String
        /// Where the ledger keeps its entry (``Ledger/digest(_:)``).
        let digest: String
        /// The item's own source, when the write turns it into the target in place (``Applier/convertible(_:_:)``):
        /// decided once, with the batch's entries.
        var conversion: KeychainItem?

        init(index: Int, item: SourceItem, target: TargetItem, keychain: Keychain, fingerprint: String, digest: String)
        {
            self.index = index
            self.item = item
            self.target = target
            self.keychain = keychain
            self.fingerprint = fingerprint
            self.digest = digest
        }
    }

    /// What a write did with the other libraries' items under its target key, undone when the item is not
    /// verified.
    enum Displaced {
        /// Nothing: no such item.
        case nothing
        /// Renamed aside (journalled first), and deleted once the item is verified.
        case parked([ParkedItem])
        /// The item's own source, turned into the target in place (``Keychain/convert(_:to:_:_:)``): what it was,
        /// and the target's primary key, where it is put back when the target is not verified.
        case converted(original: KeychainItem, at: ItemAttributes.PrimaryKey)
    }

    /// How the write of one item ended.
    enum Written {
        /// Written; what became of the source items under its key.
        case written(Displaced)
        /// The target key no longer held what the plan saw: nothing was written.
        case changed
        /// The write failed or was refused.
        case failed(ItemOutcome)
    }

    /// A committed batch waiting for its read-backs and its second record (step 1 of the next transaction).
    struct WrittenBatch {
        var batch: Ledger.Batch
        /// Each written item, with its outcome once read back, and what became of the source items under its key.
        var items: [(ready: Ready, outcome: ItemOutcome?, displaced: Displaced)]
        /// The time ``Applier/finish(_:_:_:)`` counted.
        var spent: TimeInterval = 0
    }

    /// Applies the plan.
    /// - Throws: a ledger write or a commit that failed (the target can't be written: the run stops; the
    ///   batches committed before stay, and a later run completes the rest).
    func apply(
        _ plan: MigrationPlan, progress: (@Sendable (MigrationProgress) -> Void)?, timings: inout MigrationTimings
    )
        async throws(KeychainError) -> Applied
    {
        let clock = MonotonicClock()
        var applied = Applied()
        let creates = plan.actions.indices.filter { plan.actions[$0].action == .create }
        if !creates.isEmpty {
            let started = clock.now
            try await ledger.prepareForWrites()
            timings.ledger += clock.now - started
        }
        let staleCopies = staleCopies(plan)
        var done = 0
        var next = 0
        // Items prepared and not written yet (a batch that closed on time leaves some for the next).
        var queue: [Ready] = []
        var previous: WrittenBatch?
        while next < creates.count || !queue.isEmpty {
            var started = clock.now
            while queue.count < policy.batching.items, next < creates.count {
                let index = creates[next]
                next += 1
                switch try prepare(index, plan.actions[index].item) {
                case .ready(let ready):
                    queue.append(ready)
                    continue
                case .failed(let outcome):
                    applied.outcomes[index] = outcome
                }
                done += 1
                progress?(MigrationProgress(done: done, total: creates.count))
            }
            if queue.isEmpty { break }
            var batch = try await ledger.newBatch()
            for ready in queue {
                ready.conversion = convertible(ready, plan.actions[ready.index])
                let entry = Ledger.Entry(
                    fingerprint: ready.fingerprint, state: .pending,
                    staleCopies: staleCopies.isEmpty ? nil : staleCopies[Planner.place(ready.target)],
                    converted: ready.conversion.map { Ledger.SourceKey($0.attributes.primaryKey) })
                batch.set(entry, at: ready.digest)
            }
            timings.ledger += clock.now - started

            // The batch before's end, then this batch's record and writes: one transaction.
            started = clock.now
            var counted: TimeInterval = 0
            let results = try inTransaction(target.database) { () throws(KeychainError) in
                if var finishing = previous {
                    // Counted by stage in `finish`, not again below.
                    let finished = clock.now
                    applied.outcomes.merge(try finish(&finishing, plan, &timings)) { _, new in new }
                    previous = finishing
                    counted += clock.now - finished
                }
                let opened = clock.now
                try ledger.record(batch)
                timings.ledger += clock.now - opened
                counted += clock.now - opened
                var results: [Written] = []
                for ready in queue {
                    if !results.isEmpty, clock.now - opened >= policy.batching.duration { break }
                    results.append(write(ready, plan.actions[ready.index]))
                }
                return results
            }
            if let finished = previous {
                ledger.remember(finished.batch)
                done += finished.items.count
                progress?(MigrationProgress(done: done, total: creates.count))
            }
            timings.apply += clock.now - started - counted
            let batchItems = queue.prefix(results.count)
            queue.removeFirst(results.count)
            for left in queue { batch.remove(left.digest) }

            // The read-backs that need a prompt (items with access control), from the committed store and outside
            // any transaction: a prompt waits for the user.
            started = clock.now
            var written = WrittenBatch(batch: batch, items: [])
            for (ready, result) in zip(batchItems, results) {
                switch result {
                case .changed:
                    // Not this run's write: no entry may later pass the item there for one it began.
                    applied.changed.append(ready.index)
                    written.batch.remove(ready.digest)
                    done += 1
                case .failed(let outcome):
                    applied.outcomes[ready.index] = outcome
                    done += 1
                case .written(let displaced):
                    let prompts = (ready.target.options.accessControl ?? .none) != .none
                    written.items.append((ready, prompts ? await verify(ready) : nil, displaced))
                }
            }
            timings.verify += clock.now - started
            previous = written
        }
        if var finishing = previous {
            let started = clock.now
            let outcomes = try inTransaction(target.database) { () throws(KeychainError) in
                try finish(&finishing, plan, &timings)
            }
            applied.outcomes.merge(outcomes) { _, new in new }
            ledger.remember(finishing.batch)
            // The commit of the last record: the ledger's.
            timings.ledger += clock.now - started - finishing.spent
            progress?(MigrationProgress(done: creates.count, total: creates.count))
        }
        let started = clock.now
        try await confirmExisting(plan)
        timings.ledger += clock.now - started
        return applied
    }

    /// Removes the sources of the items already in place whose source is still there (a run without removeSource
    /// came first, or one stopped between a verify and the removal), a batch at a time, after ``apply(_:progress:timings:)``.
    /// - Throws: the source keychain's error.
    func removeSourcesInPlace(_ plan: MigrationPlan) throws(KeychainError) {
        guard policy.removeSource, let source else { return }
        let keys = plan.actions.filter { $0.action == .exists }.compactMap { source.keys[$0.item.origin.location] }
        var start = 0
        while start < keys.count {
            let end = min(start + policy.batching.items, keys.count)
            try inTransaction(source.database) { () throws(KeychainError) in
                for key in keys[start..<end] { try removeSource(key) }
            }
            start = end
        }
    }

    /// Inside a transaction, the end of a committed batch: its items without access control read back, its
    /// record written again with the verified entries, then its sources settled. Returns the outcomes by index;
    /// the time spent is counted as `verify` (read-backs), `ledger` (the record) and `apply` (the rest).
    private func finish(
        _ finishing: inout WrittenBatch, _ plan: MigrationPlan, _ timings: inout MigrationTimings
    )
        throws(KeychainError) -> [Int: ItemOutcome]
    {
        let clock = MonotonicClock()
        let begun = clock.now
        var started = begun
        for index in finishing.items.indices where finishing.items[index].outcome == nil {
            finishing.items[index].outcome = verifyWithoutPrompt(finishing.items[index].ready)
        }
        for index in finishing.items.indices where finishing.items[index].outcome?.result == .verified {
            finishing.batch.markVerified(finishing.items[index].ready.digest)
        }
        timings.verify += clock.now - started
        started = clock.now
        try ledger.record(finishing.batch)
        timings.ledger += clock.now - started
        started = clock.now
        var outcomes: [Int: ItemOutcome] = [:]
        for (ready, outcome, displaced) in finishing.items {
            outcomes[ready.index] = settle(
                ready, outcome ?? Self.differs, displaced: displaced, plan.actions[ready.index].replaces)
        }
        timings.apply += clock.now - started
        finishing.spent = clock.now - begun
        return outcomes
    }

    /// Items that a run stopped after its batch's writes left pending in the ledger, and that this plan found in
    /// place with their value (`exists`: items without access control, compared without a prompt): their entries
    /// are recorded verified, so that the ledger again says of every item what the store holds.
    func confirmExisting(_ plan: MigrationPlan) async throws(KeychainError) {
        var batch: Ledger.Batch?
        for action in plan.actions where action.action == .exists {
            guard let target = action.item.target, var entry = try await ledger.entry(for: target),
                entry.state == .pending,
                let fingerprint = try await ledger.fingerprint(of: action.item.value, kind: target.kind, create: false)
            else { continue }
            if batch == nil { batch = try await ledger.newBatch() }
            (entry.fingerprint, entry.state) = (fingerprint, .verified)
            batch?.set(entry, at: Ledger.digest(target))
        }
        guard let batch else { return }
        try inTransaction(target.database) { () throws(KeychainError) in try ledger.record(batch) }
        ledger.remember(batch)
    }

    /// On the device, with `removeSource`: for each target place, the source items the plan found to be older
    /// copies of the item that goes there (``Ledger/Entry/staleCopies``).
    func staleCopies(_ plan: MigrationPlan) -> [ExactName: [Ledger.SourceKey]] {
        guard policy.removeSource, let source else { return [:] }
        var copies: [ExactName: [Ledger.SourceKey]] = [:]
        for action in plan.actions where action.action == .shadowed {
            guard let target = action.item.target, let key = source.keys[action.item.origin.location] else { continue }
            copies[Planner.place(target), default: []].append(Ledger.SourceKey(key))
        }
        return copies
    }

    /// An item ready to be written, or why it can't be.
    enum Prepared {
        case ready(Ready)
        case failed(ItemOutcome)
    }

    /// The item's target keychain and the fingerprint of its value.
    /// - Throws: when the ledger can't make a fingerprint.
    func prepare(_ index: Int, _ item: SourceItem) throws(KeychainError) -> Prepared {
        guard let target = item.target else {
            return .failed(ItemOutcome(.failed, cause: .noTarget, reason: "the item has no place in the package"))
        }
        guard target.protectionKnown else {
            return .failed(
                ItemOutcome(
                    .failed, cause: .noEquivalent, reason: "the item's protection has no equivalent in the package"))
        }
        guard let fingerprint = try ledger.preparedFingerprint(of: item.value, kind: target.kind) else {
            return .failed(ItemOutcome(.failed, cause: .sealed, reason: "the value is sealed"))
        }
        do throws(KeychainError) {
            let keychain = try self.target.keychain(service: target.service, accessGroup: target.accessGroup)
            return .ready(
                Ready(
                    index: index, item: item, target: target, keychain: keychain, fingerprint: fingerprint,
                    digest: Ledger.digest(target)))
        } catch {
            return .failed(ItemOutcome(refusal: error))
        }
    }

    /// Runs `body` in one transaction of `database`; errors become ``KeychainError``s.
    func inTransaction<T>(
        _ database: any KeychainDatabase, _ body: () throws(KeychainError) -> T
    )
        throws(KeychainError) -> T
    {
        do {
            return try database.atomically { try body() }
        } catch let error as KeychainError {
            throw error
        } catch let error as KeychainDatabaseError {
            throw KeychainError(
                error.status == .interactionNotAllowed ? .INTERACTION_NOT_ALLOWED : .INTERNAL,
                "the migration's writes could not be committed: \(error.message)")
        } catch {
            throw KeychainError(.INTERNAL, "the migration's writes could not be committed: \(error)")
        }
    }
}

import ApexDumps
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
        self.init(.failed, cause: .keychain(error.code), reason: "\(error.code.rawValue): \(error.message)")
    }
}

/// Where a run spent its time, by stage: what an app measuring its start-up, or the benchmark, wants to know.
/// Items go in batches: a batch's writes are counted as `apply`, its read-backs as `verify`, its ledger records
/// and its commits (but the commit of its writes) as `ledger`.
public struct MigrationTimings: Sendable, Equatable {
    /// Making the plan: the importers' mapping and the look-ups in the target.
    public var plan: Duration = .zero
    /// Writing the `create`s through the core, and committing them (source removal included).
    public var apply: Duration = .zero
    /// Reading each written item back and comparing it.
    public var verify: Duration = .zero
    /// The ledger's records (fingerprints, batches, the completion marker).
    public var ledger: Duration = .zero

    /// Creates empty timings.
    public init() {}
}

/// Writes every `create` through the core's API, reads each back, records it in the ledger, and removes a source
/// item only once its target item was read back equal.
///
/// Items go in batches (``MigrationPolicy/Batching``: 512 items or 50 ms of writes by default), each in two
/// transactions of the target database (``KeychainDatabase/atomically(_:)``):
/// 1. the batch's ledger record, every entry pending, then each item's conditional write (with `removeSource`,
///    the source items under its target key journalled and parked first): one commit;
/// 2. each written item read back from the committed store, outside any transaction (a read may prompt);
/// 3. the ledger record again, with the verified entries, then (with `removeSource`) the sources of the verified
///    items removed and the parked sources of the others put back: one commit.
///
/// A process that dies in step 1 leaves none of the batch's items and entries, and the next run writes them; one
/// that dies after it leaves them written and pending in the ledger, and the next run finishes them (a `create`
/// that expects the item it finds). A source item is removed only in step 3: after the transaction that wrote
/// its target committed, after the target was read back equal, and after its entry was recorded verified.
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

    /// A `create` ready to be written.
    private struct Ready {
        let index: Int
        let item: SourceItem
        let target: TargetItem
        let keychain: Keychain
        let fingerprint: String
    }

    /// How the write of one item ended.
    private enum Written {
        /// Written; the source items parked to make room for it.
        case written(parked: [ParkedItem])
        /// The target key no longer held what the plan saw: nothing was written.
        case changed
        /// The write failed or was refused.
        case failed(ItemOutcome)
    }

    /// Applies the plan.
    /// - Throws: a ledger write or a commit that failed (the target can't be written: the run stops; the
    ///   batches committed before stay, and a later run completes the rest).
    func apply(
        _ plan: MigrationPlan, progress: (@Sendable (Int, Int) -> Void)?, timings: inout MigrationTimings
    )
        async throws(KeychainError) -> Applied
    {
        let clock = ContinuousClock()
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
                progress?(done, creates.count)
            }
            if queue.isEmpty { break }
            var batch = try await ledger.newBatch()
            for ready in queue {
                let entry = Ledger.Entry(
                    fingerprint: ready.fingerprint, state: .pending,
                    staleCopies: staleCopies[Planner.place(ready.target)])
                batch.set(entry, for: ready.target)
            }
            timings.ledger += clock.now - started

            // 1. The record and the writes: one transaction.
            started = clock.now
            var recording = Duration.zero
            let results = try inTransaction(target.database) { () throws(KeychainError) in
                let opened = clock.now
                try ledger.record(batch)
                recording = clock.now - opened
                var results: [Written] = []
                for ready in queue {
                    if !results.isEmpty, clock.now - opened >= policy.batching.duration { break }
                    results.append(write(ready, plan.actions[ready.index]))
                }
                return results
            }
            timings.ledger += recording
            timings.apply += clock.now - started - recording
            let batchItems = queue.prefix(results.count)
            queue.removeFirst(results.count)
            for left in queue { batch.remove(left.target) }

            // 2. The read-backs that need a prompt (items with access control), from the committed store and
            // outside any transaction: a prompt waits for the user.
            started = clock.now
            var written: [(ready: Ready, outcome: ItemOutcome?, parked: [ParkedItem])] = []
            var recordChanged = !queue.isEmpty
            for (ready, result) in zip(batchItems, results) {
                switch result {
                case .changed:
                    // Not this run's write: no entry may later pass the item there for one it began.
                    applied.changed.append(ready.index)
                    batch.remove(ready.target)
                    recordChanged = true
                case .failed(let outcome):
                    applied.outcomes[ready.index] = outcome
                case .written(let parked):
                    let prompts = (ready.target.options.accessControl ?? .none) != .none
                    written.append((ready, prompts ? await verify(ready) : nil, parked))
                }
            }
            timings.verify += clock.now - started
            guard recordChanged || !written.isEmpty else { continue }

            // 3. The other read-backs (no prompt), the record of what was verified, then the sources: one
            // transaction.
            started = clock.now
            var (reading, removing) = (Duration.zero, Duration.zero)
            try inTransaction(target.database) { () throws(KeychainError) in
                var opened = clock.now
                for index in written.indices where written[index].outcome == nil {
                    written[index].outcome = verifyWithoutPrompt(written[index].ready)
                }
                for entry in written where entry.outcome?.result == .verified { batch.markVerified(entry.ready.target) }
                reading = clock.now - opened
                try ledger.record(batch)
                opened = clock.now
                for (ready, outcome, parked) in written {
                    let outcome = outcome ?? Self.differs
                    applied.outcomes[ready.index] = settle(
                        ready, outcome, parked: parked, plan.actions[ready.index].replaces)
                }
                removing = clock.now - opened
            }
            timings.verify += reading
            timings.apply += removing
            timings.ledger += clock.now - started - reading - removing
            done += batchItems.count
            progress?(done, creates.count)
        }
        let started = clock.now
        try await confirmExisting(plan)
        timings.ledger += clock.now - started
        // Items already in place whose source is still there (a run without removeSource came first, or one
        // stopped between a verify and the removal): their sources go now, a batch at a time.
        if policy.removeSource, let source {
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
        return applied
    }

    /// Items that a run stopped after its batch's writes left pending in the ledger, and that this plan found in
    /// place with their value (`exists`: items without access control, compared without a prompt): their entries
    /// are recorded verified, so that the ledger again says of every item what the store holds.
    private func confirmExisting(_ plan: MigrationPlan) async throws(KeychainError) {
        var batch: Ledger.Batch?
        for action in plan.actions where action.action == .exists {
            guard let target = action.item.target, var entry = try await ledger.entry(for: target),
                entry.state == .pending,
                let fingerprint = try await ledger.fingerprint(of: action.item.value, kind: target.kind, create: false)
            else { continue }
            if batch == nil { batch = try await ledger.newBatch() }
            (entry.fingerprint, entry.state) = (fingerprint, .verified)
            batch?.set(entry, for: target)
        }
        guard let batch else { return }
        try inTransaction(target.database) { () throws(KeychainError) in try ledger.record(batch) }
    }

    /// On the device, with `removeSource`: for each target place, the source items the plan found to be older
    /// copies of the item that goes there (``Ledger/Entry/staleCopies``).
    private func staleCopies(_ plan: MigrationPlan) -> [ExactName: [Ledger.SourceKey]] {
        guard policy.removeSource, let source else { return [:] }
        var copies: [ExactName: [Ledger.SourceKey]] = [:]
        for action in plan.actions where action.action == .shadowed {
            guard let target = action.item.target, let key = source.keys[action.item.origin.location] else { continue }
            copies[Planner.place(target), default: []].append(Ledger.SourceKey(key))
        }
        return copies
    }

    /// An item ready to be written, or why it can't be.
    private enum Prepared {
        case ready(Ready)
        case failed(ItemOutcome)
    }

    /// The item's target keychain and the fingerprint of its value.
    /// - Throws: when the ledger can't make a fingerprint.
    private func prepare(_ index: Int, _ item: SourceItem) throws(KeychainError) -> Prepared {
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
            return .ready(Ready(index: index, item: item, target: target, keychain: keychain, fingerprint: fingerprint))
        } catch {
            return .failed(ItemOutcome(refusal: error))
        }
    }

    /// Runs `body` in one transaction of `database`; errors become ``KeychainError``s.
    private func inTransaction<T>(
        _ database: any KeychainDatabase, _ body: () throws(KeychainError) -> T
    )
        throws(KeychainError) -> T
    {
        do {
            return try database.atomically { try body() }
        } catch let error as KeychainError {
            throw error
        } catch let error as DatabaseError {
            throw KeychainError(
                error.status == .interactionNotAllowed ? .INTERACTION_NOT_ALLOWED : .INTERNAL,
                "the migration's writes could not be committed: \(error.message)")
        } catch {
            throw KeychainError(.INTERNAL, "the migration's writes could not be committed: \(error)")
        }
    }

    /// Writes one item, inside its batch's transaction. With `removeSource`, the source items the plan approved
    /// under the target key (`replaces`: the item's own source, or stale copies of it) are journalled and parked
    /// first, and put back at once when the write does not happen.
    private func write(_ ready: Ready, _ planned: PlannedAction) -> Written {
        var parked: [ParkedItem] = []
        do {
            if policy.removeSource, !planned.replaces.isEmpty {
                parked = try park(planned.replaces, for: ready.target)
            }
            if try !write(ready.item.value, ready.target, ready.keychain, expecting: planned.expected) {
                if !parked.isEmpty { try putBack(parked, for: ready.target, removingTarget: false) }
                return .changed
            }
            return .written(parked: parked)
        } catch {
            var outcome =
                (error as? KeychainError).map(ItemOutcome.init(refusal:))
                ?? ItemOutcome(.failed, cause: .keychain(.INTERNAL), reason: "\(error)")
            if !parked.isEmpty { outcome = putBack(parked, for: ready.target, noting: outcome) }
            return .failed(outcome)
        }
    }

    /// A written item that did not read back as it was written.
    private static let differs = ItemOutcome(
        .unverified, cause: .readBackDiffers, reason: "the item read back differs from what was written")

    /// Reads a written item without access control back, inside the batch's second transaction: verified,
    /// unverified, or failed when the read failed.
    private func verifyWithoutPrompt(_ ready: Ready) -> ItemOutcome {
        let differs = Self.differs
        do throws(KeychainError) {
            guard case .read(let info, let value, let label) = try ready.keychain.readBack(ready.target.key),
                Planner.sameProtection(info, ready.target)
            else { return differs }
            switch ready.item.value {
            case .credentials(let username, let password):
                return Planner.same(label, username) && value == Data(password.utf8) ? ItemOutcome(.verified) : differs
            case .value(let data):
                return value == data ? ItemOutcome(.verified) : differs
            case .sealed:
                return differs
            }
        } catch {
            return ItemOutcome(refusal: error)
        }
    }

    /// Reads a written item back: verified, unverified, or failed when the read failed.
    private func verify(_ ready: Ready) async -> ItemOutcome {
        do throws(KeychainError) {
            if try await verify(ready.item.value, ready.target, ready.keychain) { return ItemOutcome(.verified) }
            return Self.differs
        } catch {
            return ItemOutcome(refusal: error)
        }
    }

    /// After the read-back, inside the batch's second transaction: for a verified item, with `removeSource`,
    /// removes its own source and the parked holders; for another, puts the parked holders back.
    private func settle(
        _ ready: Ready, _ outcome: ItemOutcome, parked: [ParkedItem], _ replacing: [ItemAttributes.PrimaryKey]
    )
        -> ItemOutcome
    {
        guard outcome.result == .verified else {
            return parked.isEmpty ? outcome : putBack(parked, for: ready.target, noting: outcome)
        }
        return removeSources(of: ready.item, parked: parked, replacing: replacing, for: ready.target)
    }

    /// For a verified item, with `removeSource`: removes its own source and the parked holders. A failure here
    /// keeps the item verified (it is in place) and leaves the rest to the next run, which removes the sources
    /// of items that exist and mends what the journal names.
    private func removeSources(
        of item: SourceItem, parked: [ParkedItem], replacing: [ItemAttributes.PrimaryKey], for target: TargetItem
    ) -> ItemOutcome {
        guard policy.removeSource else { return ItemOutcome(.verified) }
        do {
            if let own = source?.keys[item.origin.location], !replacing.contains(own) { try removeSource(own) }
            if !parked.isEmpty { try discard(parked, for: target) }
            return ItemOutcome(.verified)
        } catch {
            return ItemOutcome(
                .verified,
                reason:
                    "written and read back, but its source items could not be removed now (\(error)): the next run removes them"
            )
        }
    }

    /// ``putBack(_:for:removingTarget:)`` for an item that was not written or verified, noting on its outcome a
    /// failure to put them back (which the next run mends from the journal).
    private func putBack(_ items: [ParkedItem], for target: TargetItem, noting outcome: ItemOutcome) -> ItemOutcome {
        do {
            try putBack(items, for: target)
            return outcome
        } catch {
            var noted = outcome
            noted.reason =
                (outcome.reason ?? "") + "; the source items removed to make room could not be put back "
                + "now (\(error)): the next run puts them back"
            return noted
        }
    }

    /// For an item that was not verified: removes what was written under the target key (the package's item
    /// only), puts the parked source items back, and drops the journal.
    private func putBack(_ items: [ParkedItem], for target: TargetItem, removingTarget: Bool = true) throws {
        let keychain = try self.target.keychain(service: target.service, accessGroup: target.accessGroup)
        if removingTarget { try keychain.removeItemSynchronously(target.key) }
        guard let database = source?.database else { return }
        for item in items { try item.unpark(in: database) }
        try ledger.removeJournal(for: target)
    }

    /// For a verified item: deletes the parked source items and drops the journal.
    private func discard(_ items: [ParkedItem], for target: TargetItem) throws {
        guard let database = source?.database else { return }
        for item in items { try item.discard(in: database) }
        try ledger.removeJournal(for: target)
    }

    /// Writes the item if the target key still holds what the plan saw; false, with nothing written, if not.
    private func write(
        _ value: SourceValue, _ target: TargetItem, _ keychain: Keychain, expecting: Keychain.ExpectedHolder
    ) throws(KeychainError) -> Bool {
        switch (value, target.kind) {
        case (.credentials(let username, let password), .credentials):
            let options = target.options
            return try keychain.setCredentials(
                Credentials(username: username, password: password),
                CredentialsOptions(
                    server: Self.server(of: target.key), accessible: options.accessible,
                    accessControl: options.accessControl, authValidity: options.authValidity,
                    synchronizable: options.synchronizable, android: options.android),
                expecting: expecting)
        case (.value(let data), .string):
            guard let text = String(validating: data, as: UTF8.self) else {
                throw KeychainError(.INVALID_ARGUMENT, "the value of '\(target.key)' is not UTF-8")
            }
            return try keychain.setItem(target.key, text, target.options, expecting: expecting)
        case (.value(let data), .bytes):
            return try keychain.setBytes(target.key, data, target.options, expecting: expecting)
        default:
            throw KeychainError(.INVALID_ARGUMENT, "the source value does not fit a '\(target.kind.rawValue)' item")
        }
    }

    /// Reads the item back: its attributes without a prompt, its value too (through the device's prompt when
    /// the item asks for one), and compares them with what was written.
    private func verify(
        _ value: SourceValue, _ target: TargetItem, _ keychain: Keychain
    ) async throws(KeychainError) -> Bool {
        guard let info = try await keychain.getItemInfo(target.key), Planner.sameProtection(info, target)
        else { return false }
        switch value {
        case .credentials(let username, let password):
            let read = try await keychain.getCredentials(CredentialsGetOptions(server: Self.server(of: target.key)))
            return read == Credentials(username: username, password: password)
        case .value(let data):
            return try await keychain.getBytes(target.key) == data
        case .sealed:
            return false
        }
    }

    static func server(of key: String) -> String? {
        key.hasPrefix("credentials:") ? String(key.dropFirst("credentials:".count)) : nil
    }

    // MARK: Source removal

    /// Journals the source items under the target key, then parks them (renames them aside): the journal lets a
    /// later run put them back if this one stops before the target item is verified.
    private func park(_ keys: [ItemAttributes.PrimaryKey], for target: TargetItem) throws -> [ParkedItem] {
        guard let database = source?.database else { return [] }
        var items: [ParkedItem] = []
        for key in keys {
            if let attributes = try Self.foreignItem(key, in: database) { items.append(ParkedItem(attributes)) }
        }
        guard !items.isEmpty else { return [] }
        try ledger.journal(Ledger.JournalRecord(parked: items), for: target)
        for item in items { try item.park(in: database) }
        return items
    }

    /// The attributes of the other library's item under exactly `key`, if it is still there.
    static func foreignItem(
        _ key: ItemAttributes.PrimaryKey, in database: any KeychainDatabase
    ) throws(DatabaseError)
        -> ItemAttributes?
    {
        try database.attributes(
            matching: ItemQuery(
                itemClass: key.itemClass, service: key.service, account: key.account, accessGroup: key.accessGroup)
        ).first { $0.primaryKey == key && !$0.isApexItem }
    }

    /// Removes a migrated source item by its primary key, if it is still another library's item.
    private func removeSource(_ key: ItemAttributes.PrimaryKey) throws(KeychainError) {
        guard let database = source?.database else { return }
        do {
            guard try Self.foreignItem(key, in: database) != nil else { return }
            _ = try database.delete(key)
        } catch {
            throw KeychainError(
                error.status == .interactionNotAllowed ? .INTERACTION_NOT_ALLOWED : .INTERNAL,
                "can't remove the migrated source item of service '\(key.service)': \(error.message)")
        }
    }
}

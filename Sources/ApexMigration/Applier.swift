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
/// Apply and verify alternate item by item; each item's write is counted as `apply` and its read-back as
/// `verify`.
public struct MigrationTimings: Sendable, Equatable {
    /// Making the plan: the importers' mapping and the look-ups in the target.
    public var plan: Duration = .zero
    /// Writing the `create`s through the core (source removal included).
    public var apply: Duration = .zero
    /// Reading each written item back and comparing it.
    public var verify: Duration = .zero
    /// The ledger's records (fingerprints, batches, the completion marker).
    public var ledger: Duration = .zero

    /// Creates empty timings.
    public init() {}
}

/// Writes every `create` through the core's public API, reads each back, records it in the ledger, and removes
/// a source item only once its target item was read back equal.
///
/// Items go in batches of ``Ledger/batchSize``: one ledger record marks the batch pending before its items are
/// written and verified after, so the ledger adds two writes per batch, not two per item.
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

    /// Applies the plan.
    /// - Throws: a ledger write that failed (the target can't be written: the run stops; what was verified is
    ///   recorded, and a later run completes the rest).
    func apply(_ plan: MigrationPlan, progress: (@Sendable (Int, Int) -> Void)?, timings: inout MigrationTimings)
        async throws(KeychainError) -> Applied
    {
        let clock = ContinuousClock()
        var applied = Applied()
        let creates = plan.actions.indices.filter { plan.actions[$0].action == .create }
        var done = 0
        var start = 0
        while start < creates.count {
            let indices = creates[start..<min(start + Ledger.batchSize, creates.count)]
            start = indices.endIndex
            var started = clock.now
            var batch = try await ledger.newBatch()
            var ready: [(index: Int, item: SourceItem, target: TargetItem)] = []
            for index in indices {
                let item = plan.actions[index].item
                guard let target = item.target else {
                    applied.outcomes[index] = ItemOutcome(.failed, cause: .noTarget, reason: "the item has no place in the package")
                    continue
                }
                guard target.protectionKnown else {
                    applied.outcomes[index] = ItemOutcome(
                        .failed, cause: .noEquivalent, reason: "the item's protection has no equivalent in the package")
                    continue
                }
                guard let fingerprint = try await ledger.fingerprint(of: item.value, kind: target.kind, create: true) else {
                    applied.outcomes[index] = ItemOutcome(.failed, cause: .sealed, reason: "the value is sealed")
                    continue
                }
                batch.set(Ledger.Entry(fingerprint: fingerprint, state: .pending), for: target)
                ready.append((index, item, target))
            }
            done += indices.count - ready.count
            if !ready.isEmpty { try await ledger.record(batch) }
            timings.ledger += clock.now - started
            var settled = false
            for (index, item, target) in ready {
                let planned = plan.actions[index]
                switch await apply(item, target, replacing: planned.replaces, expecting: planned.expected, timings: &timings) {
                case .done(let outcome):
                    applied.outcomes[index] = outcome
                    if outcome.result == .verified {
                        batch.markVerified(target)
                        settled = true
                    }
                case .changed:
                    // Not this run's write: no entry may later pass the item there for one it began.
                    applied.changed.append(index)
                    batch.remove(target)
                    settled = true
                }
                done += 1
                progress?(done, creates.count)
            }
            guard settled else { continue }
            started = clock.now
            try await ledger.record(batch)
            timings.ledger += clock.now - started
        }
        // Items already in place whose source is still there (a run without removeSource came first, or one
        // stopped between a verify and the removal): their sources go now.
        if policy.removeSource, let source {
            for action in plan.actions where action.action == .exists {
                if let key = source.keys[action.item.origin.location] { try removeSource(key) }
            }
        }
        return applied
    }

    /// How writing one item ended.
    private enum ItemApplied {
        /// Written (or tried), with its outcome.
        case done(ItemOutcome)
        /// The target key no longer held what the plan saw: nothing was written.
        case changed
    }

    /// Writes one item and reads it back. With `removeSource`, the source items the plan approved under the
    /// target key (`replacing`: the item's own source, or stale copies of it) are journalled and parked first,
    /// and put back when the item is not verified; once it is, they and the item's own source are removed and
    /// the journal dropped. A run stopped in between is mended by the next (`Migration.restoreInterruptedRemovals`).
    private func apply(
        _ item: SourceItem, _ target: TargetItem, replacing: [ItemAttributes.PrimaryKey],
        expecting: Keychain.ExpectedHolder, timings: inout MigrationTimings
    ) async -> ItemApplied {
        let clock = ContinuousClock()
        let started = clock.now
        var verifyStarted: ContinuousClock.Instant?
        defer {
            let end = clock.now
            if let verifyStarted {
                timings.apply += verifyStarted - started
                timings.verify += end - verifyStarted
            } else {
                timings.apply += end - started
            }
        }
        var parked: [ParkedItem] = []
        var outcome: ItemOutcome
        do {
            let keychain = try self.target.keychain(service: target.service, accessGroup: target.accessGroup)
            if policy.removeSource, !replacing.isEmpty {
                parked = try await park(replacing, for: target)
            }
            if try await !write(item.value, target, keychain, expecting: expecting) {
                if !parked.isEmpty { try await putBack(parked, for: target, removingTarget: false) }
                return .changed
            }
            verifyStarted = clock.now
            if try await verify(item.value, target, keychain) {
                return .done(await removeSources(of: item, parked: parked, replacing: replacing, for: target))
            }
            outcome = ItemOutcome(.unverified, cause: .readBackDiffers, reason: "the item read back differs from what was written")
        } catch let error as KeychainError {
            outcome = ItemOutcome(refusal: error)
        } catch {
            outcome = ItemOutcome(.failed, cause: .keychain(.INTERNAL), reason: "\(error)")
        }
        if !parked.isEmpty {
            do {
                try await putBack(parked, for: target)
            } catch {
                outcome.reason = (outcome.reason ?? "") + "; the source items removed to make room could not be put back "
                    + "now (\(error)): the next run puts them back"
            }
        }
        return .done(outcome)
    }

    /// For a verified item, with `removeSource`: removes its own source and the parked holders. A failure here
    /// keeps the item verified (it is in place) and leaves the rest to the next run, which removes the sources
    /// of items that exist and mends what the journal names.
    private func removeSources(
        of item: SourceItem, parked: [ParkedItem], replacing: [ItemAttributes.PrimaryKey], for target: TargetItem
    ) async -> ItemOutcome {
        guard policy.removeSource else { return ItemOutcome(.verified) }
        do {
            if let own = source?.keys[item.origin.location], !replacing.contains(own) { try removeSource(own) }
            if !parked.isEmpty { try await discard(parked, for: target) }
            return ItemOutcome(.verified)
        } catch {
            return ItemOutcome(
                .verified, reason: "written and read back, but its source items could not be removed now (\(error)): the next run removes them")
        }
    }

    /// For an item that was not verified: removes what was written under the target key (the package's item
    /// only), puts the parked source items back, and drops the journal.
    private func putBack(_ items: [ParkedItem], for target: TargetItem, removingTarget: Bool = true) async throws {
        let keychain = try self.target.keychain(service: target.service, accessGroup: target.accessGroup)
        if removingTarget { try await keychain.removeItem(target.key) }
        guard let database = source?.database else { return }
        for item in items { try item.unpark(in: database) }
        try await ledger.removeJournal(for: target)
    }

    /// For a verified item: deletes the parked source items and drops the journal.
    private func discard(_ items: [ParkedItem], for target: TargetItem) async throws {
        guard let database = source?.database else { return }
        for item in items { try item.discard(in: database) }
        try await ledger.removeJournal(for: target)
    }

    /// Writes the item if the target key still holds what the plan saw; false, with nothing written, if not.
    private func write(
        _ value: SourceValue, _ target: TargetItem, _ keychain: Keychain, expecting: Keychain.ExpectedHolder
    ) async throws(KeychainError) -> Bool {
        switch (value, target.kind) {
        case (.credentials(let username, let password), .credentials):
            let options = target.options
            return try await keychain.setCredentials(
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
            return try await keychain.setItem(target.key, text, target.options, expecting: expecting)
        case (.value(let data), .bytes):
            return try await keychain.setBytes(target.key, data, target.options, expecting: expecting)
        default:
            throw KeychainError(.INVALID_ARGUMENT, "the source value does not fit a '\(target.kind.rawValue)' item")
        }
    }

    /// Reads the item back: its attributes without a prompt, its value too (through the device's prompt when
    /// the item asks for one), and compares them with what was written.
    private func verify(_ value: SourceValue, _ target: TargetItem, _ keychain: Keychain) async throws(KeychainError) -> Bool {
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
    private func park(_ keys: [ItemAttributes.PrimaryKey], for target: TargetItem) async throws -> [ParkedItem] {
        guard let database = source?.database else { return [] }
        var items: [ParkedItem] = []
        for key in keys {
            if let attributes = try Self.foreignItem(key, in: database) { items.append(ParkedItem(attributes)) }
        }
        guard !items.isEmpty else { return [] }
        try await ledger.journal(Ledger.JournalRecord(parked: items), for: target)
        for item in items { try item.park(in: database) }
        return items
    }

    /// The attributes of the other library's item under exactly `key`, if it is still there.
    static func foreignItem(_ key: ItemAttributes.PrimaryKey, in database: any KeychainDatabase) throws(DatabaseError)
        -> ItemAttributes?
    {
        try database.attributes(
            matching: ItemQuery(itemClass: key.itemClass, service: key.service, account: key.account, accessGroup: key.accessGroup)
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

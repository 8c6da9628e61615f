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
    /// Why the item failed or was not verified; nil when it was verified.
    public var reason: String?

    /// Creates an outcome.
    public init(_ result: ItemResult, reason: String? = nil) {
        self.result = result
        self.reason = reason
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

    /// What to do once an item's target is verified and recorded.
    private enum Cleanup {
        /// Nothing.
        case none
        /// Drop the journal of the source item removed to make room for the target.
        case dropJournal(TargetItem)
        /// Remove the source item.
        case removeSource(ItemAttributes.PrimaryKey)
        /// Both: a stale copy made room, and the item's own source is elsewhere.
        case dropJournalAndRemoveSource(TargetItem, ItemAttributes.PrimaryKey)
    }

    /// Applies the plan; returns the outcome of each action that was a `create`, by index.
    /// - Throws: a ledger write that failed (the target can't be written: the run stops; what was verified is
    ///   recorded, and a later run completes the rest).
    func apply(_ plan: MigrationPlan, progress: (@Sendable (Int, Int) -> Void)?, timings: inout MigrationTimings)
        async throws(KeychainError) -> [Int: ItemOutcome]
    {
        let clock = ContinuousClock()
        var outcomes: [Int: ItemOutcome] = [:]
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
                    outcomes[index] = ItemOutcome(.failed, reason: "the item has no place in the package")
                    continue
                }
                guard let fingerprint = try await ledger.fingerprint(of: item.value, kind: target.kind, create: true) else {
                    outcomes[index] = ItemOutcome(.failed, reason: "the value is sealed")
                    continue
                }
                batch.set(Ledger.Entry(fingerprint: fingerprint, state: .pending), for: target)
                ready.append((index, item, target))
            }
            done += indices.count - ready.count
            if !ready.isEmpty { try await ledger.record(batch) }
            timings.ledger += clock.now - started
            var cleanups: [Cleanup] = []
            for (index, item, target) in ready {
                let (outcome, cleanup) = await apply(item, target, timings: &timings)
                outcomes[index] = outcome
                if outcome.result == .verified {
                    batch.markVerified(target)
                    cleanups.append(cleanup)
                }
                done += 1
                progress?(done, creates.count)
            }
            if cleanups.isEmpty { continue }
            started = clock.now
            try await ledger.record(batch)
            timings.ledger += clock.now - started
            started = clock.now
            defer { timings.apply += clock.now - started }
            for cleanup in cleanups {
                switch cleanup {
                case .none: break
                case .dropJournal(let target): try await ledger.removeJournal(for: target)
                case .removeSource(let key): try removeSource(key)
                case .dropJournalAndRemoveSource(let target, let key):
                    try await ledger.removeJournal(for: target)
                    try removeSource(key)
                }
            }
        }
        return outcomes
    }

    /// Writes one item and reads it back.
    private func apply(_ item: SourceItem, _ target: TargetItem, timings: inout MigrationTimings) async
        -> (ItemOutcome, Cleanup)
    {
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
        do {
            let keychain = try self.target.keychain(service: target.service, accessGroup: target.accessGroup)
            var cleanup = Cleanup.none
            if policy.removeSource, let source, let key = source.keys[item.origin.location] {
                cleanup = .removeSource(key)
                // Source items under the target key (the item's own, or a stale copy the plan allowed to replace)
                // are journalled and removed to make room; a run stopped before the verify puts them back.
                let holders = try sourceHolders(of: target, in: keychain, source: source)
                if !holders.isEmpty {
                    try await journalAndRemove(holders, for: target)
                    cleanup = holders.contains(key) ? .dropJournal(target) : .dropJournalAndRemoveSource(target, key)
                }
            }
            try await write(item.value, target, keychain)
            verifyStarted = clock.now
            guard try await verify(item.value, target, keychain) else {
                return (ItemOutcome(.unverified, reason: "the item read back differs from what was written"), .none)
            }
            return (ItemOutcome(.verified), cleanup)
        } catch let error as KeychainError {
            return (ItemOutcome(.failed, reason: "\(error.code.rawValue): \(error.message)"), .none)
        } catch {
            return (ItemOutcome(.failed, reason: "\(error)"), .none)
        }
    }

    private func write(_ value: SourceValue, _ target: TargetItem, _ keychain: Keychain) async throws(KeychainError) {
        switch (value, target.kind) {
        case (.credentials(let username, let password), .credentials):
            let options = target.options
            try await keychain.setCredentials(
                Credentials(username: username, password: password),
                CredentialsOptions(
                    server: Self.server(of: target.key), accessible: options.accessible,
                    accessControl: options.accessControl, authValidity: options.authValidity,
                    synchronizable: options.synchronizable, android: options.android))
        case (.value(let data), .string):
            guard let text = String(validating: data, as: UTF8.self) else {
                throw KeychainError(.INVALID_ARGUMENT, "the value of '\(target.key)' is not UTF-8")
            }
            try await keychain.setItem(target.key, text, target.options)
        case (.value(let data), .bytes):
            try await keychain.setBytes(target.key, data, target.options)
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

    /// Journals the source item that holds its own target key, then removes it: the journal lets a later run
    /// put it back if this one stops before the target item is verified.
    private func journalAndRemove(_ keys: [ItemAttributes.PrimaryKey], for target: TargetItem) async throws {
        guard let database = source?.database else { return }
        var items: [StoredItem] = []
        for key in keys {
            let value = try database.value(for: key)
            guard let attributes = try database.attributes(
                matching: ItemQuery(itemClass: key.itemClass, service: key.service, account: key.account, accessGroup: key.accessGroup)
            ).first(where: { $0.primaryKey == key && !$0.isApexItem }) else { continue }
            items.append(StoredItem(KeychainItem(attributes: attributes, value: value)))
        }
        try await ledger.journal(Ledger.JournalRecord(items: items), for: target)
        for key in keys { try database.delete(key) }
    }

    /// The source items (other libraries' items this migration read) under the target key.
    private func sourceHolders(of target: TargetItem, in keychain: Keychain, source: DatabaseSource) throws
        -> [ItemAttributes.PrimaryKey]
    {
        let known = Set(source.keys.values)
        return try source.database.attributes(
            matching: ItemQuery(
                itemClass: .genericPassword, service: keychain.service, account: target.key, accessGroup: keychain.accessGroup)
        ).filter { !$0.isApexItem }.map(\.primaryKey).filter { known.contains($0) }
    }

    /// Removes a migrated source item by its primary key, if it is still another library's item.
    private func removeSource(_ key: ItemAttributes.PrimaryKey) throws(KeychainError) {
        guard let database = source?.database else { return }
        do {
            let still = try database.attributes(
                matching: ItemQuery(itemClass: key.itemClass, service: key.service, account: key.account, accessGroup: key.accessGroup))
            guard still.contains(where: { $0.primaryKey == key && !$0.isApexItem }) else { return }
            _ = try database.delete(key)
        } catch {
            throw KeychainError(
                error.status == .interactionNotAllowed ? .INTERACTION_NOT_ALLOWED : .INTERNAL,
                "can't remove the migrated source item of service '\(key.service)': \(error.message)")
        }
    }
}

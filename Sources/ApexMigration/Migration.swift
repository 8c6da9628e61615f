import ApexDumpModel
import ApexKeychain
import Foundation

/// Where a migration's items come from.
public enum MigrationSource: Sendable {
    /// Dump files, read.
    case dumps([Dump])
    /// Other libraries' items in a keychain database (on the device, the very keychain the package uses).
    case database(any KeychainDatabase, device: any Device)
}

/// Moves another library's items into the package: plan (pure), then apply and verify, idempotent and
/// resumable.
///
/// An app calls it at start-up:
/// ```swift
/// let migration = Migration(id: MigrationID("legacy-v1")!, importers: [ExpoSecureStoreImporter()],
///                           source: .database(db, device: device), target: MigrationTarget(database: db, device: device))
/// switch try await migration.runIfNeeded() { … }
/// ```
/// After a completed run, a later ``runIfNeeded(progress:)`` costs a look-up of its marker, which records the
/// libraries of the importers it ran with: an importer of another library, added in an app update, makes the next
/// ``runIfNeeded(progress:)`` plan that library's items (and only those, with the ones left pending). Items left
/// pending for a library that a run has no importer for (or that ``ImportOptions/libraries`` leaves out) stay
/// pending, and keep the migration open, until a run with its importer migrates them.
///
/// A migration refuses, before it reads or writes anything, an empty list of importers
/// (``MigrationError/invalidPolicy(_:)``), and a database paired with a device that is not its own
/// (``MigrationError/target(_:)``, or ``MigrationError/source(_:)`` for an on-device source;
/// `KeychainDatabase.problem(with:)`: a store's items must be written through the device the store models, or its
/// own device's first read may invalidate them).
public struct Migration: Sendable {
    /// Names this migration's records in the target (its ledger and its completion marker): another migration of
    /// the same target with another id shares none of them.
    public let id: MigrationID
    /// The importers, in order of precedence: an item claimed by two goes to the first. At least one: a migration
    /// without importers is refused.
    public let importers: [any Importer]
    /// Where items come from.
    public let source: MigrationSource
    /// Where they go.
    public let target: MigrationTarget
    /// What is allowed.
    public let policy: MigrationPolicy

    /// Creates a migration named `id`: the runs of one migration, at each launch of the app, share its id; an
    /// independent migration of the same target needs its own.
    public init(
        id: MigrationID, importers: [any Importer], source: MigrationSource, target: MigrationTarget,
        policy: MigrationPolicy = .init()
    ) {
        self.id = id
        self.importers = importers
        self.source = source
        self.target = target
        self.policy = policy
    }

    /// What ``runIfNeeded(progress:)`` did.
    public enum Outcome: Sendable {
        /// An earlier run completed: nothing was read.
        case alreadyComplete
        /// It ran; the report says what happened.
        case ran(MigrationReport)
    }

    /// The plan: one action per source item, decided against the target as it is. Writes nothing.
    /// - Throws: ``MigrationError``: `tryLater` when the source can't be read now, `importer`, `source`, `target`,
    ///   `invalidPolicy`.
    public func plan() async throws(MigrationError) -> MigrationPlan {
        let (plan, _) = try await makePlan()
        return plan
    }

    /// Whether earlier runs completed the migration for the libraries of ``importers`` (a look-up of its marker).
    /// A marker of an earlier version of the package, which did not record the libraries, counts for none of them:
    /// the next ``runIfNeeded(progress:)`` finds out from the ledger which ones earlier runs planned.
    public func isComplete() async throws(MigrationError) -> Bool {
        let ledger = try openLedger()
        return try await completion(ledger)?.covers(libraries) ?? false
    }

    /// The libraries (raw values) of ``importers``, less those ``ImportOptions/libraries`` leaves out (their items
    /// are skipped): what a completed run records in its marker.
    var libraries: Set<String> {
        var found = Set(importers.map(\.library))
        if let wanted = policy.importOptions.libraries { found.formIntersection(wanted) }
        return Set(found.map(\.rawValue))
    }

    /// The ledger's completion marker.
    private func completion(_ ledger: Ledger) async throws(MigrationError) -> Ledger.Completion? {
        do {
            return try await ledger.completion()
        } catch {
            throw Self.targetError(error)
        }
    }

    /// Runs unless an earlier run completed; after a run that left items pending, plans and writes only those,
    /// and the items of every library of ``importers`` that no earlier run planned (an importer added since).
    /// After a marker of an earlier version, which did not record its libraries, a library counts as planned when
    /// the ledger holds an entry for one of its items' targets: the others are planned in full, once. (What earlier
    /// runs migrated is not planned again: an item the app has changed or removed since stays as the app left it.)
    ///
    /// A run is complete when no item is left that a later run could still migrate (``ItemState/pending``): one
    /// blocked for a reason that can go away (no passcode yet, nothing enrolled, the device locked, a cancelled
    /// prompt), a conflict, a failed write. Items that can never succeed (no equivalent protection, sealed,
    /// skipped, shadowed) don't hold it open, nor do those the policy gave up on (``MigrationPolicy/giveUp``).
    public func runIfNeeded(
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) async throws(MigrationError) -> Outcome {
        let ledger = try openLedger()
        if let done = try await completion(ledger), done.covers(libraries) { return .alreadyComplete }
        return .ran(try await timedRun(progress: progress, onlyPending: true).report)
    }

    /// Plans, writes every `create` through the core, reads each back, and (when the policy says so) removes
    /// the verified source items. A second run finds everything `exists`; a run stopped anywhere loses nothing.
    /// - Parameter progress: told how many of the items to write are done (``MigrationProgress``), as each batch is
    ///   written and read back, and once more at the end; called on the run's task, so it should return quickly.
    /// - Throws: ``MigrationError``: `tryLater` (device locked: nothing removed or marked), `conflicts` (with
    ///   `onConflict: .fail`: nothing written), `importer`, `source`, `target`, `restoringParkedItems`,
    ///   `invalidPolicy`.
    public func run(
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) async throws(MigrationError) -> MigrationReport {
        try await timedRun(progress: progress).report
    }

    /// ``run(progress:)``, also telling where the time went (for the benchmark).
    package func timedRun(
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) async throws(MigrationError)
        -> (report: MigrationReport, timings: MigrationTimings)
    {
        try await timedRun(progress: progress, onlyPending: false)
    }

    /// A run; with `onlyPending`, of only the items an earlier run left pending and those of the libraries no
    /// earlier run planned (all of them when no earlier run left a record).
    private func timedRun(
        progress: (@Sendable (MigrationProgress) -> Void)?, onlyPending: Bool
    ) async throws(MigrationError)
        -> (report: MigrationReport, timings: MigrationTimings)
    {
        let clock = MonotonicClock()
        var timings = MigrationTimings()
        var started = clock.now
        let ledger = try openLedger()
        try await restoreInterruptedRemovals(ledger)
        try await verifyInterruptedConversions(ledger)
        let recorded: Ledger.Pending?
        do throws(KeychainError) {
            recorded = try await ledger.pending()
        } catch {
            throw Self.targetError(error)
        }
        let pendingBefore = recorded?.runs
        let current = libraries
        // The libraries whose items earlier runs planned in full; nil when no run left a record. A marker of an
        // earlier version doesn't say: they are found from the ledger (`inferPlanned`). A record of pending items
        // that doesn't say the library of each item stands for the current ones.
        var planned: Set<String>?
        var inferPlanned = false
        switch try await completion(ledger) {
        case nil: break
        case .legacy?:
            planned = []
            inferPlanned = true
        case .libraries(let done)?: planned = done
        }
        if let recorded {
            let known = recorded.libraryOf == nil ? nil : recorded.libraries.map(Set.init)
            planned = (planned ?? []).union(known ?? current)
        }
        var only: Set<String>?
        var added: Set<String> = []
        var valuesOf: Set<ItemAttributes.PrimaryKey>?
        if onlyPending, let planned {
            only = Set(pendingBefore?.keys.map { $0 } ?? [])
            added = current.subtracting(planned)
            // An on-device source's values are read only for the items left pending (the rest can't change),
            // unless a library is planned for the first time.
            if added.isEmpty { valuesOf = Set(recorded?.sources.compactMap(\.primaryKey) ?? []) }
        }
        var (plan, databaseSource) = try await makePlan(
            ledger: ledger, only: only, alsoOf: added, inferPlanned: inferPlanned, valuesOf: valuesOf)
        timings.plan = clock.now - started
        let locked = plan.actions.contains { $0.action == .blocked && $0.cause == .keychain(.INTERACTION_NOT_ALLOWED) }
        if locked { throw .tryLater("the target keychain can't be written now (the device is locked)") }
        let conflicts = plan.count(.conflict)
        if conflicts > 0, policy.onConflict == .fail { throw .conflicts(conflicts) }
        let applier = Applier(target: target, ledger: ledger, policy: policy, source: databaseSource)
        let applied = try await apply(applier, plan, progress: progress, timings: &timings)
        let outcomes = applied.outcomes
        for index in applied.changed {
            plan.actions[index].action = .conflict
            plan.actions[index].cause = .changedAfterPlan
            plan.actions[index].reason =
                "the target key changed after the plan: another writer put an item there first" + Remedy.changed
        }
        var report = MigrationReport(
            plan: plan, results: outcomes, device: Self.describe(target.device), includeLabels: false)
        // What a later run may still do, from each item's state, and what the policy gives up on.
        var pendingNow = Ledger.Pending()
        var givenUp: [Int] = []
        for index in report.items.indices {
            let item = report.items[index]
            // A verified item whose sources could not be removed yet leaves work for the next run too.
            let cleanup = item.result == .verified && item.resultReason != nil
            guard item.state == .pending || cleanup, let target = plan.actions[index].item.target else { continue }
            let digest = Ledger.digest(target)
            let runs = (pendingBefore?[digest] ?? 0) + 1
            if item.state == .pending, policy.giveUp.applies(to: item.cause, runs: runs) {
                givenUp.append(index)
                continue
            }
            pendingNow.runs[digest] = max(pendingNow.runs[digest] ?? 0, runs)
            if pendingNow.libraryOf?[digest] == nil {
                pendingNow.libraryOf?[digest] = plan.actions[index].item.library.rawValue
            }
            if let key = databaseSource?.keys[plan.actions[index].item.origin.location] {
                pendingNow.sources.append(Ledger.SourceKey(key))
            }
        }
        report.giveUp(givenUp)
        if let recorded { Self.carry(recorded, into: &pendingNow, current: current) }
        started = clock.now
        // With nothing pending, no library is left with pending items, those of the libraries not planned now
        // included (carried above): every one planned so far is covered.
        let covered = (planned ?? []).union(current)
        pendingNow.libraries = covered.sorted()
        do throws(KeychainError) {
            // With nothing pending, the record goes, and with it any item under its key that is no record.
            if !pendingNow.runs.isEmpty || ledger.pendingKeyHeld { try await ledger.setPending(pendingNow) }
            if pendingNow.runs.isEmpty { try await ledger.markDone(libraries: covered) }
        } catch {
            throw Self.targetError(error)
        }
        timings.ledger += clock.now - started
        return (report, timings)
    }

    /// Carries into `pending` the items `recorded` left pending for a library this run did not plan (its importer
    /// is gone, or ``ImportOptions/libraries`` leaves it out), as they were: their count of runs stays (this run did
    /// not try them), and the migration stays open until a run with their importer migrates them. A record that
    /// doesn't say the library of each item (an earlier version's) carries nothing: its items stand for the current
    /// importers'. The sources recorded are carried with them, all of them (a source is not recorded by item): a
    /// later run reads the values of a few more source items, and plans only the pending ones.
    static func carry(_ recorded: Ledger.Pending, into pending: inout Ledger.Pending, current: Set<String>) {
        guard let libraryOf = recorded.libraryOf else { return }
        var carried = false
        for (digest, runs) in recorded.runs {
            guard let library = libraryOf[digest], !current.contains(library) else { continue }
            pending.runs[digest] = max(pending.runs[digest] ?? 0, runs)
            if pending.libraryOf?[digest] == nil { pending.libraryOf?[digest] = library }
            carried = true
        }
        guard carried else { return }
        let have = Set(pending.sources)
        pending.sources += recorded.sources.filter { !have.contains($0) }
    }

    /// The ledger of ``id``, once ``check()`` found nothing to refuse.
    private func openLedger() throws(MigrationError) -> Ledger {
        try check()
        do {
            return try Ledger(target: target, id: id.rawValue)
        } catch {
            throw Self.targetError(error)
        }
    }

    /// Refuses what can't make a migration, before anything is read or written.
    /// - Throws: `invalidPolicy` for an empty list of importers (its first run would find nothing and complete the
    ///   migration for good), and `target` (`INVALID_ARGUMENT`) or `source` for a
    ///   database paired with a device that is not its own (`KeychainDatabase.problem(with:)`).
    func check() throws(MigrationError) {
        guard !importers.isEmpty else {
            throw .invalidPolicy(
                "a migration needs at least one importer: without one, a run finds nothing and completes the migration"
            )
        }
        if let problem = target.database.problem(with: target.device) {
            throw .target(KeychainError(.INVALID_ARGUMENT, problem))
        }
        if case .database(let database, let device) = source, let problem = database.problem(with: device) {
            throw .source("source: \(problem)")
        }
    }

    private func apply(
        _ applier: Applier, _ plan: MigrationPlan, progress: (@Sendable (MigrationProgress) -> Void)?,
        timings: inout MigrationTimings
    ) async throws(MigrationError) -> Applier.Applied {
        let applied: Applier.Applied
        do throws(KeychainError) {
            applied = try await applier.apply(plan, progress: progress, timings: &timings)
        } catch {
            throw Self.targetError(error)
        }
        do throws(KeychainError) {
            try applier.removeSourcesInPlace(plan)
        } catch {
            throw error.code == .INTERACTION_NOT_ALLOWED ? .tryLater(error.message) : .source("source: \(error)")
        }
        return applied
    }

    /// A target keychain error as a migration outcome: a locked device is "try later", anything else stops.
    static func targetError(_ error: KeychainError) -> MigrationError {
        error.code == .INTERACTION_NOT_ALLOWED ? .tryLater(error.message) : .target(error)
    }

    static func describe(_ device: any Device) -> String {
        device.state().platform.description
    }

    // MARK: Planning

    /// - Parameters:
    ///   - only: when given, plan only the items whose target digest is in it, and those of `alsoOf`.
    ///   - alsoOf: libraries (raw values) whose items are planned whatever `only` says.
    ///   - inferPlanned: whether to leave out of `alsoOf` each library one of whose items' targets the ledger holds
    ///     an entry for: one that earlier runs planned (after a marker of an earlier version, which doesn't say).
    ///   - valuesOf: when given, an on-device source's values are read only for these items.
    func makePlan(
        ledger: Ledger? = nil, only: Set<String>? = nil, alsoOf: Set<String> = [], inferPlanned: Bool = false,
        valuesOf: Set<ItemAttributes.PrimaryKey>? = nil
    ) async throws(MigrationError) -> (MigrationPlan, DatabaseSource?) {
        let planLedger: Ledger
        if let ledger { planLedger = ledger } else { planLedger = try openLedger() }
        let dumps: [Dump]
        var databaseSource: DatabaseSource?
        switch source {
        case .dumps(let given):
            dumps = given
        case .database(let database, let device):
            let read = try await DatabaseSource(
                database: database, device: device, valuesOf: valuesOf, protected: policy.protectedSourceItems)
            databaseSource = read
            dumps = [read.dump]
        }
        var (items, summaries) = try collect(dumps)
        var alsoOf = alsoOf
        if inferPlanned {
            do throws(KeychainError) {
                for item in items where alsoOf.contains(item.library.rawValue) {
                    if let target = item.target, try await planLedger.entry(for: target) != nil {
                        alsoOf.remove(item.library.rawValue)
                    }
                }
            } catch {
                throw Self.targetError(error)
            }
        }
        if let only {
            items = items.filter { item in
                alsoOf.contains(item.library.rawValue)
                    || (item.target.map { only.contains(Ledger.digest($0)) } ?? false)
            }
        }
        // On the device the target is the source's database: its listing tells who holds each target key.
        let listed = databaseSource.flatMap { $0.database === target.database ? $0.listed : nil }
        let planner = Planner(
            target: target, ledger: planLedger, policy: policy, sourceItems: databaseSource?.items ?? [:],
            listed: listed, withAccessControl: databaseSource?.withAccessControl ?? [])
        var actions = await planner.plan(items)
        if let databaseSource { Self.markUnread(&actions, databaseSource) }
        return (MigrationPlan(actions: actions, dumps: summaries), databaseSource)
    }

    /// Every importer's items, each source record claimed once (the first importer wins), and the dumps.
    func collect(_ dumps: [Dump]) throws(MigrationError) -> ([SourceItem], [DumpSummary]) {
        do {
            return try Self.collect(importers: importers, dumps: dumps, options: policy.importOptions)
        } catch {
            throw .importer(error)
        }
    }

    /// Every importer's items from `dumps`, each source record claimed once (the first importer to find it keeps
    /// it), and a summary of each dump naming the library whose items it held: what a plan starts from.
    /// - Throws: the first ``ImportError`` (an importer that can't use its data at all).
    public static func collect(
        importers: [any Importer], dumps: [Dump], options: ImportOptions
    ) throws(ImportError)
        -> ([SourceItem], [DumpSummary])
    {
        var found: [[SourceItem]] = []
        for importer in importers {
            found.append(try importer.importItems(from: dumps, options: options))
        }
        // An importer finds each record of a dump once, so a record can be found twice only in a dump given twice,
        // or a file that several importers found items in. Only items of such files are checked against the ones
        // claimed before them.
        var sharedPaths = Set<String>()
        var seen = Set<String>()
        for dump in dumps where !seen.insert(dump.path).inserted { sharedPaths.insert(dump.path) }
        if importers.count > 1 {
            var importersOfPath: [String: Int] = [:]
            for items in found {
                var paths = Set<String>()
                var last: String?
                for item in items where item.origin.path != last {
                    last = item.origin.path
                    paths.insert(item.origin.path)
                }
                for path in paths { importersOfPath[path, default: 0] += 1 }
            }
            for (path, count) in importersOfPath where count > 1 { sharedPaths.insert(path) }
        }
        // Items of a library the user did not ask for are found, and left out as skipped.
        if let wanted = options.libraries {
            let names = wanted.map(\.rawValue).sorted().joined(separator: ", ")
            for list in found.indices {
                for index in found[list].indices where !wanted.contains(found[list][index].library) {
                    found[list][index].verdict = .skipped(
                        "an item of \(found[list][index].library.rawValue): only \(names) was asked for")
                }
            }
        }
        var items: [SourceItem] = []
        items.reserveCapacity(found.reduce(0) { $0 + $1.count })
        var claimed = Set<SourceOrigin>()
        var libraryOfPath: [String: SourceLibrary] = [:]
        for importerItems in found {
            var last: String?
            var shared = false
            for item in importerItems {
                // Items of one file come together: its library and whether it is shared are looked up once per
                // run of them.
                if item.origin.path != last {
                    last = item.origin.path
                    shared = sharedPaths.contains(item.origin.path)
                    if libraryOfPath[item.origin.path] == nil { libraryOfPath[item.origin.path] = item.library }
                }
                guard !shared || claimed.insert(item.origin).inserted else { continue }
                items.append(item)
            }
        }
        let summaries = dumps.map {
            DumpSummary(
                path: $0.path, format: $0.format, library: libraryOfPath[$0.path], platform: $0.format.platform,
                notes: $0.notes, sealed: $0.sealed)
        }
        return (items, summaries)
    }
}

import ApexDumpModel
import ApexKeychain
import Foundation

/// What a migration does with one source item. Raw values are the report's `action` strings.
public enum MigrationAction: String, Sendable, Codable, CaseIterable {
    /// The target item will be (dry run) or was written.
    case create
    /// The target already holds an item with the same value and protection; nothing to do.
    case exists
    /// The target key is held by another library's item, by a different item of the package, or is the
    /// target of another source item too.
    case conflict
    /// The protection can't be given on the device (never weaker), or the source uses an option the package
    /// does not support.
    case blocked
    /// The value can't be read off the source device (the one the dump came from); it must be migrated on that device.
    case sealed
    /// An older copy that the source library itself would never read.
    case shadowed
    /// Left out on purpose.
    case skipped
}

/// One source item and what the plan does with it.
public struct PlannedAction: Sendable, Equatable {
    /// The item.
    public var item: SourceItem
    /// The action.
    public var action: MigrationAction
    /// Why, for every action but a plain `create`, for people: a `KeychainErrorCode` name and an explanation.
    public var reason: String?
    /// Why, for programs (nil for a plain `create` and `exists`).
    public var cause: MigrationReason?
    /// For a `create` with `removeSource` on the device: the other library's items under the target key that the
    /// write replaces (the item's own source, or stale copies of it), and nothing else.
    var replaces: [ItemAttributes.PrimaryKey] = []
    /// For a `create`: what the plan saw under the target key (nothing, or a write an interrupted run began). The
    /// write happens only if the key still holds it; else the item is a `conflict` after all.
    var expected: Keychain.ExpectedHolder = .absent
    /// For a copy of an item read from another dump (`shadowed`): the index of the action of the item that stands
    /// for it. The text report shows the copies on that item's row.
    var copyOf: Int?

    /// Creates a planned action.
    public init(item: SourceItem, action: MigrationAction, cause: MigrationReason? = nil, reason: String? = nil) {
        self.item = item
        self.action = action
        self.cause = cause
        self.reason = reason
    }

    /// A planned action the keychain refused, with the error's code and message as its reason.
    init(item: SourceItem, action: MigrationAction, refusal error: KeychainError) {
        self.init(
            item: item, action: action, cause: .keychain(error.code),
            reason: "\(error.code.rawValue): \(error.message)" + Remedy.keychain(error.code)
        )
    }

    /// Whether a later run may still change what happens to the item (see ``ItemState``).
    public var state: ItemState { ItemState.of(action, cause: cause, result: nil) }
}

/// The plan: one action per source item, in the order the importers found them. Pure: making it wrote nothing.
public struct MigrationPlan: Sendable {
    /// The actions.
    public var actions: [PlannedAction]
    /// The dumps the items came from.
    public var dumps: [DumpSummary]

    /// Creates a plan.
    public init(actions: [PlannedAction], dumps: [DumpSummary]) {
        self.actions = actions
        self.dumps = dumps
    }

    /// How many actions of each kind.
    public func count(_ action: MigrationAction) -> Int { actions.lazy.filter { $0.action == action }.count }
}

/// A dump that was read, for the report's `sources`.
public struct DumpSummary: Sendable, Equatable, Codable {
    /// The path as given (`(stdin)` for standard input).
    public var path: String
    /// The format, as the reader detected it.
    public var format: DumpFormat
    /// The library whose items it held (nil when no importer claimed any).
    public var library: SourceLibrary?
    /// The platform.
    public var platform: DumpPlatform
    /// What the reader said of the dump beyond its records (`Dump.notes`: an encrypted backup's sealed and
    /// damaged items, what a backup never holds).
    public var notes: [String]
    /// The items the dump holds that can't be opened, by protection (`Dump.sealed`).
    public var sealed: [String: Int]

    /// Creates a summary.
    public init(
        path: String, format: DumpFormat, library: SourceLibrary?, platform: DumpPlatform, notes: [String] = [],
        sealed: [String: Int] = [:]
    ) {
        self.path = path
        self.format = format
        self.library = library
        self.platform = platform
        self.notes = notes
        self.sealed = sealed
    }

    private enum CodingKeys: String, CodingKey {
        case path, format, library, platform, notes, sealed
    }

    /// Decodes a summary; one written before notes and sealed counts existed has none.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        path = try c.decode(String.self, forKey: .path)
        format = try c.decode(DumpFormat.self, forKey: .format)
        library = try c.decodeIfPresent(SourceLibrary.self, forKey: .library)
        platform = try c.decode(DumpPlatform.self, forKey: .platform)
        notes = try c.decodeIfPresent([String].self, forKey: .notes) ?? []
        sealed = try c.decodeIfPresent([String: Int].self, forKey: .sealed) ?? [:]
    }

    /// Every key, `null` for a missing library.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(path, forKey: .path)
        try c.encode(format, forKey: .format)
        try c.encode(library, forKey: .library)
        try c.encode(platform, forKey: .platform)
        try c.encode(notes, forKey: .notes)
        try c.encode(sealed, forKey: .sealed)
    }
}

/// What the user allows a migration to do.
public struct MigrationPolicy: Sendable, Equatable {
    /// What a conflict does.
    public enum OnConflict: String, Sendable, Codable, CaseIterable {
        /// Leave the conflicting items and migrate the rest.
        case skip
        /// Stop before writing anything.
        case fail
    }

    /// What a conflict does; `skip` by default.
    public var onConflict: OnConflict
    /// Remove each source item once its target item has been written and read back (keychain-database
    /// sources only; a dump file is never modified). Off by default.
    public var removeSource: Bool
    /// What the importers are told.
    public var importOptions: ImportOptions
    /// When to stop retrying an item that stays pending; never by default.
    public var giveUp: GiveUp
    /// How many writes a run groups into one transaction of the target; 512 items or 50 ms by default.
    public var batching: Batching
    /// What a run on the device does with other libraries' items that have access control: left pending by
    /// default (a launch never prompts), or read through one prompt for the run (``ProtectedSourceItems``).
    public var protectedSourceItems: ProtectedSourceItems

    /// How a run groups its writes: each batch of items is written in one transaction of the target database
    /// (`KeychainDatabase.atomically(_:)`), with the batch's ledger entries, and costs one durable commit, plus
    /// one more for the entries of the items read back. A batch closes at ``items`` items or once its writes
    /// have taken ``duration``, whichever comes first, so that another writer never waits much longer than that.
    /// A process that dies during a batch loses that batch's writes and nothing else; the next run makes them.
    public struct Batching: Sendable, Equatable {
        /// The most items in one batch (at least 1).
        public var items: Int
        /// How long a batch's writes may take before it closes, in seconds (at least one item is always written).
        public var duration: TimeInterval

        /// Creates a batching rule: at most `items` items (at least 1) per batch, and a batch closes once its
        /// writes have taken `duration` seconds (0.05, 50 ms, by default).
        public init(items: Int = 512, duration: TimeInterval = 0.05) {
            self.items = max(1, items)
            self.duration = duration
        }

        /// 512 items or 50 ms.
        public static let standard = Batching()

        /// One item per batch: each item written, read back and recorded before the next (two commits per item).
        public static let oneByOne = Batching(items: 1)
    }

    /// When a migration stops retrying a pending item (``ItemState/pending``): it is then ``ItemState/givenUp``,
    /// reported as such, and no longer holds the migration open.
    ///
    /// Giving up costs the item: the old library's copy stays where it was, and the app, which reads the package
    /// from now on, no longer finds the secret (a user signed out, say). So a run gives up after ``afterRuns``
    /// only on items that nothing the user does will unblock; an item waiting for the user to set a passcode or
    /// enrol biometrics (``keepWaiting``) keeps waiting, and each launch costs the retry of the pending items
    /// alone. ``reasons`` gives up at once, whatever ``keepWaiting`` says: for a target that can never satisfy it
    /// (a store with a key file has no passcode, and never will).
    public struct GiveUp: Sendable, Equatable {
        /// Give up on an item once it has stayed pending through this many runs (launches of the app, for
        /// ``Migration/runIfNeeded(progress:)``), unless it waits for one of ``keepWaiting``; nil: never.
        public var afterRuns: Int?
        /// Give up at once on an item pending for one of these reasons.
        public var reasons: Set<MigrationReason>
        /// The reasons ``afterRuns`` never gives up on: what the user can still fix
        /// (``unblockableByUser`` by default).
        public var keepWaiting: Set<MigrationReason>

        /// What the user can fix on the device: a passcode to set (`PASSCODE_NOT_SET`), biometrics to enrol
        /// (`BIOMETRY_NOT_ENROLLED`).
        public static let unblockableByUser: Set<MigrationReason> = [
            .keychain(.PASSCODE_NOT_SET), .keychain(.BIOMETRY_NOT_ENROLLED),
        ]

        /// Creates a give-up rule.
        public init(
            afterRuns: Int? = nil, reasons: Set<MigrationReason> = [],
            keepWaiting: Set<MigrationReason> = GiveUp.unblockableByUser
        ) {
            self.afterRuns = afterRuns
            self.reasons = reasons
            self.keepWaiting = keepWaiting
        }

        /// Never give up.
        public static let never = GiveUp()

        /// Whether to give up on an item pending for `cause` that has now stayed pending through `runs` runs.
        func applies(to cause: MigrationReason?, runs: Int) -> Bool {
            if let cause, reasons.contains(cause) { return true }
            guard let afterRuns, runs >= afterRuns else { return false }
            return !(cause.map(keepWaiting.contains) ?? false)
        }
    }

    /// Creates a policy.
    public init(
        onConflict: OnConflict = .skip, removeSource: Bool = false, importOptions: ImportOptions = ImportOptions(),
        giveUp: GiveUp = .never, batching: Batching = .standard,
        protectedSourceItems: ProtectedSourceItems = .leavePending
    ) {
        self.onConflict = onConflict
        self.removeSource = removeSource
        self.importOptions = importOptions
        self.giveUp = giveUp
        self.batching = batching
        self.protectedSourceItems = protectedSourceItems
    }
}

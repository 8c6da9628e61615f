import ApexDumpModel
import ApexKeychain
import Foundation

/// What the JSON report encodes (`formatVersion` 1): the plan, or the plan and what a run did. It never holds a
/// secret value or anything derived from one; accounts that are usernames, and labels, only when asked.
public struct MigrationReport: Sendable, Codable, Equatable {
    /// The report format's version.
    public var formatVersion: Int
    /// Whether nothing was written.
    public var dryRun: Bool
    /// The target device the plan was made for (JSON `device`): the device the items are written to, never the
    /// one a dump came from (a source item's value that can't be read off that device is
    /// ``SourceValue/sealed(_:)``). The command-line tool names it by its device profile (`ios`,
    /// `ios-no-biometrics`, …); a report made by the library (`Migration`), by the target's platform (`iOS 18`).
    /// Empty in an inventory (`inspect`), which has no target.
    public var targetDevice: String
    /// The dumps read.
    public var sources: [Source]
    /// One entry per source item.
    public var items: [Item]
    /// The count of each action, and what a run did.
    public var summary: Summary
    /// What the report comes to for the secrets found, first: found, migrated, already there, left behind, and
    /// what the ones left behind need.
    public private(set) var verdict: Verdict
    /// The version of the tool that made the report (JSON `toolVersion`; nil when a library call made it).
    public var toolVersion: String?
    /// When the report was made, ISO 8601 in UTC (JSON `timestamp`; nil when not stamped).
    public var timestamp: String?
    /// The target store's path (JSON `store`; nil for a plan made without a store, or a library call's).
    public var store: String?

    enum CodingKeys: String, CodingKey {
        case formatVersion, dryRun, targetDevice = "device", sources, items, summary, verdict, toolVersion, timestamp
        case store
    }

    /// Every key, `null` for what is absent: the JSON contract has no optional keys at this level.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(formatVersion, forKey: .formatVersion)
        try c.encode(dryRun, forKey: .dryRun)
        try c.encode(targetDevice, forKey: .targetDevice)
        try c.encode(sources, forKey: .sources)
        try c.encode(items, forKey: .items)
        try c.encode(summary, forKey: .summary)
        try c.encode(verdict, forKey: .verdict)
        try c.encode(toolVersion, forKey: .toolVersion)
        try c.encode(timestamp, forKey: .timestamp)
        try c.encode(store, forKey: .store)
    }

    /// Stamps the report as the tool makes it: its version, the time now, and the store it ran against.
    public mutating func stamp(toolVersion: String, store: String?, now: Date = Date()) {
        self.toolVersion = toolVersion
        self.store = store
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        timestamp = formatter.string(from: now)
    }

    /// A dump that was read: its path as given (`(stdin)` for standard input), its format as the reader detected
    /// it, the library whose items it held (nil when none), its platform, and what its reader noted (an encrypted
    /// backup's sealed and damaged items).
    public typealias Source = DumpSummary

    /// One source item: what was found, where it goes, and what happens.
    public struct Item: Sendable, Codable, Equatable {
        /// The item as found.
        public var source: ItemSource
        /// Where it goes; nil in an inventory, and where no target exists (no service name is known, a name the
        /// package can't hold).
        public var target: ItemTarget?
        /// What the plan does (nil in an inventory).
        public var action: MigrationAction?
        /// Why, for people.
        public var reason: String?
        /// Why, for programs: the reason of the action, or of a `create` that failed or was not verified
        /// (JSON `reasonCode`).
        public var cause: MigrationReason?
        /// What a run's write came to; nil in a dry run.
        public var result: ItemResult?
        /// Why a `create` failed or was not verified (an error code and message, never a value); only in a
        /// run's report.
        public var resultReason: String?
        /// Whether a later run may still change it (nil in an inventory).
        public var state: ItemState?
        /// Every inferred or lossy step, for people.
        public var notes: [String]
        /// For a copy of an item read from another dump: the index of the item that stands for it (not in the
        /// JSON; the text shows the copies on that item's row).
        var copyOf: Int?

        enum CodingKeys: String, CodingKey {
            case source, target, action, reason, cause = "reasonCode", result, resultReason, state, notes
        }

        /// `target`, `action`, `reason`, `reasonCode` and `state` only with an action, `result` and `resultReason`
        /// only with a result.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(source, forKey: .source)
            if let action {
                try c.encode(target, forKey: .target)
                try c.encode(action, forKey: .action)
                try c.encode(reason, forKey: .reason)
                try c.encode(cause, forKey: .cause)
                try c.encode(state, forKey: .state)
                if let result {
                    try c.encode(result, forKey: .result)
                    try c.encode(resultReason, forKey: .resultReason)
                }
            }
            try c.encode(notes, forKey: .notes)
        }
    }

    /// The source side of an item, as found. Its library and platform are typed (an importer made the item);
    /// what the dump holds stays as found: ``class`` keeps a class code the keychain does not have, and
    /// ``protection`` is text, whatever the source spells (an unknown `pdmn`, an Android cipher).
    public struct ItemSource: Sendable, Codable, Equatable {
        /// The library whose item it is.
        public var library: SourceLibrary
        /// The platform of its dump.
        public var platform: DumpPlatform
        /// The dump's path as given.
        public var path: String
        /// The place in the dump (`genp item 3`, `entries "auth:u", "auth:p", "auth:c"`).
        public var location: String
        /// The keychain item class (iOS); nil on Android.
        public var `class`: ItemClassFound?
        /// The service as found (iOS `svce`; Android: the entry prefix).
        public var service: String?
        /// The account as found; nil when it is a username and labels were not asked for.
        public var account: String?
        /// The server of an internet password.
        public var server: String?
        /// The access group as found.
        public var accessGroup: String?
        /// The protection as found: `pdmn`, `accessControl`, `synchronizable`, `cipher`, … (names and values as
        /// the source spells them, so a value outside the package's vocabulary is shown as it is).
        public var protection: [String: String]

        /// Every key, `null` for what is absent.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(library, forKey: .library)
            try c.encode(platform, forKey: .platform)
            try c.encode(path, forKey: .path)
            try c.encode(location, forKey: .location)
            try c.encode(`class`, forKey: .class)
            try c.encode(service, forKey: .service)
            try c.encode(account, forKey: .account)
            try c.encode(server, forKey: .server)
            try c.encode(accessGroup, forKey: .accessGroup)
            try c.encode(protection, forKey: .protection)
        }
    }

    /// A keychain item class as a dump records it: one of the keychain's, or a code it does not have, kept as
    /// found (an unknown class is reported, never dropped). Encoded as the code itself: `"genp"`, `"inet"`, ….
    public enum ItemClassFound: Sendable, Codable, Hashable {
        /// One of the keychain's classes.
        case known(KeychainItemClass)
        /// A code that is none of them, as found.
        case other(String)

        /// The class for a code as found.
        public init(_ code: String) {
            self = KeychainItemClass(rawValue: code).map(Self.known) ?? .other(code)
        }

        /// The code: the class's (`genp`), or the text as found.
        public var code: String {
            switch self {
            case .known(let known): known.rawValue
            case .other(let code): code
            }
        }

        /// The class, when it is one of the keychain's.
        public var known: KeychainItemClass? {
            if case .known(let known) = self { known } else { nil }
        }

        /// By code: `.other("genp")` is `.known(.genericPassword)`.
        public static func == (a: Self, b: Self) -> Bool { a.code == b.code }

        /// By code, as ``==(_:_:)``.
        public func hash(into hasher: inout Hasher) { hasher.combine(code) }

        /// Decodes the code.
        public init(from decoder: any Decoder) throws {
            self.init(try decoder.singleValueContainer().decode(String.self))
        }

        /// Encodes the code.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(code)
        }
    }

    /// The target side of an item. `accessible`, `accessControl` and `synchronizable` are nil (JSON `null`) for a
    /// `blocked` item whose protection has no equivalent in the package: its target says where it was meant to
    /// go, and no protection.
    public struct ItemTarget: Sendable, Codable, Equatable {
        /// The target keychain's service.
        public var service: String
        /// The key (`credentials` / `credentials:<server>` for credentials).
        public var key: String
        /// How the value is stored.
        public var kind: TargetKind
        /// When the item can be read (the package's default when the target's options leave it out).
        public var accessible: Accessible?
        /// Who must be present to read it.
        public var accessControl: AccessControl?
        /// Whether it synchronizes through iCloud Keychain.
        public var synchronizable: Bool?
        /// The access group; nil for the app's default group.
        public var accessGroup: String?

        /// Every key, `null` for what is absent.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(service, forKey: .service)
            try c.encode(key, forKey: .key)
            try c.encode(kind, forKey: .kind)
            try c.encode(accessible, forKey: .accessible)
            try c.encode(accessControl, forKey: .accessControl)
            try c.encode(synchronizable, forKey: .synchronizable)
            try c.encode(accessGroup, forKey: .accessGroup)
        }
    }

    /// Counts by action, and what a run did.
    public struct Summary: Sendable, Codable, Equatable {
        /// Every item.
        public var found = 0
        /// The items of each action.
        public var create = 0, exists = 0, conflict = 0, blocked = 0, sealed = 0, shadowed = 0, skipped = 0
        /// What a run did (0 in a plan): the items written, those read back equal, and those that failed or were
        /// not verified.
        public var written = 0, verified = 0, failed = 0
        /// The items a later run may still migrate and this one did not (``ItemState/pending``; a plan's
        /// `create`s, which are what the run would do, are not counted), and those the policy gave up on
        /// (``ItemState/givenUp``).
        public var pending = 0, givenUp = 0

        mutating func count(_ action: MigrationAction) {
            switch action {
            case .create: create += 1
            case .exists: exists += 1
            case .conflict: conflict += 1
            case .blocked: blocked += 1
            case .sealed: sealed += 1
            case .shadowed: shadowed += 1
            case .skipped: skipped += 1
            }
        }

        mutating func count(_ result: ItemResult) {
            if result != .failed { written += 1 }
            if result == .verified { verified += 1 } else { failed += 1 }
        }
    }

    /// The items that make the exit code 1: conflicts, blocked items, failed writes.
    public var hasProblems: Bool { summary.conflict > 0 || summary.blocked > 0 || summary.failed > 0 }

    /// Whether no item is left that a later run could still migrate (none ``ItemState/pending``).
    public var isComplete: Bool { !items.contains { $0.state == .pending } }

    /// Marks the pending items at `indices` given up (``MigrationPolicy/GiveUp``), and counts them so: the summary
    /// and the verdict are made again once for all of them.
    mutating func giveUp(_ indices: [Int]) {
        guard !indices.isEmpty else { return }
        for index in indices where items[index].state == .pending {
            items[index].state = .givenUp
            if !(dryRun && items[index].action == .create) { summary.pending -= 1 }
            summary.givenUp += 1
        }
        verdict = Self.verdict(of: items, dryRun: dryRun)
    }

    /// The verdict of a plan's or a run's items.
    static func verdict(of items: [Item], dryRun: Bool) -> Verdict {
        Verdict(
            kind: dryRun ? .plan : .run,
            entries: items.lazy.compactMap { item in
                guard let action = item.action, let state = item.state else { return nil }
                return Verdict.Entry(action: action, cause: item.cause, result: item.result, state: state)
            })
    }
}

extension MigrationReport {
    /// The report of a plan (dry run) or of a run (with its results).
    /// - Parameters:
    ///   - plan: the plan the report describes.
    ///   - results: what a run's writes came to, by the index of their action in the plan; nil for a dry run.
    ///   - device: the target device's name (``targetDevice``).
    ///   - includeLabels: show accounts that are usernames; without it they are left out.
    public init(
        plan: MigrationPlan, results: [Int: ItemOutcome]? = nil, device: String, includeLabels: Bool
    ) {
        formatVersion = 1
        dryRun = results == nil
        targetDevice = device
        sources = plan.dumps
        var summary = Summary()
        summary.found = plan.actions.count
        for (index, planned) in plan.actions.enumerated() {
            summary.count(planned.action)
            if let outcome = results?[index] { summary.count(outcome.result) }
        }
        let actions = plan.actions
        items = concurrentMap(count: actions.count) { index in
            let outcome: ItemOutcome? = results?[index]
            let item: SourceItem = actions[index].item
            let cause = outcome?.cause ?? actions[index].cause
            let state = ItemState.of(actions[index].action, cause: cause, result: outcome?.result)
            return Item(
                source: ItemSource(item, includeLabels: includeLabels), target: item.target.map { ItemTarget($0) },
                action: actions[index].action, reason: actions[index].reason, cause: cause, result: outcome?.result,
                resultReason: outcome?.reason, state: state, notes: item.notes, copyOf: actions[index].copyOf)
        }
        let dryRun = dryRun
        summary.pending = items.lazy.filter { $0.state == .pending && !(dryRun && $0.action == .create) }.count
        summary.givenUp = items.lazy.filter { $0.state == .givenUp }.count
        self.summary = summary
        verdict = Self.verdict(of: items, dryRun: dryRun)
    }

    /// The report of `inspect`: what the dumps hold, without targets or actions.
    public init(inventory items: [SourceItem], dumps: [DumpSummary], includeLabels: Bool) {
        formatVersion = 1
        dryRun = true
        targetDevice = ""
        sources = dumps
        self.items = items.map {
            Item(
                source: ItemSource($0, includeLabels: includeLabels), target: nil, action: nil, reason: nil, cause: nil,
                result: nil, resultReason: nil, state: nil, notes: $0.notes)
        }
        var summary = Summary()
        summary.found = items.count
        self.summary = summary
        verdict = Verdict(
            kind: .inventory,
            entries: items.lazy.map { item in
                guard let decided = item.decided else {
                    return Verdict.Entry(action: .create, cause: nil, result: nil, state: .pending)
                }
                return Verdict.Entry(
                    action: decided.action, cause: decided.cause, result: nil,
                    state: ItemState.of(decided.action, cause: decided.cause, result: nil))
            })
    }

    /// The report as JSON: sorted keys, pretty-printed, a newline at the end; byte for byte what `JSONEncoder`
    /// writes for it with `[.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]`.
    public func json() -> Data {
        jsonWriter().data(appending: UInt8(ascii: "\n"))
    }
}

extension MigrationReport.ItemSource {
    init(_ item: SourceItem, includeLabels: Bool) {
        let accountIsUsername = item.library == .reactNativeKeychain || item.target?.kind == .credentials
        library = item.library
        platform = item.platform
        path = item.origin.path
        location = item.origin.location
        `class` = item.source.itemClass.map(MigrationReport.ItemClassFound.init)
        service = item.source.service
        account = accountIsUsername && !includeLabels ? nil : item.source.account
        server = item.source.server
        accessGroup = item.source.accessGroup
        protection = item.source.protection
    }
}

extension MigrationReport.ItemTarget {
    init(_ target: TargetItem) {
        service = target.service
        key = target.key
        kind = target.kind
        accessGroup = target.accessGroup
        guard target.protectionKnown else { return }
        accessible = target.options.accessible ?? Keychain.defaultAccessible
        accessControl = target.options.accessControl ?? AccessControl.none
        synchronizable = target.options.synchronizable ?? false
    }

    /// `service/key [kind, accessible, accessControl]` for the text and Markdown tables; `[kind, no equivalent
    /// protection]` when the protection has none.
    var text: String {
        let protection =
            accessible.map { "\($0.rawValue), \((accessControl ?? AccessControl.none).rawValue)" }
            ?? "no equivalent protection"
        return "\(service)/\(key) [\(kind.rawValue), \(protection)]"
    }
}

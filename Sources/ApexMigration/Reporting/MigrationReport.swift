import ApexDumps
import ApexKeychain
import Foundation

/// What the JSON report encodes (`formatVersion` 1): the plan, or the plan and what a run did. It never holds a
/// secret value or anything derived from one; accounts that are usernames, and labels, only when asked.
public struct MigrationReport: Sendable, Codable, Equatable {
    /// The report format's version.
    public var formatVersion: Int
    /// Whether nothing was written.
    public var dryRun: Bool
    /// The device profile the plan was made for.
    public var device: String
    /// The dumps read.
    public var sources: [Source]
    /// One entry per source item.
    public var items: [Item]
    /// Counts.
    public var summary: Summary
    /// The version of the tool that made the report (JSON `toolVersion`; nil when a library call made it).
    public var toolVersion: String?
    /// When the report was made, ISO 8601 in UTC (JSON `timestamp`; nil when not stamped).
    public var timestamp: String?
    /// The target store's path (JSON `store`; nil for a plan made without a store, or a library call's).
    public var store: String?

    enum CodingKeys: String, CodingKey {
        case formatVersion, dryRun, device, sources, items, summary, toolVersion, timestamp, store
    }

    /// Every key, `null` for what is absent: the JSON contract has no optional keys at this level.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(formatVersion, forKey: .formatVersion)
        try c.encode(dryRun, forKey: .dryRun)
        try c.encode(device, forKey: .device)
        try c.encode(sources, forKey: .sources)
        try c.encode(items, forKey: .items)
        try c.encode(summary, forKey: .summary)
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

    /// A dump that was read.
    public struct Source: Sendable, Codable, Equatable {
        public var path: String
        public var format: String
        public var library: String?
        public var platform: String

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(path, forKey: .path)
            try c.encode(format, forKey: .format)
            try c.encode(library, forKey: .library)
            try c.encode(platform, forKey: .platform)
        }
    }

    /// One source item: what was found, where it goes, and what happens.
    public struct Item: Sendable, Codable, Equatable {
        public var source: ItemSource
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
        public var notes: [String]

        enum CodingKeys: String, CodingKey {
            case source, target, action, reason, cause = "reasonCode", result, resultReason, state, notes
        }

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

    /// The source side of an item, as found.
    public struct ItemSource: Sendable, Codable, Equatable {
        public var library: String
        public var platform: String
        public var path: String
        public var location: String
        public var `class`: String?
        public var service: String?
        public var account: String?
        public var server: String?
        public var accessGroup: String?
        public var protection: [String: String]

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

    /// The target side of an item. `accessible`, `accessControl` and `synchronizable` are nil (JSON `null`) for a
    /// `blocked` item whose protection has no equivalent in the package: its target says where it was meant to
    /// go, and no protection.
    public struct ItemTarget: Sendable, Codable, Equatable {
        public var service: String
        public var key: String
        public var kind: String
        public var accessible: String?
        public var accessControl: String?
        public var synchronizable: Bool?
        public var accessGroup: String?

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
        public var found = 0, create = 0, exists = 0, conflict = 0, blocked = 0, sealed = 0, shadowed = 0, skipped = 0
        public var written = 0, verified = 0, failed = 0

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
}

extension MigrationReport {
    /// The report of a plan (dry run) or of a run (with its results).
    /// - Parameters:
    ///   - plan: the plan the report describes.
    ///   - results: what a run's writes came to, by the index of their action in the plan; nil for a dry run.
    ///   - device: the device profile the plan was made for.
    ///   - includeLabels: show accounts that are usernames; without it they are left out.
    public init(
        plan: MigrationPlan, results: [Int: ItemOutcome]? = nil, device: String, includeLabels: Bool
    ) {
        formatVersion = 1
        dryRun = results == nil
        self.device = device
        sources = plan.dumps.map {
            Source(
                path: $0.path, format: $0.format.rawValue, library: $0.library?.rawValue, platform: $0.platform.rawValue
            )
        }
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
                resultReason: outcome?.reason, state: state, notes: item.notes)
        }
        self.summary = summary
    }

    /// The report of `inspect`: what the dumps hold, without targets or actions.
    public init(inventory items: [SourceItem], dumps: [DumpSummary], includeLabels: Bool) {
        formatVersion = 1
        dryRun = true
        device = ""
        sources = dumps.map {
            Source(
                path: $0.path, format: $0.format.rawValue, library: $0.library?.rawValue, platform: $0.platform.rawValue
            )
        }
        self.items = items.map {
            Item(
                source: ItemSource($0, includeLabels: includeLabels), target: nil, action: nil, reason: nil, cause: nil,
                result: nil, resultReason: nil, state: nil, notes: $0.notes)
        }
        var summary = Summary()
        summary.found = items.count
        self.summary = summary
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
        library = item.library.rawValue
        platform = item.platform.rawValue
        path = item.origin.path
        location = item.origin.location
        `class` = item.source.itemClass
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
        kind = target.kind.rawValue
        accessGroup = target.accessGroup
        guard target.protectionKnown else { return }
        accessible = (target.options.accessible ?? Keychain.defaultAccessible).rawValue
        accessControl = (target.options.accessControl ?? .none).rawValue
        synchronizable = target.options.synchronizable ?? false
    }

    /// `service/key [kind, accessible, accessControl]` for the text and Markdown tables; `[kind, no equivalent
    /// protection]` when the protection has none.
    var text: String {
        let protection = accessible.map { "\($0), \(accessControl ?? "none")" } ?? "no equivalent protection"
        return "\(service)/\(key) [\(kind), \(protection)]"
    }
}

import ApexKeychain

/// What a report comes to for the secrets it found, before any item's line: how many were found, migrated (or
/// would be), already there, and left behind; and for those left behind, grouped by why, what each group needs.
/// The report's `verdict` (``MigrationReport/verdict``); the command-line tool prints it on stderr after a text
/// report (``lines(width:)``), and an app can log it.
///
/// Older copies (`shadowed`) and items left out on purpose (`skipped`, another SDK's item) are not secrets to
/// move: they are counted apart, never as left behind.
public struct Verdict: Sendable, Codable, Equatable {
    /// What the report is of.
    public enum Kind: String, Sendable, Codable {
        /// A run that wrote: `migrated` counts the items written and read back equal.
        case run
        /// A plan (dry run): `migrated` counts the items the run would write.
        case plan
        /// What dumps hold (`inspect`), with no target: `migrated` counts the items whose value the dumps give.
        case inventory
    }

    /// Who or what the items of a group wait for.
    public enum Need: String, Sendable, Codable, CaseIterable {
        /// The device the items were written on: an Android Keystore key, a prompt only the app can show there.
        case device
        /// The user: a passcode, enrolled biometrics, the device unlocked, a prompt answered.
        case user
        /// The developer: a flag or file the run was not given, a conflict to resolve, a fault to look into.
        case developer
        /// Nothing, ever: the protection or name has no equivalent in the package, or the device can't give it.
        case nothing
    }

    /// Left-behind items that share a reason and a state.
    public struct Group: Sendable, Codable, Equatable {
        /// Who or what they wait for.
        public var needs: Need
        /// Why they are left behind (the items' `reasonCode`; nil for a run's write that has no outcome).
        public var reasonCode: MigrationReason?
        /// Whether a later run may still migrate them.
        public var state: ItemState
        /// How many items.
        public var count: Int
        /// What they need, for people: a few words, and the remedy when there is one.
        public var what: String

        /// Every key, `null` for a missing reason code.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(needs, forKey: .needs)
            try c.encode(reasonCode, forKey: .reasonCode)
            try c.encode(state, forKey: .state)
            try c.encode(count, forKey: .count)
            try c.encode(what, forKey: .what)
        }
    }

    /// What the report is of.
    public var kind: Kind
    /// The secrets found: every item but older copies and items left out on purpose.
    public var secrets: Int
    /// Migrated by the run, or in a plan the items it would migrate, or in an inventory the items whose value the
    /// dumps give.
    public var migrated: Int
    /// Already in the package with the same value and protection (`exists`).
    public var alreadyThere: Int
    /// The secrets neither migrated nor already there: the sum of ``groups``' counts.
    public var leftBehind: Int
    /// Older copies the source library itself never reads (`shadowed`), not counted as secrets.
    public var olderCopies: Int
    /// Items left out on purpose (`skipped`: another SDK's item, filtered by the user), not counted as secrets.
    public var leftOut: Int
    /// The left-behind secrets, by what they need (device, user, developer, nothing), then reason and state.
    public var groups: [Group]

    /// One item as the verdict counts it.
    struct Entry {
        var action: MigrationAction
        var cause: MigrationReason?
        var result: ItemResult?
        var state: ItemState
    }

    init(kind: Kind, entries: some Sequence<Entry>) {
        self.kind = kind
        (secrets, migrated, alreadyThere, olderCopies, leftOut) = (0, 0, 0, 0, 0)
        var counts: [GroupKey: Int] = [:]
        for entry in entries {
            switch entry.action {
            case .shadowed:
                olderCopies += 1
                continue
            case .skipped:
                leftOut += 1
                continue
            case .create where kind == .run ? entry.result == .verified : entry.result == nil:
                migrated += 1
            case .exists:
                alreadyThere += 1
            default:
                counts[GroupKey(entry.cause, entry.state), default: 0] += 1
            }
            secrets += 1
        }
        groups = counts.map { key, count in
            let (needs, what) = Self.need(key.reason)
            return Group(needs: needs, reasonCode: key.reason, state: key.state, count: count, what: what)
        }.sorted { a, b in
            let (x, y) = (Need.allCases.firstIndex(of: a.needs) ?? 0, Need.allCases.firstIndex(of: b.needs) ?? 0)
            if x != y { return x < y }
            let (p, q) = (a.reasonCode?.code ?? "", b.reasonCode?.code ?? "")
            if p != q { return p < q }
            return a.state.rawValue < b.state.rawValue
        }
        leftBehind = groups.reduce(0) { $0 + $1.count }
    }

    private struct GroupKey: Hashable {
        var reason: MigrationReason?
        var state: ItemState
        init(_ reason: MigrationReason?, _ state: ItemState) { (self.reason, self.state) = (reason, state) }
    }

    /// Who or what items left behind for `reason` need, and in a few words what.
    static func need(_ reason: MigrationReason?) -> (Need, String) {
        switch reason {
        case nil:
            (.developer, "a write this run did not finish; run again")
        case .sealed:
            (
                .device,
                "their value is locked in the Android Keystore; migrate them in the app, on the device (ApexMigration's start-up migration)"
            )
        case .needsPrompt:
            (
                .device,
                "a prompt the run was not allowed to show; let the app show one (MigrationPolicy.protectedSourceItems = .readWithPrompt)"
            )
        case .needsInput:
            (
                .developer,
                "input the run was not given (a flag such as --bundle-id or --service-map, or a key file); each item's reason names it"
            )
        case .sharedTargetKey, .heldByAnotherLibrary, .heldByDifferentItem, .heldByUnverifiedItem, .changedAfterPlan:
            (.developer, "a conflict to resolve; each item's reason says how")
        case .readBackDiffers:
            (.developer, "a write that read back different; run again, and report it if it stays")
        case .reservedService:
            (.developer, "a service the migration keeps for itself; map it to another with --service-map")
        case .noEquivalent, .noTarget:
            (.nothing, "no equivalent in the package (protection or name); each item's reason says which")
        case .skipped, .shadowed:
            (.nothing, "left out")
        case .keychain(let code):
            need(code)
        }
    }

    private static func need(_ code: KeychainErrorCode) -> (Need, String) {
        switch code {
        case .PASSCODE_NOT_SET: (.user, "a passcode on the device; migrated at a launch after the user sets one")
        case .BIOMETRY_NOT_ENROLLED:
            (.user, "enrolled biometrics; migrated at a launch after the user enrols them")
        case .INTERACTION_NOT_ALLOWED: (.user, "the device unlocked; migrated at a launch while it is")
        case .USER_CANCELED, .USER_FALLBACK, .AUTHENTICATION_FAILED:
            (.user, "the prompt answered; migrated at a launch where the user does")
        case .BIOMETRY_LOCKOUT: (.user, "biometrics unlocked with the passcode; migrated at a launch after that")
        case .MISSING_ENTITLEMENT: (.developer, "the access group in the app's entitlements")
        case .MISSING_USAGE_DESCRIPTION: (.developer, "NSFaceIDUsageDescription in the app's Info.plist")
        case .BIOMETRY_NOT_AVAILABLE, .HARDWARE_UNAVAILABLE, .UNSUPPORTED:
            (.nothing, "a protection this device can't give (never weaker)")
        case .KEY_INVALIDATED: (.nothing, "a key invalidated by changed biometrics; the value is gone")
        case .INVALID_ARGUMENT, .INTERNAL: (.developer, "a fault; each item's reason names it")
        }
    }
}

extension Verdict {
    /// The verdict for people: a line of counts, then a line per group, each at most `width` columns (wrapped at
    /// spaces; nil, no limit). No value or name of an item appears: only counts and what the groups need.
    public func lines(width: Int? = nil) -> [String] {
        let tense: (migrated: String, left: String) =
            switch kind {
            case .run: ("migrated", "left behind")
            case .plan: ("would be migrated", "would be left behind")
            case .inventory: ("readable from these files", "not")
            }
        var head = "verdict: \(Self.counted(secrets, "secret")) found"
        if secrets > 0 {
            var parts = ["\(migrated) \(tense.migrated)"]
            if alreadyThere > 0 { parts.append("\(alreadyThere) already there") }
            parts.append(leftBehind == 0 && kind != .inventory ? "nothing left behind" : "\(leftBehind) \(tense.left)")
            head += ": " + parts.joined(separator: ", ")
        }
        var apart: [String] = []
        if olderCopies > 0 { apart.append(Self.counted(olderCopies, "shadowed copy", "shadowed copies")) }
        if leftOut > 0 { apart.append("\(leftOut) left out on purpose") }
        if !apart.isEmpty { head += " (not counted: " + apart.joined(separator: ", ") + ")" }
        func wrapped(_ text: String, indent: Int) -> [String] {
            guard let width = width.map({ max($0, MigrationReport.narrowestTextWidth) }) else { return [text] }
            let cut = RenderedText.wrap(text, width: width, continuationWidth: max(10, width - indent))
            return cut.enumerated().map {
                $0.offset == 0 ? $0.element : String(repeating: " ", count: indent) + $0.element
            }
        }
        var lines = wrapped(head, indent: 2)
        for group in groups {
            let who: String =
                switch group.needs {
                case .device: group.count == 1 ? "needs the device" : "need the device"
                case .user: group.count == 1 ? "needs the user" : "need the user"
                case .developer: group.count == 1 ? "needs you" : "need you"
                case .nothing: "can't be migrated"
                }
            let state = group.state == .givenUp ? ", given up" : group.state == .pending ? ", pending" : ""
            let code = group.reasonCode?.code ?? "not written"
            lines += wrapped("  \(group.count) \(who) (\(code)\(state)): \(group.what)", indent: 6)
        }
        return lines
    }

    private static func counted(_ count: Int, _ one: String, _ many: String? = nil) -> String {
        "\(count) \(count == 1 ? one : many ?? one + "s")"
    }
}

import ApexDumpModel
import ApexKeychain
import Foundation

/// Decides one action per source item against the target as it is. Reads attributes and, for items without
/// access control, values; never prompts and never writes.
struct Planner {
    let target: MigrationTarget
    let ledger: Ledger?
    let policy: MigrationPolicy
    /// For an on-device source: the source item of each location, to recognise a source item that holds its
    /// own target key.
    let sourceItems: [String: ItemAttributes]
    /// On the device: every item of the target's database, as the source's listing found them (the target is
    /// that database), so that who holds each target key is known without a look-up per service or per key.
    var listed: [ItemAttributes]? = nil
    /// On the device: the other libraries' items with access control, which can't be moved aside without the user.
    var withAccessControl: Set<ItemAttributes.PrimaryKey> = []

    /// What one plan learns once and uses for every item.
    private struct Context {
        /// For each item (by index) whose target place (service, access group, key) other migratable items
        /// map to as well, with another value or protection: the origins of all of them.
        var duplicates: [Int: [SourceOrigin]]
        /// The items that are an earlier item of another dump over again (``sharedTargets(_:)``), with its index
        /// and origin.
        var copies: [Int: (index: Int, origin: SourceOrigin)]
        /// The places (service and access group) that hold any item; nil when unknown.
        var occupied: Set<ExactName>?
        /// Who holds the keys of each target keychain, read once per keychain with one query, not one per item.
        var states: [ExactName: KeyStates] = [:]
        /// For an on-device source: the location of each source item, by primary key.
        var locations: [ItemAttributes.PrimaryKey: String] = [:]
        /// For an on-device source: the copies the importer marked shadowed, by location, with the target
        /// place they map to (a stale copy under its winner's target key may be replaced with `removeSource`).
        var staleCopies: [String: ExactName] = [:]
        /// The keychain and key states of the last item's target, for the next item of the same service and
        /// group (items of one service usually come together).
        var last: (service: String, accessGroup: String?, keychain: Keychain, states: KeyStates)?
    }

    func plan(_ items: [SourceItem]) async -> [PlannedAction] {
        var actions: [PlannedAction] = []
        actions.reserveCapacity(items.count)
        let shared = Self.sharedTargets(items)
        var context = Context(duplicates: shared.duplicates, copies: shared.copies.mapValues { ($0, items[$0].origin) })
        // One query tells which services hold any item at all: the others need no look-up of their own (a first
        // migration of react-native-keychain has one service per item, all of them empty).
        if let held = listed ?? (try? target.database.attributes(matching: ItemQuery(itemClass: .genericPassword))) {
            context.occupied = Set(
                held.lazy.filter { $0.itemClass == .genericPassword }.map { Self.place($0.service, $0.accessGroup) })
        }
        if policy.removeSource, !sourceItems.isEmpty {
            for (location, attributes) in sourceItems { context.locations[attributes.primaryKey] = location }
            for item in items {
                if case .shadowed = item.verdict, let target = item.target {
                    context.staleCopies[item.origin.location] = Self.place(target)
                }
            }
        }
        for (index, item) in items.enumerated() {
            actions.append(await decide(item, index: index, &context))
        }
        Self.linkCopies(&actions)
        return actions
    }

    /// Points every copy the importer marked (``SourceItem/copyOf``) at the action of the item it copies, and
    /// every copy at the item that stands for all of them (a copy of a copy at the first).
    static func linkCopies(_ actions: inout [PlannedAction]) {
        guard actions.contains(where: { $0.item.copyOf != nil }) else { return }
        var index: [SourceOrigin: Int] = [:]
        for (number, action) in actions.enumerated() { index[action.item.origin] = number }
        for number in actions.indices where actions[number].action == .shadowed {
            if let origin = actions[number].item.copyOf, let standing = index[origin], standing != number {
                actions[number].copyOf = standing
            }
        }
        for number in actions.indices {
            var standing = actions[number].copyOf
            var steps = 0
            while let next = standing.flatMap({ actions[$0].copyOf }), steps < actions.count {
                standing = next
                steps += 1
            }
            actions[number].copyOf = standing
        }
    }

    /// The items (by index) whose target place (service, access group, key) more than one migratable item maps
    /// to. A `blocked` item keeps its intended target but is never written, so it shares a key with no one: two
    /// blocked items, or a blocked item and one to create, under one key are no conflict.
    /// - Returns: `copies`: each item that is an earlier item of another dump over again, with that item's
    ///   index: the same target (protection included) and the same value, so writing either leaves the same
    ///   item (one keychain read twice: a folder holding its XML plist and its binary or SQLite export, or two
    ///   copies of a file); `duplicates`: the items that still differ from each other, each with the origins of
    ///   its whole group (one array per group, shared by its members).
    static func sharedTargets(_ items: [SourceItem]) -> (duplicates: [Int: [SourceOrigin]], copies: [Int: Int]) {
        var comparisons = 0
        return sharedTargets(items, comparisons: &comparisons)
    }

    /// ``sharedTargets(_:)``, counting the item comparisons it makes (``isCopy(_:of:)`` and ``isSameItem(_:as:)``):
    /// at most one per item and per other distinct item of its place with its hash, so a place that thousands of
    /// equal items map to costs one comparison per item, not one per pair.
    static func sharedTargets(
        _ items: [SourceItem], comparisons: inout Int
    ) -> (duplicates: [Int: [SourceOrigin]], copies: [Int: Int]) {
        /// The items of one place that differ from each other, and the first item of each kind among them (same
        /// target, protection, label and value), by the hash of what they would write. An item of a kind already
        /// seen is a copy of that first item when it comes from another dump; from the same dump it is one more
        /// member, and no candidate for copies: a later item of that kind from another dump is the first one's
        /// copy (an item of another dump than the first one's would have been a copy itself). So the candidates
        /// with one hash are the distinct kinds, however many items of one kind there are.
        struct Group {
            var members: [Int]
            var kinds: [Int: [Int]]
        }
        var first: [ExactName: Int] = [:]
        first.reserveCapacity(items.count)
        var groups: [Int: Group] = [:]
        var copies: [Int: Int] = [:]
        for index in items.indices where items[index].verdict == .migrate {
            if case .sealed = items[index].value { continue }
            guard let target = items[index].target, target.protectionKnown,
                !Migration.isReservedService(target.service)
            else { continue }
            let place = place(target)
            guard let head = first[place] else {
                first[place] = index
                continue
            }
            let hash = kindHash(items[index])
            var group =
                groups.removeValue(forKey: head) ?? Group(members: [head], kinds: [kindHash(items[head]): [head]])
            let kind = group.kinds[hash]?.first { candidate in
                comparisons += 1
                return isSameItem(items[index], as: items[candidate])
            }
            if let kind, !ExactText.equal(items[index].origin.path, items[kind].origin.path) {
                copies[index] = kind
            } else {
                group.members.append(index)
                if kind == nil { group.kinds[hash, default: []].append(index) }
            }
            groups[head] = group
        }
        var origins: [Int: [SourceOrigin]] = [:]
        for group in groups.values where group.members.count > 1 {
            let found = group.members.map { items[$0].origin }
            for index in group.members { origins[index] = found }
        }
        return (origins, copies)
    }

    /// Whether `item` is `earlier` read from another dump: what would be written (target, protection and value)
    /// is the same, byte for byte.
    static func isCopy(_ item: SourceItem, of earlier: SourceItem) -> Bool {
        !ExactText.equal(item.origin.path, earlier.origin.path) && isSameItem(item, as: earlier)
    }

    /// Whether writing `item` or `other` leaves the same item: target, protection, label and value, byte for byte.
    static func isSameItem(_ item: SourceItem, as other: SourceItem) -> Bool {
        let earlier = other
        guard item.target == earlier.target, ExactText.equal(item.target?.options.label, earlier.target?.options.label)
        else { return false }
        switch (item.value, earlier.value) {
        case (.value(let a), .value(let b)):
            return a == b
        case (.credentials(let username, let password), .credentials(let otherUsername, let otherPassword)):
            return ExactText.equal(username, otherUsername) && ExactText.equal(password, otherPassword)
        default:
            return false
        }
    }

    /// A hash of what an item would write (its target's protection, its label and its value's bytes), to find the
    /// items it may be the same as.
    private static func kindHash(_ item: SourceItem) -> Int {
        var hasher = Hasher()
        if let options = item.target?.options {
            hasher.combine(options.accessible)
            hasher.combine(options.accessControl)
            hasher.combine(options.synchronizable)
            if let label = options.label { ExactText.hash(label, into: &hasher) }
        }
        switch item.value {
        case .value(let data):
            hasher.combine(data)
        case .credentials(let username, let password):
            ExactText.hash(username, into: &hasher)
            ExactText.hash(password, into: &hasher)
        case .sealed:
            break
        }
        return hasher.finalize()
    }

    /// The most other items of a group a conflict's reason names; a larger group is counted instead, so a
    /// reason stays short however many items map to one key, and a report grows with the items, not with their
    /// square.
    static let namedInConflict = 3

    /// Why `origin` is a conflict with the other members of `group` (which holds `origin` once).
    static func sharedTargetReason(_ origin: SourceOrigin, group: [SourceOrigin]) -> String {
        let others = group.count - 1
        guard others <= namedInConflict else {
            return "one of \(group.count) source items that map to the same target key (each is listed in this report)"
                + Remedy.sharedKey
        }
        let named = group.filter { $0 != origin }.map { "\($0.path) \($0.location)" }
        let what = others == 1 ? "another source item maps" : "\(others) other source items map"
        return "\(what) to the same target key: \(named.joined(separator: ", "))" + Remedy.sharedKey
    }

    /// A service and access group, as one dictionary key.
    static func place(_ service: String, _ accessGroup: String) -> ExactName { ExactName(service, accessGroup) }

    /// A target's service, access group (nil: the default) and key, as one dictionary key.
    static func place(_ target: TargetItem) -> ExactName {
        ExactName(target.service, target.accessGroup ?? "", target.key)
    }

    private func decide(_ item: SourceItem, index: Int, _ context: inout Context) async -> PlannedAction {
        if let decided = item.decided {
            return PlannedAction(item: item, action: decided.action, cause: decided.cause, reason: decided.reason)
        }
        guard let target = item.target else {
            return PlannedAction(
                item: item, action: .blocked, cause: .noTarget, reason: "the item has no place in the package")
        }
        if Migration.isReservedService(target.service) {
            return PlannedAction(
                item: item, action: .blocked, cause: .reservedService,
                reason: "the target service '\(target.service)' holds the migration's own records, and no item is "
                    + "migrated into it: map the item's service to another")
        }
        guard target.protectionKnown else {
            return PlannedAction(
                item: item, action: .blocked, cause: .noEquivalent,
                reason: "the item's protection has no equivalent in the package")
        }
        if let ledger, let source = sourceItems[item.origin.location],
            let stale = try? await ledger.entry(for: target)?.staleCopies,
            stale.contains(Ledger.SourceKey(source.primaryKey))
        {
            return PlannedAction(
                item: item, action: .shadowed, cause: .shadowed,
                reason: "an older copy of an item this migration moved and whose newer copy's source it removed")
        }
        if let (standing, origin) = context.copies[index] {
            var action = PlannedAction(
                item: item, action: .shadowed, cause: .shadowed,
                reason: "the same item as \(origin.path) \(origin.location), read from another dump (the same target, "
                    + "protection and value): that one stands for both")
            action.copyOf = standing
            return action
        }
        if let group = context.duplicates[index] {
            return PlannedAction(
                item: item, action: .conflict, cause: .sharedTargetKey,
                reason: Self.sharedTargetReason(item.origin, group: group))
        }
        do throws(KeychainError) {
            let keychain: Keychain
            let known: KeyStates
            if let last = context.last, ExactText.equal(last.service, target.service),
                ExactText.equal(last.accessGroup, target.accessGroup)
            {
                (keychain, known) = (last.keychain, last.states)
            } else {
                keychain = try self.target.keychain(service: target.service, accessGroup: target.accessGroup)
                if context.occupied?.isEmpty == true {
                    // The store holds no item at all: nothing to look up or remember.
                    known = KeyStates()
                } else {
                    let place = Self.place(keychain.service, keychain.accessGroup)
                    if let cached = context.states[place] {
                        known = cached
                    } else if let occupied = context.occupied, !occupied.contains(place) {
                        known = KeyStates()
                    } else {
                        if let fromListing = try listedStates(keychain) {
                            known = fromListing
                        } else {
                            known = try await keychain.keyStates()
                        }
                        context.states[place] = known
                    }
                }
                context.last = (target.service, target.accessGroup, keychain, known)
            }
            switch known.state(of: target.key) {
            case .foreign:
                guard policy.removeSource, let replaced = try replaceableHolders(item, target, keychain, context) else {
                    return PlannedAction(
                        item: item, action: .conflict, cause: .heldByAnotherLibrary,
                        reason: "the target key is held by another library's item" + Remedy.anotherLibrary)
                }
                if replaced.keys.contains(where: withAccessControl.contains) {
                    return PlannedAction(
                        item: item, action: .conflict, cause: .heldByAnotherLibrary,
                        reason: Self.protectedHolderReason(target))
                }
                // The holders will be moved aside: every other check a write makes still applies.
                try await keychain.checkWrite(target.key, target.options, states: KeyStates())
                var action = PlannedAction(item: item, action: .create, reason: replaced.reason)
                action.replaces = replaced.keys
                return action
            case .own(let info):
                return await compare(item, target, info, keychain)
            case .absent:
                try await keychain.checkWrite(target.key, target.options, states: known)
                return PlannedAction(item: item, action: .create)
            }
        } catch {
            return PlannedAction(item: item, action: .blocked, refusal: error)
        }
    }

    /// With `removeSource`, whether every other library's item under the target key is one this migration may
    /// journal and remove to make room: the item's own source, or a stale copy of it that the importer marked
    /// shadowed (the source library never reads it) and that maps to the same target.
    /// - Returns: nil when some holder is neither; else the holders, and why the write replaces them (nil when
    ///   the holder is the item's own source alone).
    private func replaceableHolders(
        _ item: SourceItem, _ target: TargetItem, _ keychain: Keychain, _ context: Context
    )
        throws(KeychainError) -> (keys: [ItemAttributes.PrimaryKey], reason: String?)?
    {
        let holders: [ItemAttributes]
        let query = ItemQuery(
            itemClass: .genericPassword, service: keychain.service, account: target.key,
            accessGroup: keychain.accessGroup)
        if let listed {
            // The source's listing found them: no look-up per key.
            holders = listed.filter { query.matches($0) && !$0.isApexItem }
        } else {
            do {
                holders = try self.target.database.attributes(matching: query).filter { !$0.isApexItem }
            } catch {
                throw KeychainError(
                    error.status == .interactionNotAllowed ? .INTERACTION_NOT_ALLOWED : .INTERNAL,
                    "database error: \(error.message)")
            }
        }
        var stale: [String] = []
        for holder in holders {
            guard let location = context.locations[holder.primaryKey] else { return nil }
            if location == item.origin.location { continue }
            guard context.staleCopies[location] == Self.place(target) else { return nil }
            stale.append(location)
        }
        let keys = holders.map(\.primaryKey)
        if stale.isEmpty { return (keys, nil) }
        return (
            keys,
            "the target key is held by the stale copy at \(stale.joined(separator: ", ")) (shadowed: the source library never reads it); with removeSource it is moved aside before the write and removed once the item is verified"
        )
    }

    /// Why an item whose target key another library's item with access control holds (its own source, or a stale
    /// copy) is not written: the holder can be moved aside or changed only through the user (seed 000: an item
    /// with access control is never updated in place), and deleting it before the new item is written could
    /// lose the value. Nothing is changed; the fix is a target of its own.
    static func protectedHolderReason(_ target: TargetItem) -> String {
        "the target key is held by another library's item with access control (the item's own source, under the service '\(target.service)' the package would use): it can't be moved aside without the user, and is never deleted before its value is elsewhere; migrate it to another service with ImportOptions.serviceMap (for example [\"\(target.service)\": \"\(target.service).migrated\"]), then the source is removed once its copy is verified"
    }

    /// Who holds the keys of `keychain`, from the source's listing (nil without one, or when a staged write
    /// needs settling: `Keychain.keyStates()` then asks the database).
    private func listedStates(_ keychain: Keychain) throws(KeychainError) -> KeyStates? {
        guard let listed else { return nil }
        return try keychain.keyStates(listed: listed)
    }

    /// A package item already holds the key: `exists` when it holds the same value with the same protection,
    /// `create` to finish a write an interrupted run began, `conflict` otherwise.
    private func compare(
        _ item: SourceItem, _ target: TargetItem, _ info: ItemInfo, _ keychain: Keychain
    ) async -> PlannedAction {
        let differs = PlannedAction(
            item: item, action: .conflict, cause: .heldByDifferentItem,
            reason: "the target key holds a different item of the package" + Remedy.removeHolder)
        guard Self.sameProtection(info, target) else { return differs }
        if case .credentials(let username, _) = item.value, !Self.same(info.label, username) { return differs }
        do throws(KeychainError) {
            if info.accessControl == .none {
                return try await Self.holdsValue(keychain, target, item.value)
                    ? PlannedAction(item: item, action: .exists) : differs
            }
            guard let ledger, let entry = try await ledger.entry(for: target),
                let fingerprint = try await ledger.fingerprint(of: item.value, kind: target.kind, create: false),
                entry.fingerprint == fingerprint
            else {
                return PlannedAction(
                    item: item, action: .conflict, cause: .heldByUnverifiedItem,
                    reason:
                        "the target key holds a package item that this migration did not write, protected by \(info.accessControl.rawValue): its value can't be compared without a prompt"
                        + Remedy.removeHolder)
            }
            guard entry.state == .pending else { return PlannedAction(item: item, action: .exists) }
            // A write an interrupted run began: finish it, if the item is still the one seen here.
            var action = PlannedAction(item: item, action: .create)
            action.expected = .own(info)
            return action
        } catch {
            return PlannedAction(item: item, action: .blocked, refusal: error)
        }
    }

    /// Whether a label is `username`, byte for byte.
    static func same(_ label: String?, _ username: String) -> Bool {
        label.map { ExactText.equal($0, username) } ?? false
    }

    /// Whether the item described by `info` has the protection the target asks for (unset options resolved to
    /// the keychain's defaults).
    static func sameProtection(_ info: ItemInfo, _ target: TargetItem) -> Bool {
        info.accessible == (target.options.accessible ?? Keychain.defaultAccessible)
            && info.accessControl == (target.options.accessControl ?? .none)
            && info.synchronizable == (target.options.synchronizable ?? false)
    }

    /// Whether the item under the target key holds `value` (items without access control: no prompt).
    static func holdsValue(
        _ keychain: Keychain, _ target: TargetItem, _ value: SourceValue
    ) async throws(KeychainError) -> Bool {
        switch value {
        case .value(let data):
            return try await keychain.getBytes(target.key) == data
        case .credentials(let username, let password):
            guard let bytes = try await keychain.getBytes(target.key) else { return false }
            guard bytes == Data(password.utf8) else { return false }
            return Self.same(try await keychain.getItemInfo(target.key)?.label, username)
        case .sealed:
            return false
        }
    }
}

extension SourceItem {
    /// The action the importer's verdict and the value decide alone, before any target is looked at (the plan's,
    /// and an inventory's verdict); nil for an item to migrate.
    var decided: (action: MigrationAction, cause: MigrationReason, reason: String)? {
        switch verdict {
        case .blocked(let why): return (.blocked, .noEquivalent, why)
        case .shadowed(let why): return (.shadowed, .shadowed, why)
        case .skipped(let why): return (.skipped, .skipped, why)
        case .needsInput(let why): return (.blocked, .needsInput, why)
        case .migrate: break
        }
        if case .sealed(let why) = value { return (.sealed, .sealed, why) }
        return nil
    }
}

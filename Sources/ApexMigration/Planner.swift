import ApexDumps
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

    func plan(_ items: [SourceItem]) async -> [PlannedAction] {
        var actions: [PlannedAction] = []
        actions.reserveCapacity(items.count)
        let duplicates = Self.sharedTargets(items)
        var states: [ExactName: KeyStates] = [:]
        var occupied: Set<ExactName>?
        // One query tells which services hold any item at all: the others need no look-up of their own (a first
        // migration of react-native-keychain has one service per item, all of them empty).
        if let held = try? target.database.attributes(matching: ItemQuery(itemClass: .genericPassword)) {
            occupied = Set(held.lazy.map { Self.place($0.service, $0.accessGroup) })
        }
        for item in items {
            actions.append(await decide(item, duplicates: duplicates, occupied: occupied, states: &states))
        }
        return actions
    }

    /// Target places (service, access group, key) that more than one migratable item maps to, with the
    /// origins of those items.
    static func sharedTargets(_ items: [SourceItem]) -> [ExactName: [SourceOrigin]] {
        var origins: [ExactName: [SourceOrigin]] = [:]
        for item in items where item.verdict == .migrate {
            if case .sealed = item.value { continue }
            if let target = item.target { origins[place(target), default: []].append(item.origin) }
        }
        return origins.filter { $0.value.count > 1 }
    }

    /// A service and access group, as one dictionary key.
    static func place(_ service: String, _ accessGroup: String) -> ExactName { ExactName(service, accessGroup) }

    /// A target's service, access group (nil: the default) and key, as one dictionary key.
    static func place(_ target: TargetItem) -> ExactName {
        ExactName(target.service, target.accessGroup ?? "", target.key)
    }

    /// - Parameters:
    ///   - occupied: the places (service and access group) that hold any item; nil when unknown.
    ///   - states: who holds the keys of each target keychain, read once per keychain (by service and access
    ///     group) with one query, not one per item.
    private func decide(
        _ item: SourceItem, duplicates: [ExactName: [SourceOrigin]], occupied: Set<ExactName>?,
        states: inout [ExactName: KeyStates]
    ) async -> PlannedAction {
        switch item.verdict {
        case .blocked(let why): return PlannedAction(item: item, action: .blocked, reason: why)
        case .shadowed(let why): return PlannedAction(item: item, action: .shadowed, reason: why)
        case .skipped(let why): return PlannedAction(item: item, action: .skipped, reason: why)
        case .migrate: break
        }
        if case .sealed(let why) = item.value { return PlannedAction(item: item, action: .sealed, reason: why) }
        guard let target = item.target else {
            return PlannedAction(item: item, action: .blocked, reason: "the item has no place in the package")
        }
        if let others = duplicates[Self.place(target)] {
            let elsewhere = others.filter { $0 != item.origin }.map { "\($0.path) \($0.location)" }
            return PlannedAction(
                item: item, action: .conflict,
                reason: "another source item maps to the same target key: \(elsewhere.joined(separator: ", "))")
        }
        do throws(KeychainError) {
            let keychain = try self.target.keychain(service: target.service, accessGroup: target.accessGroup)
            let place = Self.place(keychain.service, keychain.accessGroup)
            let known: KeyStates
            if let cached = states[place] {
                known = cached
            } else if let occupied, !occupied.contains(place) {
                known = KeyStates()
            } else {
                known = try await keychain.keyStates()
                states[place] = known
            }
            switch known.state(of: target.key) {
            case .foreign:
                if policy.removeSource, let source = sourceItems[item.origin.location],
                    Self.isSame(source, as: target, in: keychain)
                {
                    return PlannedAction(item: item, action: .create)
                }
                return PlannedAction(item: item, action: .conflict, reason: "the target key is held by another library's item")
            case .own(let info):
                return await compare(item, target, info, keychain)
            case .absent:
                try await keychain.checkWrite(target.key, target.options, states: known)
                return PlannedAction(item: item, action: .create)
            }
        } catch {
            return PlannedAction(item: item, action: .blocked, reason: "\(error.code.rawValue): \(error.message)")
        }
    }

    /// The source item itself holds the target key (same class, service, account and group).
    static func isSame(_ source: ItemAttributes, as target: TargetItem, in keychain: Keychain) -> Bool {
        source.itemClass == .genericPassword && source.service.utf8.elementsEqual(keychain.service.utf8)
            && source.account.utf8.elementsEqual(target.key.utf8)
            && source.accessGroup.utf8.elementsEqual(keychain.accessGroup.utf8)
    }

    /// A package item already holds the key: `exists` when it holds the same value with the same protection,
    /// `create` to finish a write an interrupted run began, `conflict` otherwise.
    private func compare(_ item: SourceItem, _ target: TargetItem, _ info: ItemInfo, _ keychain: Keychain) async -> PlannedAction {
        let differs = PlannedAction(item: item, action: .conflict, reason: "the target key holds a different item of the package")
        guard Self.sameProtection(info, target) else { return differs }
        if case .credentials(let username, _) = item.value, info.label != username { return differs }
        do throws(KeychainError) {
            if info.accessControl == .none {
                return try await Self.holdsValue(keychain, target, item.value) ? PlannedAction(item: item, action: .exists) : differs
            }
            guard let ledger, let entry = try await ledger.entry(for: target),
                let fingerprint = try await ledger.fingerprint(of: item.value, kind: target.kind, create: false),
                entry.fingerprint == fingerprint
            else {
                return PlannedAction(
                    item: item, action: .conflict,
                    reason: "the target key holds a package item that this migration did not write, protected by \(info.accessControl.rawValue): its value can't be compared without a prompt")
            }
            return PlannedAction(item: item, action: entry.state == .verified ? .exists : .create)
        } catch {
            return PlannedAction(item: item, action: .blocked, reason: "\(error.code.rawValue): \(error.message)")
        }
    }

    /// Whether the item described by `info` has the protection the target asks for (unset options resolved to
    /// the keychain's defaults).
    static func sameProtection(_ info: ItemInfo, _ target: TargetItem) -> Bool {
        info.accessible == (target.options.accessible ?? .whenUnlocked)
            && info.accessControl == (target.options.accessControl ?? .none)
            && info.synchronizable == (target.options.synchronizable ?? false)
    }

    /// Whether the item under the target key holds `value` (items without access control: no prompt).
    static func holdsValue(_ keychain: Keychain, _ target: TargetItem, _ value: SourceValue) async throws(KeychainError) -> Bool {
        switch value {
        case .value(let data):
            return try await keychain.getBytes(target.key) == data
        case .credentials(let username, let password):
            guard let bytes = try await keychain.getBytes(target.key) else { return false }
            guard bytes == Data(password.utf8) else { return false }
            return try await keychain.getItemInfo(target.key)?.label == username
        case .sealed:
            return false
        }
    }
}

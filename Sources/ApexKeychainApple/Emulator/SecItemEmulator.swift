import ApexKeychain
import Foundation

/// The Security framework's keychain, emulated for tests on any platform: the four ``SecItemCalls`` over the two
/// password classes (`genp`, `inet`), following Apple's documented semantics as `apple-secitem.md` §2 and its
/// checklist §5 describe them.
///
/// It reads the state of the `Device` it is made with at every call (locked, unlocked since boot,
/// passcode set, enrolled biometrics, the clock), so a `SimulatedDevice` scripts it. The prompts the keychain
/// itself shows (a read of an access-controlled item without an evaluated context) end as ``promptOutcome``
/// says, and are counted in ``promptsShown``. Every call is recorded in ``calls``.
public final class SecItemEmulator: SecItemCalls {
    /// The device whose state the keychain follows.
    public let device: any Device
    /// The app's access groups, in the keychain's order: the first is where an add without `agrp` goes (§2.8);
    /// nil when the device's entitlement decides (``init(device:accessGroups:)``).
    public let accessGroups: [String]?
    /// The groups the calls check.
    private var groups: EmulatorGroups { EmulatorGroups(list: accessGroups, device: device) }
    let state = Locked(EmulatorState())

    /// What SecItemAdd does with a dictionary that has a `kSecMatch*` key (`m_Limit` included).
    public enum MatchKeysInAdd: Sendable, Equatable {
        /// What Apple's source does: `s3dl_query_add` returns `errSecItemMatchUnsupported` from a `bool`
        /// function, which reads as true, so the call succeeds and stores nothing (SecItemDb.c:291–292,
        /// `apple-secitem.md` §2.3 item 8; derived from the source since iOS 8, not seen on a device).
        case succeedWithoutStoring
        /// A stricter keychain that refuses the dictionary with errSecParam, as SecItemUpdate and SecItemDelete
        /// refuse match keys: for tests that want such an add to fail loudly.
        case rejectWithParam
    }

    /// Creates an empty keychain.
    /// - Parameters:
    ///   - device: the device whose state the keychain follows.
    ///   - accessGroups: the app's access groups; nil for the device's own: its default group first, and every
    ///     group `Device.isEntitled(toAccessGroup:)` accepts (so a `SimulatedDevice`'s entitlement scripts it).
    ///     An empty list makes every call fail with errSecMissingEntitlement (§2.8).
    public init(device: any Device, accessGroups: [String]? = nil) {
        self.device = device
        self.accessGroups = accessGroups
    }

    // MARK: The four calls

    /// `SecItemAdd` (§2.3).
    public func add(_ attributes: SecItemDictionary) -> SecItemStatus {
        let device = device.state()
        return state.withLock { s in
            s.follow(device)
            do throws(EmulatorFailure) {
                try s.add(attributes, device: device, groups: groups)
                return s.record(.add, attributes, status: .success)
            } catch {
                return s.record(.add, attributes, status: error.status)
            }
        }
    }

    /// `SecItemCopyMatching` (§2.4).
    public func copyMatching(_ query: SecItemDictionary) -> (status: SecItemStatus, result: SecItemResult) {
        let device = device.state()
        return state.withLock { s in
            s.follow(device)
            do throws(EmulatorFailure) {
                let result = try s.copyMatching(query, device: device, groups: groups)
                return (s.record(.copyMatching, query, status: .success), result)
            } catch {
                return (s.record(.copyMatching, query, status: error.status), .none)
            }
        }
    }

    /// `SecItemUpdate` (§2.5).
    public func update(_ query: SecItemDictionary, _ attributesToUpdate: SecItemDictionary) -> SecItemStatus {
        let device = device.state()
        return state.withLock { s in
            s.follow(device)
            do throws(EmulatorFailure) {
                try s.update(query, attributesToUpdate, device: device, groups: groups)
                return s.record(.update, query, attributesToUpdate, status: .success)
            } catch {
                return s.record(.update, query, attributesToUpdate, status: error.status)
            }
        }
    }

    /// `SecItemDelete` (§2.6).
    public func delete(_ query: SecItemDictionary) -> SecItemStatus {
        let device = device.state()
        return state.withLock { s in
            s.follow(device)
            do throws(EmulatorFailure) {
                try s.delete(query, groups: groups)
                return s.record(.delete, query, status: .success)
            } catch {
                return s.record(.delete, query, status: error.status)
            }
        }
    }

    // MARK: Scripting and inspection

    /// How the prompts the keychain shows end (default: the user authenticates). A read of an access-controlled
    /// item shows one when its query has no context that evaluated the item's access control and doesn't forbid
    /// UI: a library's own query with `u_OpPrompt`, say.
    public var promptOutcome: AuthenticationResult {
        get { state.withLock { $0.promptOutcome } }
        set { state.withLock { $0.promptOutcome = newValue } }
    }

    /// How many prompts the keychain has shown.
    public var promptsShown: Int { state.withLock { $0.promptsShown } }

    /// What an add with a match key does (default: ``MatchKeysInAdd/succeedWithoutStoring``, Apple's).
    public var matchKeysInAdd: MatchKeysInAdd {
        get { state.withLock { $0.matchKeysInAdd } }
        set { state.withLock { $0.matchKeysInAdd = newValue } }
    }

    /// What an add of an `akpu` item answers on a device without a passcode (§2.10): errSecNotAvailable by default,
    /// as Apple's regression test has it; iOS versions have answered errSecDecode and errSecAuthFailed too.
    public var akpuWithoutPasscodeStatus: SecItemStatus {
        get { state.withLock { $0.akpuWithoutPasscode } }
        set { state.withLock { $0.akpuWithoutPasscode = newValue } }
    }

    /// Whether a search that asks for data with a limit other than one (`r_Data` with `m_LimitAll`) is refused
    /// with errSecParam. Default false, as Apple's own code sends that combination (`SecTokenItemForEachMatching`,
    /// SecItem.m:2095–2114); Apple's documentation says password items can't combine the two, and a 2019 report
    /// saw errSecParam (`apple-secitem.md` §8.2 step 2): true scripts that keychain, for tests of a per-item
    /// fallback.
    public var refusesDataListings: Bool {
        get { state.withLock { $0.refusesDataListings } }
        set { state.withLock { $0.refusesDataListings = newValue } }
    }

    /// Every stored item of every group in the order they were added, whatever the device's state (after what
    /// the state removed: `akpu` items without a passcode; `biometryCurrentSet` items after an enrolment change
    /// stay, their data unreadable, §2.7).
    /// To seed an item in one of the app's groups, add it with that `agrp`.
    public var items: [Item] {
        let device = device.state()
        return state.withLock { s in
            s.follow(device)
            return s.rows.map(Item.init)
        }
    }
}

/// Everything the emulator keeps, under its lock.
struct EmulatorState: Sendable {
    /// The items, in the order they were added.
    var rows: [EmulatorRow] = []
    var nextRowID: Int64 = 1
    var calls: [SecItemEmulator.Call] = []
    var promptOutcome = AuthenticationResult.success
    var promptsShown = 0
    var matchKeysInAdd = SecItemEmulator.MatchKeysInAdd.succeedWithoutStoring
    var akpuWithoutPasscode = SecItemStatus.notAvailable
    var refusesDataListings = false

    /// `SecItemAdd` (SecItemServer.c:2688–2793, SecItemDb.c:290–373, §2.3).
    mutating func add(
        _ dictionary: SecItemDictionary, device: DeviceState, groups: EmulatorGroups
    ) throws(EmulatorFailure) {
        let query = try ParsedQuery.parse(dictionary, for: .add)
        // §2.3 items 1–2: the explicit group must be the app's; else the first of them.
        let group = try Self.explicitGroup(query, groups) ?? groups.first!
        // §2.3 item 8.
        if query.hasMatchKey {
            switch matchKeysInAdd {
            case .succeedWithoutStoring: return
            case .rejectWithParam: throw EmulatorFailure(.param)
            }
        }
        var attributes = query.attributes
        attributes[.accessGroup] = .string(group)
        // §2.3 item 3: no `sync` → 0; `syna` is skipped in an add (§2.11).
        attributes[.synchronizable] = .bool(attributes[.synchronizable] == .bool(true))
        // §2.3 item 4: `accc` sets `pdmn` to its protection; neither → `ak` ("The rest defaults to ak").
        var accessControl: SecAccessControlSpec?
        if case .accessControl(let spec)? = attributes.removeValue(forKey: .accessControl) {
            accessControl = spec
            attributes[.accessible] = .string(spec.protection)
        } else if attributes[.accessible] == nil {
            attributes[.accessible] = .string("ak")
        }
        // §2.3 item 7: `cdat` and `mdat` are always now, whatever the caller gave.
        attributes[.creationDate] = .date(device.now)
        attributes[.modificationDate] = .date(device.now)
        let row = EmulatorRow(
            rowID: nextRowID, itemClass: query.itemClass, attributes: attributes, data: query.valueData,
            accessControl: accessControl, enrolledSet: Self.enrolledSet(for: accessControl, device))
        // §2.3 item 11: the encrypt step needs the class key (§2.9) and, for `akpu`, a passcode (§2.10).
        try Self.checkCanEncrypt(row, device, akpuWithoutPasscode)
        // §2.2: the class's primary key is unique → errSecDuplicateItem (SecItemDb.c:345–349).
        let key = row.primaryKey
        let account = row.matchValue(of: .account)
        if rows.contains(where: { $0.matchValue(of: .account) == account && $0.primaryKey == key }) {
            throw EmulatorFailure(.duplicateItem)
        }
        rows.append(row)
        nextRowID += 1
    }

    /// `SecItemCopyMatching` (SecItemServer.c:2542–2666, SecItemDb.c:1039–1134, §2.4).
    mutating func copyMatching(
        _ dictionary: SecItemDictionary, device: DeviceState, groups: EmulatorGroups
    )
        throws(EmulatorFailure) -> SecItemResult
    {
        let query = try ParsedQuery.parse(dictionary, for: .copyMatching)
        _ = try Self.explicitGroup(query, groups)
        // Case-insensitive, host and certificate matching are not modelled: refused rather than ignored.
        if query.otherMatchKeys > 0 { throw EmulatorFailure(.unimplemented) }
        if refusesDataListings, query.returnData, !query.returnsOne { throw EmulatorFailure(.param) }
        var found: [EmulatorRow] = []
        var satisfied: Set<SecAccessControlSpec> = []
        // "First" is insertion order: the SQL has no ORDER BY (SecItemDb.c:845–897).
        for index in rows.indices where rows[index].matches(query, groups: groups) {
            let row = rows[index]
            // A row whose class key is unavailable fails the whole call (SecItemDb.c:1070–1080), attribute-only
            // reads too: the metadata keys are dropped on lock (§2.9).
            guard device.classKeyAvailable(row.protection) else { throw EmulatorFailure(.interactionNotAllowed) }
            // A row whose data can't be decrypted any more is skipped by reads that decrypt (SecItemDb.c:572–605, §2.4).
            if query.decryptsData, row.invalidated { continue }
            // Only reads that decrypt the secret need the user (SecDbKeychainItem.m:1019–1022).
            if query.decryptsData, !(try authorizeRead(row, query, satisfied: &satisfied)) { continue }
            found.append(row)
            if found.count >= query.limit { break }
        }
        // Zero matches → errSecItemNotFound (SecItemDb.c:1094–1101).
        if found.isEmpty { throw EmulatorFailure(.itemNotFound) }
        return query.result(for: found)
    }

    /// `SecItemUpdate` (SecItemServer.c:3129–3233, SecItemDb.c:1211–1390, §2.5): every match, in one transaction.
    mutating func update(
        _ dictionary: SecItemDictionary, _ changes: SecItemDictionary, device: DeviceState, groups: EmulatorGroups
    ) throws(EmulatorFailure) {
        let query = try ParsedQuery.parse(dictionary, for: .update)
        // No return key (SecItemServer.c l.3192–3201) and no match key, `m_Limit` included (SecItemDb.c:1298–1300).
        if query.returnsAnything || query.hasMatchKey { throw EmulatorFailure(.param) }
        _ = try Self.explicitGroup(query, groups)
        let (attributes, data) = try ParsedQuery.parseUpdate(changes, itemClass: query.itemClass)
        // A new `agrp` must be one of the app's too (§2.5).
        if case .string(let group)? = attributes[.accessGroup], !groups.contains(group) {
            throw EmulatorFailure(.missingEntitlement)
        }
        let matched = rows.indices.filter { rows[$0].matches(query, groups: groups) }
        // "No items updated" → errSecItemNotFound.
        if matched.isEmpty { throw EmulatorFailure(.itemNotFound) }
        var updated = rows
        for index in matched {
            let old = rows[index]
            // The old item is decrypted to be rewritten: its class key (§2.9) and its access control (§2.5).
            guard device.classKeyAvailable(old.protection) else { throw EmulatorFailure(.interactionNotAllowed) }
            try authorizeUpdate(old, query)
            var row = old
            for (key, value) in attributes where key != .accessControl { row.attributes[key] = value }
            // Setting `pdmn` or `accc` replaces the item's protection (SecItemDb.c:1363–1364).
            if case .accessControl(let spec)? = attributes[.accessControl] {
                row.accessControl = spec
                row.attributes[.accessible] = .string(spec.protection)
                row.enrolledSet = Self.enrolledSet(for: spec, device)
            } else if attributes[.accessible] != nil {
                row.accessControl = nil
                row.enrolledSet = nil
            }
            if let data { row.data = data }
            // `mdat` is now, and strictly younger than before; `cdat` stays (§2.5).
            if case .date(let before)? = old.attributes[.modificationDate] {
                let now = device.now > before ? device.now : before.addingTimeInterval(0.001)
                row.attributes[.modificationDate] = .date(now)
            }
            try Self.checkCanEncrypt(row, device, akpuWithoutPasscode)
            updated[index] = row
        }
        // Moving an item onto another's primary key fails the whole transaction: nothing changes (§2.2).
        var keys = Set<PrimaryKey>()
        for row in updated where !keys.insert(row.primaryKey).inserted { throw EmulatorFailure(.duplicateItem) }
        rows = updated
    }

    /// `SecItemDelete` (SecItemServer.c:3241–3322, SecItemDb.c:1392–1466, §2.6): every match. It needs no class key
    /// and no authentication: SecAccessControlCreateWithFlags always grants `odel` (SecAccessControl.m:218–248).
    mutating func delete(_ dictionary: SecItemDictionary, groups: EmulatorGroups) throws(EmulatorFailure) {
        let query = try ParsedQuery.parse(dictionary, for: .delete)
        // Any match key, `m_Limit` One or All included → errSecParam on iOS (SecItemServer.c l.3292–3295). Return
        // keys are ignored (no check).
        if query.hasMatchKey { throw EmulatorFailure(.param) }
        // A persistent reference together with other attributes → errSecParam.
        if query.persistentRef != nil, !query.attributes.isEmpty { throw EmulatorFailure(.param) }
        _ = try Self.explicitGroup(query, groups)
        let before = rows.count
        rows.removeAll { $0.matches(query, groups: groups) }
        // "Delete failed to delete anything" → errSecItemNotFound.
        if rows.count == before { throw EmulatorFailure(.itemNotFound) }
    }

    /// The query's explicit `agrp`, checked against the app's groups: an app with none, or a group outside
    /// them → errSecMissingEntitlement ("Client explicitly specifies access group %@ but is only entitled for
    /// %@", §2.3 item 2, §2.8).
    private static func explicitGroup(_ query: ParsedQuery, _ groups: EmulatorGroups) throws(EmulatorFailure) -> String?
    {
        if groups.isEmpty { throw EmulatorFailure(.missingEntitlement) }
        guard case .string(let group)? = query.attributes[.accessGroup] else { return nil }
        guard groups.contains(group) else { throw EmulatorFailure(.missingEntitlement) }
        return group
    }

    /// The enrolled set a `biometryCurrentSet` item is bound to.
    private static func enrolledSet(for spec: SecAccessControlSpec?, _ device: DeviceState) -> String? {
        guard let spec, spec.flags.contains(.biometryCurrentSet) else { return nil }
        return device.enrolledSet
    }

    /// Whether the row can be encrypted now: `akpu` needs a passcode (§2.10), every class its key (§2.9).
    private static func checkCanEncrypt(
        _ row: EmulatorRow, _ device: DeviceState, _ akpuStatus: SecItemStatus
    )
        throws(EmulatorFailure)
    {
        if row.protection == "akpu", !device.passcodeSet { throw EmulatorFailure(akpuStatus) }
        guard device.classKeyAvailable(row.protection) else { throw EmulatorFailure(.interactionNotAllowed) }
    }
}

/// The app's access groups as the emulator checks them: a list in the keychain's order, or the device's
/// entitlement (its default group first).
struct EmulatorGroups {
    let list: [String]?
    let device: any Device

    /// Where an add without `agrp` goes; nil when the app has no group.
    var first: String? { list.map(\.first) ?? device.defaultAccessGroup }
    /// Whether the app has no group at all.
    var isEmpty: Bool { first == nil }

    /// Whether `group` is one of the app's, byte for byte.
    func contains(_ group: String) -> Bool {
        guard let list else { return device.isEntitled(toAccessGroup: group) }
        return list.contains { ExactText.equal($0, group) }
    }
}

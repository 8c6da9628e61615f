import ApexKeychain
import ApexKeychainApple
import Foundation
import Synchronization
import Testing

/// What a prompt that passed on a ``RecordingDevice`` leaves: a distinct object per prompt, numbered in order.
final class RecordedContext: AuthenticationContext {
    /// 1 for the first prompt that passed, 2 for the next, and so on.
    let number: Int
    /// The request the prompt passed.
    let request: AuthenticationRequest

    init(number: Int, request: AuthenticationRequest) {
        self.number = number
        self.request = request
    }
}

/// The emulated keychain takes a recorded context as a phone's keychain takes an evaluated `LAContext`: it opens
/// the items of the access control its prompt passed.
extension RecordedContext: LocalAuthenticationContext {
    func hasEvaluated(_ accessControl: SecAccessControlSpec) -> Bool {
        request.accessControl.flags == accessControl.flags
    }
}

/// A ``Device`` that forwards to a ``SimulatedDevice`` and, for every prompt that passes, leaves a new
/// ``RecordedContext``. It keeps no context itself (only weak references, so a test can see one dropped).
final class RecordingDevice: Device {
    let inner: SimulatedDevice
    private let log = Mutex<(passed: Int, contexts: [WeakContext])>((0, []))

    struct WeakContext: @unchecked Sendable {
        weak var context: RecordedContext?
    }

    init(_ inner: SimulatedDevice = SimulatedDevice()) { self.inner = inner }

    var defaultService: String { inner.defaultService }
    var defaultAccessGroup: String { inner.defaultAccessGroup }
    func state() -> DeviceState { inner.state() }
    func authenticate(_ request: AuthenticationRequest) async -> AuthenticationResult {
        await inner.authenticate(request)
    }

    func evaluate(_ request: AuthenticationRequest) async -> Authentication {
        let result = await inner.authenticate(request)
        guard result == .success else { return Authentication(result: result) }
        let context = log.withLock { log in
            log.passed += 1
            let context = RecordedContext(number: log.passed, request: request)
            log.contexts.append(WeakContext(context: context))
            return context
        }
        return Authentication(result: result, context: context)
    }

    func whenSessionEnds(_ action: @escaping @Sendable () -> Void) { inner.whenSessionEnds(action) }
    func hasInstallMarker() throws -> Bool { try inner.hasInstallMarker() }
    func setInstallMarker() throws { try inner.setInstallMarker() }

    /// How many prompts passed (and left a context).
    var contextsGiven: Int { log.withLock { $0.passed } }

    /// Whether the context of prompt `number` is still alive somewhere.
    func isAlive(_ number: Int) -> Bool { log.withLock { $0.contexts[number - 1].context != nil } }
}

/// One call a ``RecordingDatabase`` saw, named by the accounts it concerns (U+0000 shown as `\0`).
enum DatabaseCall: Equatable, CustomStringConvertible {
    case add(String)
    case replace(String)
    case rename(String, to: String)
    case delete(String)
    case deleteMatching(String?)
    case attributes(String?)
    case attributesOrAccount(String?, String)
    case accounts(String?)
    /// `value(for:)` or `value(for:authentication:)`, with the number of the ``RecordedContext`` it was given
    /// (0 for another kind of context), nil for none.
    case value(String, context: Int?)
    case item(String)
    case itemsWithValues
    case beginExclusively, beginAtomically, end

    /// Whether the call writes.
    var isWrite: Bool {
        switch self {
        case .add, .replace, .rename, .delete, .deleteMatching: true
        default: false
        }
    }

    /// Whether the call reads a value.
    var readsValue: Bool {
        switch self {
        case .value, .item, .itemsWithValues: true
        default: false
        }
    }

    var description: String {
        func shown(_ account: String?) -> String {
            account.map { $0.replacingOccurrences(of: "\u{0}", with: "\\0") } ?? "*"
        }
        switch self {
        case .add(let a): return "add \(shown(a))"
        case .replace(let a): return "replace \(shown(a))"
        case .rename(let a, let b): return "rename \(shown(a)) -> \(shown(b))"
        case .delete(let a): return "delete \(shown(a))"
        case .deleteMatching(let a): return "delete matching \(shown(a))"
        case .attributes(let a): return "attributes \(shown(a))"
        case .attributesOrAccount(let a, let b): return "attributes \(shown(a)) or \(shown(b))"
        case .accounts(let a): return "accounts \(shown(a))"
        case .value(let a, let context): return "value \(shown(a)) context \(context.map(String.init) ?? "none")"
        case .item(let a): return "item \(shown(a))"
        case .itemsWithValues: return "items with values"
        case .beginExclusively: return "exclusively {"
        case .beginAtomically: return "atomically {"
        case .end: return "}"
        }
    }
}

/// A ``KeychainDatabase`` that forwards every call to another and records it; it can fail chosen calls with a
/// status (before they reach the database), and with `deviceRules` it answers as a device's keychain answers for
/// items with access control (`apple-secitem.md` §2.5, §2.7):
/// - a value is read only with a ``RecordedContext`` or `SimulatedDevice.Evaluation` whose request names the
///   item's own access control; without one, `interactionNotAllowed`;
/// - `replace` and `rename` of an item with access control would need the user: they fail with `authFailed` and
///   record an issue, since the core must never call them.
final class RecordingDatabase: KeychainDatabase {
    let inner: any KeychainDatabase
    let deviceRules: Bool
    private let state = Mutex<(calls: [DatabaseCall], fault: (@Sendable (DatabaseCall) -> KeychainDatabaseError?)?)>(
        ([], nil))

    init(_ inner: any KeychainDatabase = InMemoryKeychainDatabase(), deviceRules: Bool = false) {
        self.inner = inner
        self.deviceRules = deviceRules
    }

    /// Every call so far, in order.
    var calls: [DatabaseCall] { state.withLock { $0.calls } }

    /// Forgets the calls recorded so far.
    func resetCalls() { state.withLock { $0.calls = [] } }

    /// The calls so far without the scopes (`exclusively`, `atomically`).
    var operations: [DatabaseCall] {
        calls.filter { ![.beginExclusively, .beginAtomically, .end].contains($0) }
    }

    /// Makes every call for which `fault` answers an error fail with it, without reaching the database.
    func fail(_ fault: (@Sendable (DatabaseCall) -> KeychainDatabaseError?)?) { state.withLock { $0.fault = fault } }

    private func record(_ call: DatabaseCall) throws(KeychainDatabaseError) {
        let fault = state.withLock { state in
            state.calls.append(call)
            return state.fault
        }
        if let error = fault?(call) { throw error }
    }

    private func accessControl(of key: ItemAttributes.PrimaryKey) -> AccessControlFlags? {
        let query = ItemQuery(
            itemClass: key.itemClass, service: key.service, account: key.account, accessGroup: key.accessGroup)
        return (try? inner.attributes(matching: query))?.first { $0.primaryKey == key }?.accessControl
    }

    private func checkOpens(
        _ key: ItemAttributes.PrimaryKey, _ context: (any AuthenticationContext)?
    ) throws(KeychainDatabaseError) {
        guard deviceRules, let flags = accessControl(of: key), !flags.isEmpty else { return }
        let evaluated: AccessControl? =
            (context as? RecordedContext)?.request.accessControl
            ?? (context as? SimulatedDevice.Evaluation)?.request.accessControl
        guard let evaluated, evaluated.flags == flags else {
            throw KeychainDatabaseError(.interactionNotAllowed, "the item needs authentication", osStatus: -25308)
        }
    }

    private func checkChangeable(_ key: ItemAttributes.PrimaryKey, _ what: String) throws(KeychainDatabaseError) {
        guard deviceRules, let flags = accessControl(of: key), !flags.isEmpty else { return }
        Issue.record("\(what) of an item with access control (\(key.account.debugDescription)): it would prompt")
        throw KeychainDatabaseError(.authFailed, "an update of an item with access control needs the user")
    }

    func add(_ item: KeychainItem) throws(KeychainDatabaseError) {
        try record(.add(item.attributes.account))
        try inner.add(item)
    }

    func replace(_ key: ItemAttributes.PrimaryKey, with item: KeychainItem) throws(KeychainDatabaseError) {
        try record(.replace(key.account))
        try checkChangeable(key, "replace")
        if deviceRules, !item.attributes.accessControl.isEmpty {
            Issue.record("replace with an item with access control: an update can't set it without the user")
        }
        try inner.replace(key, with: item)
    }

    func rename(_ key: ItemAttributes.PrimaryKey, toAccount account: String) throws(KeychainDatabaseError) {
        try record(.rename(key.account, to: account))
        try checkChangeable(key, "rename")
        try inner.rename(key, toAccount: account)
    }

    func attributes(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ItemAttributes] {
        try record(.attributes(query.account))
        return try inner.attributes(matching: query)
    }

    func attributes(
        matching query: ItemQuery, orAccount account: String
    ) throws(KeychainDatabaseError)
        -> [ItemAttributes]
    {
        try record(.attributesOrAccount(query.account, account))
        return try inner.attributes(matching: query, orAccount: account)
    }

    func accounts(matching query: ItemQuery) throws(KeychainDatabaseError) -> [String] {
        try record(.accounts(query.account))
        return try inner.accounts(matching: query)
    }

    func value(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Data {
        try record(.value(key.account, context: nil))
        try checkOpens(key, nil)
        return try inner.value(for: key)
    }

    func value(
        for key: ItemAttributes.PrimaryKey, authentication: (any AuthenticationContext)?
    ) throws(KeychainDatabaseError) -> Data {
        let number = authentication.map { ($0 as? RecordedContext)?.number ?? 0 }
        try record(.value(key.account, context: number))
        try checkOpens(key, authentication)
        return try inner.value(for: key, authentication: authentication)
    }

    func item(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> KeychainItem? {
        try record(.item(key.account))
        try checkOpens(key, nil)
        return try inner.item(for: key)
    }

    func itemsWithValues(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ListedItem] {
        try record(.itemsWithValues)
        return try inner.itemsWithValues(matching: query)
    }

    func delete(matching query: ItemQuery) throws(KeychainDatabaseError) -> Int {
        try record(.deleteMatching(query.account))
        return try inner.delete(matching: query)
    }

    func delete(_ key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Bool {
        try record(.delete(key.account))
        return try inner.delete(key)
    }

    func exclusively<T>(_ body: () throws -> T) throws -> T {
        try record(.beginExclusively)
        defer { try? record(.end) }
        return try inner.exclusively(body)
    }

    func atomically<T>(_ body: () throws -> T) throws -> T {
        try record(.beginAtomically)
        defer { try? record(.end) }
        return try inner.atomically(body)
    }

    func problem(with device: any Device) -> String? { inner.problem(with: device) }
}

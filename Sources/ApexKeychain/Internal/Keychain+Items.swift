import Foundation

/// How a ``Keychain`` finds, writes and reads its items in the database.
///
/// No step of a write changes an item with access control, on any database: an update of one could need the
/// user (`apple-secitem.md` §2.5), and a write never prompts. So a write calls `replace` only when neither the
/// old item nor the new one has access control, and `rename` never touches an item with access control.
///
/// - A write without access control over an item without it replaces the old item in place.
/// - Any other overwrite is staged (seed 000): the new item is added under a staging account (`<key>` + U+0000 +
///   `staged`, which no key can equal since keys can't hold U+0000), which proves it can be stored; then the old
///   item is deleted, the new one is added under its key, and the staged one is deleted. The four writes run in
///   `database.atomically`: undone together where the database groups writes; on a device's keychain, where each
///   call stands alone, their order keeps the write atomic (the old item or the new one, never neither).
/// - What the caller is told follows what the key holds. A failure at the first two steps is the write's: the old
///   item is still there (beside it, a staged one is an abandoned write). Once the old item went, the write has
///   happened: the staged item is the key's item (see below), so a failure of the last two steps is not reported
///   (they are left to the settling). A lone staged item's replacement has happened once its add did.
/// - A write without access control whose replace the database refuses because the old item is locked away
///   (`interactionNotAllowed`) is staged too: staging never changes the old item.
///
/// Whoever next finds a staged item settles it. Beside the key's own item it is an abandoned write, and is
/// deleted. Alone, it is the key's item (the write stopped after the old item went): one without access control
/// is moved into place by a read; one with access control stays where it is, since it can't be changed without
/// its value, and is the key's item for reads (its value read with the read's prompt), its description, the
/// listing of keys and removal. The next write of the key adds the new item under the key and then deletes the
/// staged one.
extension Keychain {
    struct Protection {
        var accessible: Accessible
        var accessControl: AccessControl
        var authValidity: Int
        var synchronizable: Bool
        var keyStorage: KeyStorage?
    }

    struct ReadResult {
        var value: Data
        var label: String?
    }

    static let stagingSuffix = "\u{0}staged"

    /// The UTF-8 bytes of a stored string, copied from the string's own storage where it has one (the generic
    /// `Data(text.utf8)` goes element by element).
    static func utf8(_ text: String) -> Data {
        var text = text
        return text.withUTF8 { Data($0) }
    }

    static func stagingAccount(_ key: String) -> String { key + stagingSuffix }

    static func key(ofAccount account: String) -> String {
        let suffix = stagingSuffix.utf8
        let bytes = account.utf8
        guard bytes.count >= suffix.count, bytes.suffix(suffix.count).elementsEqual(suffix) else { return account }
        return String(decoding: bytes.dropLast(suffix.count), as: UTF8.self)
    }

    /// The package's own items of this service, or the one under `account`.
    func ownQuery(account: String? = nil) -> ItemQuery {
        ItemQuery(
            itemClass: .genericPassword, service: service, account: account, accessGroup: accessGroup,
            creator: apexCreator)
    }

    func protection(for set: SetOptions) throws(KeychainError) -> Protection {
        let protection = Protection(
            accessible: set.accessible ?? options.accessible ?? Self.defaultAccessible,
            accessControl: set.accessControl ?? options.accessControl ?? .none,
            authValidity: set.authValidity ?? options.authValidity ?? 0,
            synchronizable: set.synchronizable ?? options.synchronizable ?? false,
            keyStorage: set.android?.keyStorage ?? options.android?.keyStorage)
        try Validation.protection(
            accessible: protection.accessible, accessControl: protection.accessControl,
            authValidity: protection.authValidity, synchronizable: protection.synchronizable)
        var effective = protection
        // With no access control, authValidity has nothing to open and is ignored.
        if protection.accessControl == .none { effective.authValidity = 0 }
        if protection.synchronizable, device.state().platform.isAndroid {
            effective.synchronizable = false
            warnSynchronizableIgnored()
        }
        return effective
    }

    /// Android has no iCloud Keychain: the option is ignored, and the device is told once.
    func warnSynchronizableIgnored() {
        context.warnOnce(
            device, .synchronizableIgnored,
            "synchronizable is ignored on Android: items of service '\(service)' stay on this device")
    }

    // MARK: Writing

    /// What a write checked before it touched the database, for the write to go on with.
    struct Preflight {
        var protection: Protection
        /// The device's state the checks were made on.
        var state: DeviceState
        /// Where the item's key lives (Android).
        var securityLevel: HardwareSecurityLevel?
    }

    /// A write's preflight: every check it makes before the database, in the order of C1 (docs/CONFORMANCE.md):
    /// the key and the label, the options and their combinations, the entitlement and the install check, what the
    /// device can give (never weaker), then the lock state for the class written. The write and ``checkWrite`` both
    /// call it, so a dry run answers what the write does; the one check left, who holds the key, is
    /// ``refuseForeignHolder(_:among:)``, which the write makes inside its transaction.
    func preflight(_ key: String, label: String?, _ set: SetOptions) throws(KeychainError) -> Preflight {
        try Validation.name(key, "key")
        if let label { try Validation.storedString(label, "label") }
        let protection = try protection(for: set)
        let state = try prepare(writing: true)
        let outcome = ProtectionPolicy.check(
            accessible: protection.accessible, accessControl: protection.accessControl,
            authValidity: protection.authValidity, keyStorage: protection.keyStorage, state: state)
        if let failure = outcome.failure { throw failure }
        try checkUnlocked(protection.accessible, state, key: key)
        return Preflight(protection: protection, state: state, securityLevel: outcome.securityLevel)
    }

    /// The write's rule for the items found under a key (000-12): another library's item there refuses the write.
    /// Only the key's own account counts: whatever sits under its staging account is settled or ignored.
    func refuseForeignHolder(_ key: String, among found: [ItemAttributes]) throws(KeychainError) {
        if found.contains(where: { !$0.isApexItem && ExactText.equal($0.account, key) }) {
            throw Self.heldByAnotherLibrary(key, service)
        }
    }

    static func heldByAnotherLibrary(_ key: String, _ service: String) -> KeychainError {
        .invalid("key '\(key)' of service '\(service)' is held by another library's item")
    }

    /// The package's item a write stores under `key`: its attributes and metadata from what the preflight checked.
    func newItem(
        _ key: String, _ value: Data, encoding: ItemMetadata.Encoding, label: String?, _ checked: Preflight
    ) -> KeychainItem {
        let (protection, state) = (checked.protection, checked.state)
        let metadata = ItemMetadata(
            encoding: encoding, accessControl: protection.accessControl, authValidity: protection.authValidity,
            hasLabel: label != nil,
            enrolledSet: protection.accessControl.isBoundToCurrentSet ? state.enrolledSet : nil,
            stateHash: protection.accessControl.isBoundToCurrentSet ? state.biometryStateHash : nil,
            osMajor: state.platform.majorVersion, securityLevel: checked.securityLevel)
        return KeychainItem(
            attributes: ItemAttributes(
                itemClass: .genericPassword, service: service, account: key, accessGroup: accessGroup,
                creator: apexCreator, label: label, generic: context.encoded(metadata),
                protectionDomain: protection.accessible.protectionDomain,
                accessControl: protection.accessControl.flags, synchronizable: protection.synchronizable,
                createdAt: state.now, modifiedAt: state.now),
            value: value)
    }

    /// Writes an item. With `expecting`, only when the key still holds what the caller saw, checked in the
    /// same database transaction as the write: returns false, having written nothing, when it does not.
    @discardableResult
    func write(
        _ key: String, _ value: Data, encoding: ItemMetadata.Encoding, label: String?, _ set: SetOptions,
        expecting: ExpectedHolder? = nil
    ) throws(KeychainError) -> Bool {
        let checked = try preflight(key, label: label, set)
        let protection = checked.protection
        // A constant: the closures below borrow it, where a captured variable would be copied to each call.
        let item = newItem(key, value, encoding: encoding, label: label, checked)

        return try run {
            try database.exclusively {
                let current = try settle(key, foreignIsError: true, movingLoneStaged: false)
                if let expecting, !expecting.matches(current) { return false }
                guard let current else {
                    try database.add(item)
                    return true
                }
                var replacement = item
                replacement.attributes.createdAt = current.createdAt
                if !ExactText.equal(current.account, key) {
                    // A staged write left alone holds the key: the new item goes under the key, then the staged one
                    // goes (stopped in between, the new item is the key's and the staged one an abandoned write).
                    try database.atomically {
                        try database.add(replacement)
                        Self.leftToSettling { try database.delete(current.primaryKey) }
                    }
                    return true
                }
                if protection.accessControl == .none, !Self.hasAccessControl(current) {
                    do {
                        try database.replace(current.primaryKey, with: replacement)
                        return true
                    } catch let error as KeychainDatabaseError where error.status == .interactionNotAllowed {
                        // The old item is locked away and the failed replace changed nothing: stage instead.
                    }
                }
                // Four writes; on a device, their order keeps the old item or the new one. A failure of the first
                // two is the write's (undone together where the database groups writes); after them it happened.
                var staged = replacement
                staged.attributes.account = Self.stagingAccount(key)
                try database.atomically {
                    try database.add(staged)
                    try database.delete(current.primaryKey)
                    Self.leftToSettling {
                        try database.add(replacement)
                        try database.delete(staged.attributes.primaryKey)
                    }
                }
                return true
            }
        }
    }

    /// The steps of a write after the one that made it happen: a failure leaves what the next look settles into
    /// the written item, so the caller is told of none (inside `atomically`, the writes before are kept).
    static func leftToSettling(_ steps: () throws -> Void) {
        try? steps()
    }

    /// Whether `item` (one of the package's) has access control, or may have: its flags, or, when they are
    /// empty, its metadata (an item whose metadata can't be read counts as protected). Such an item is never
    /// replaced or renamed.
    static func hasAccessControl(_ item: ItemAttributes) -> Bool {
        guard item.accessControl.isEmpty, let metadata = ItemMetadata(item.generic) else { return true }
        return metadata.accessControl != AccessControl.none
    }

    /// Finds the item under `key` and settles a staged write left behind, returning the item that holds the key:
    /// the key's own item (a staged one beside it is deleted), or a staged one alone. With `movingLoneStaged`, a
    /// lone staged item without access control is moved into place (and returned under the key) where the
    /// database allows it; one with access control is never moved (see the extension's rules).
    /// Must run inside `database.exclusively`.
    func settle(_ key: String, foreignIsError: Bool, movingLoneStaged: Bool) throws -> ItemAttributes? {
        // The key and its staging account in one look-up.
        let stagingAccount = Self.stagingAccount(key)
        let found = try database.attributes(
            matching: ItemQuery(itemClass: .genericPassword, service: service, account: key, accessGroup: accessGroup),
            orAccount: stagingAccount)
        if foreignIsError { try refuseForeignHolder(key, among: found) }
        var own: ItemAttributes?
        var staged: ItemAttributes?
        for item in found {
            if ExactText.equal(item.account, key) {
                if own == nil, item.isApexItem { own = item }
            } else if staged == nil, item.isApexItem, ExactText.equal(item.account, stagingAccount) {
                staged = item
            }
        }
        guard let staged else { return own }
        if let own {
            try database.delete(staged.primaryKey)
            return own
        }
        guard movingLoneStaged, !Self.hasAccessControl(staged) else { return staged }
        do {
            try database.rename(staged.primaryKey, toAccount: key)
        } catch {
            // Locked away: it stays where it is, the key's item all the same.
            guard error.status == .interactionNotAllowed else { throw error }
            return staged
        }
        var moved = staged
        moved.account = key
        return moved
    }

    // MARK: Reading

    /// The package's item under `key`: its own, or a staged write alone (settled as ``settle(_:foreignIsError:movingLoneStaged:)``
    /// settles it for a read). Attributes only: it never reads a value, so it never needs a context.
    func current(_ key: String) throws(KeychainError) -> ItemAttributes? {
        let own = try run { () throws(KeychainDatabaseError) in
            try database.attributes(matching: ownQuery(account: key))
        }
        if let item = own.first { return item }
        let staged = try run { () throws(KeychainDatabaseError) in
            try database.accounts(matching: ownQuery(account: Self.stagingAccount(key)))
        }
        if staged.isEmpty { return nil }
        return try run {
            try database.exclusively { try settle(key, foreignIsError: false, movingLoneStaged: true) }
        }
    }

    /// Whether the package has an item under `key` (its own, or a staged write alone), from the accounts of the
    /// two look-ups, which never read a value. A look-up the keychain answers `interactionNotAllowed` found an
    /// item it can't open now (seed 000: "errSecInteractionNotAllowed, which means the item exists").
    func exists(_ key: String) throws(KeychainError) -> Bool {
        do {
            if try !database.accounts(matching: ownQuery(account: key)).isEmpty { return true }
            return try !database.accounts(matching: ownQuery(account: Self.stagingAccount(key))).isEmpty
        } catch  where error.status == .interactionNotAllowed {
            return true
        } catch {
            throw map(error, key: key)
        }
    }

    /// An item found for a read, checked as every read checks it before a prompt and before its value: the
    /// device unlocked as its class needs, and the item still valid.
    struct Found {
        var item: ItemAttributes
        var metadata: ItemMetadata
        var label: String?
        /// The device's state the checks were made on.
        var state: DeviceState
    }

    /// The item under `key`, checked for a read; nil when there is none.
    func findForRead(_ key: String, requireLabel: Bool = false) throws(KeychainError) -> Found? {
        try Validation.name(key, "key")
        let state = try prepare()
        guard let item = try current(key) else { return nil }
        let metadata = try metadata(of: item)
        let label = label(of: item, metadata)
        if requireLabel, label == nil {
            throw .invalid("item '\(key)' has no label, so it holds no username")
        }
        try checkUnlocked(item.protectionDomain.accessible ?? Self.defaultAccessible, state, key: key)
        try checkStillValid(item, metadata, state, key: key)
        return Found(item: item, metadata: metadata, label: label, state: state)
    }

    /// The value of an item found for a read, read with `authentication` (what the read's prompt left; nil for an
    /// item without access control); nil when it went in between.
    func value(
        of found: Found, key: String, authentication: (any AuthenticationContext)? = nil
    ) throws(KeychainError) -> Data? {
        do {
            return try database.value(for: found.item.primaryKey, authentication: authentication)
        } catch  where error.status == .itemNotFound {
            return nil
        } catch {
            // A context the keychain refused (invalidated, say) opens nothing more: the window that keeps it lets it
            // go now, so that the next read prompts.
            if let authentication, error.status == .authFailed || error.status == .interactionNotAllowed {
                context.prompts.forget(authentication)
            }
            throw map(error, key: key)
        }
    }

    /// Reads the item under `key`. An item with access control is opened by one prompt of its own access control
    /// (or an open authValidity window), and the context the prompt left reaches the database's read of the
    /// value, so that the user sees one prompt, not two (seed 000).
    func read(_ key: String, prompt: Prompt?, requireLabel: Bool = false) async throws(KeychainError) -> ReadResult? {
        guard let found = try findForRead(key, requireLabel: requireLabel) else { return nil }
        let (metadata, label, state) = (found.metadata, found.label, found.state)

        var authentication: (any AuthenticationContext)?
        if metadata.accessControl != .none {
            if let failure = ProtectionPolicy.usageDescriptionFailure(metadata.accessControl, state) { throw failure }
            var shown = (prompt ?? Prompt()).merged(over: options.prompt)
            if shown.confirmationRequired == nil { shown.confirmationRequired = true }
            let request = AuthenticationRequest(
                policy: Self.policy(metadata.accessControl), prompt: shown, service: service, key: key,
                accessControl: metadata.accessControl, accessible: found.item.protectionDomain.accessible)
            let outcome = await context.prompts.authorize(
                device: device, request: request, authValidity: metadata.authValidity)
            try Self.check(outcome.result, metadata.accessControl, device.state())
            authentication = outcome.context
        }
        return try value(of: found, key: key, authentication: authentication).map {
            ReadResult(value: $0, label: label)
        }
    }

    func metadata(of item: ItemAttributes) throws(KeychainError) -> ItemMetadata {
        guard let metadata = ItemMetadata(item.generic), metadata.accessControl.flags == item.accessControl,
            item.protectionDomain.accessible != nil
        else {
            throw KeychainError(
                .INTERNAL, "item '\(Self.key(ofAccount: item.account))' of service '\(service)' has damaged metadata")
        }
        return metadata
    }

    func label(of item: ItemAttributes, _ metadata: ItemMetadata) -> String? {
        metadata.hasLabel ? (item.label ?? "") : nil
    }

    // MARK: Device rules at read and write time

    func checkUnlocked(_ accessible: Accessible, _ state: DeviceState, key: String) throws(KeychainError) {
        if !state.unlockedSinceBoot {
            throw KeychainError(
                .INTERACTION_NOT_ALLOWED, "item '\(key)' can't be used before the device is first unlocked")
        }
        if state.isLocked, accessible.requiresUnlockedDevice {
            throw KeychainError(
                .INTERACTION_NOT_ALLOWED, "item '\(key)' is '\(accessible.rawValue)' and the device is locked")
        }
    }

    /// An item the platform has invalidated is gone for good: it is removed and the read fails.
    /// - An item with access control, once the passcode is removed (its key needs authentication). A
    ///   `whenPasscodeSetThisDeviceOnly` item without access control too, except on Android, where only a key
    ///   with authentication is invalidated.
    /// - A `biometryCurrentSet*` item once the enrolled set changed: the keychain and the Keystore invalidate it
    ///   whatever the OS version.
    /// - The package's own check: the biometric state hash kept at write time differs from today's, under the
    ///   same major OS version only (the platform may report another hash after a major update).
    func checkStillValid(
        _ item: ItemAttributes, _ metadata: ItemMetadata, _ state: DeviceState, key: String
    ) throws(KeychainError) {
        var reason: String?
        let passcodeBound =
            metadata.accessControl != .none
            || (item.protectionDomain == .akpu && !state.platform.isAndroid)
        if passcodeBound && !state.passcodeSet {
            reason = "the device passcode was removed"
        } else if metadata.accessControl.isBoundToCurrentSet {
            // Byte for byte: the platform's identifiers are bytes, and canonically equivalent text is another set.
            let setChanged = !ExactText.equal(metadata.enrolledSet, state.enrolledSet)
            // A state the platform can't report now (nil while biometrics are locked out) is no change.
            let hashChanged =
                metadata.stateHash != nil && state.biometryStateHash != nil
                && metadata.osMajor == state.platform.majorVersion
                && !ExactText.equal(metadata.stateHash, state.biometryStateHash)
            if setChanged || hashChanged { reason = "the enrolled biometrics changed" }
        }
        guard let reason else { return }
        try run { () throws(KeychainDatabaseError) in try database.delete(item.primaryKey) }
        throw KeychainError(.KEY_INVALIDATED, "item '\(key)' was invalidated because \(reason); it has been removed")
    }

    static func policy(_ accessControl: AccessControl) -> AuthenticationRequest.Policy {
        switch accessControl {
        case .passcode: .passcodeOnly
        case .biometryAnyOrPasscode, .biometryCurrentSetOrPasscode: .biometryOrPasscode
        case .none, .biometryAny, .biometryCurrentSet: .biometryOnly
        }
    }

    static func check(
        _ result: AuthenticationResult, _ accessControl: AccessControl, _ state: DeviceState
    ) throws(KeychainError) {
        switch result {
        case .success: return
        case .canceled: throw KeychainError(.USER_CANCELED, "the user canceled the prompt")
        case .fallback:
            // Only a biometry-only prompt has a fallback of its own; on the others it is the passcode.
            guard policy(accessControl) == .biometryOnly else {
                throw KeychainError(.USER_CANCELED, "the prompt ended without authentication")
            }
            throw KeychainError(.USER_FALLBACK, "the user chose the fallback button")
        case .failed: throw KeychainError(.AUTHENTICATION_FAILED, "the user failed to authenticate")
        case .lockout: throw KeychainError(.BIOMETRY_LOCKOUT, "biometrics are locked out after too many attempts")
        case .notInteractive:
            throw KeychainError(.INTERACTION_NOT_ALLOWED, "the item needs a prompt, and none can be shown here")
        case .unavailable:
            if !accessControl.usesBiometry || (accessControl.acceptsPasscode && !state.passcodeSet) {
                throw KeychainError(.PASSCODE_NOT_SET, "the item needs a device passcode, and none is set")
            }
            if state.biometry == nil {
                throw KeychainError(.BIOMETRY_NOT_AVAILABLE, "the device has no biometric sensor")
            }
            throw KeychainError(.BIOMETRY_NOT_ENROLLED, "no biometrics are enrolled")
        }
    }

    // MARK: Errors

    /// Runs database calls, turning their errors into ``KeychainError``s that name this service.
    @discardableResult
    func run<T>(_ body: () throws -> T) throws(KeychainError) -> T {
        do {
            return try body()
        } catch let error as KeychainError {
            throw error
        } catch let error as KeychainDatabaseError {
            throw map(error, key: nil)
        } catch {
            throw KeychainError(.INTERNAL, "service '\(service)': \(error)")
        }
    }

    func map(_ error: KeychainDatabaseError, key: String?) -> KeychainError {
        let subject = key.map { "item '\($0)' of service '\(service)'" } ?? "service '\(service)'"
        switch error.status {
        case .interactionNotAllowed:
            return KeychainError(.INTERACTION_NOT_ALLOWED, "\(subject) can't be used now: \(error.message)")
        case .damaged:
            return KeychainError(.INTERNAL, "\(subject) is damaged: \(error.message)")
        case .authFailed:
            return KeychainError(.AUTHENTICATION_FAILED, "\(subject): the keychain refused the authentication")
        case .userCanceled:
            return KeychainError(.USER_CANCELED, "\(subject): the user canceled the prompt")
        case .missingEntitlement:
            return KeychainError(
                .MISSING_ENTITLEMENT, "\(subject): the app is not entitled to access group '\(accessGroup)'")
        case .notAvailable:
            return KeychainError(.INTERNAL, "\(subject): the keychain is not available: \(error.message)")
        case .duplicateItem, .itemNotFound, .io, .invalidQuery, .other:
            let number = error.osStatus.map { " (OSStatus \($0))" } ?? ""
            return KeychainError(.INTERNAL, "\(subject): database error: \(error.message)\(number)")
        }
    }
}

import ApexDumpModel
import ApexKeychain
import Foundation

/// How an ``Applier`` writes one item and reads it back.
extension Applier {
    /// Writes one item, inside its batch's transaction. With `removeSource`, the source items the plan approved
    /// under the target key (`replaces`: the item's own source, or stale copies of it) make room first: the own
    /// source alone, when neither it nor the target has access control, is turned into the target in one call
    /// (``Keychain/convert(_:to:_:_:)``); else they are journalled and parked, and put back at once when the write
    /// does not happen.
    func write(_ ready: Ready, _ planned: PlannedAction) -> Written {
        if let original = ready.conversion {
            do throws(KeychainError) {
                guard
                    let key = try ready.keychain.convert(
                        original.attributes.primaryKey, to: ready.target.key,
                        try Self.absentValue(ready.item.value, ready.target), ready.target.options)
                else { return .changed }
                return .written(.converted(original: original, at: key))
            } catch {
                return .failed(ItemOutcome(refusal: error))
            }
        }
        var parked: [ParkedItem] = []
        do {
            if policy.removeSource, !planned.replaces.isEmpty {
                parked = try park(planned.replaces, for: ready.target)
            }
            if try !write(ready.item.value, ready.target, ready.keychain, expecting: planned.expected) {
                if !parked.isEmpty { try putBack(parked, for: ready.target, removingTarget: false) }
                return .changed
            }
            return .written(parked.isEmpty ? .nothing : .parked(parked))
        } catch {
            var outcome =
                (error as? KeychainError).map(ItemOutcome.init(refusal:))
                ?? ItemOutcome(.failed, cause: .keychain(.INTERNAL), reason: "\(error)")
            if !parked.isEmpty { outcome = putBack(parked, for: ready.target, noting: outcome) }
            return .failed(outcome)
        }
    }

    /// The source item that the write of `ready` may turn into its target in place: its own source, the only
    /// item under the target key, as the listing found it (with its value, to put back), when neither has access
    /// control, with `removeSource`. Nil when the holders are parked instead.
    func convertible(_ ready: Ready, _ planned: PlannedAction) -> KeychainItem? {
        guard policy.removeSource, let source, planned.replaces.count == 1,
            let own = source.keys[ready.item.origin.location],
            planned.replaces[0] == own, !source.withAccessControl.contains(own),
            (ready.target.options.accessControl ?? AccessControl.none) == AccessControl.none,
            let attributes = source.listedForeign[own], let value = source.listedValues[own]
        else { return nil }
        return KeychainItem(attributes: attributes, value: value)
    }

    /// A written item that did not read back as it was written.
    static let differs = ItemOutcome(
        .unverified, cause: .readBackDiffers,
        reason: "the item read back differs from what was written" + Remedy.readBack)

    /// Reads a written item without access control back, inside the transaction after its own: verified, or
    /// unverified when it differs or can't be read.
    func verifyWithoutPrompt(_ ready: Ready) -> ItemOutcome {
        do throws(KeychainError) {
            return compare(try ready.keychain.readBack(ready.target.key, writtenWith: ready.target.options), ready)
        } catch {
            return ItemOutcome(unreadable: error)
        }
    }

    /// What a read-back found, against what was written: verified when the item has the target's protection and
    /// holds the value (and, for credentials, the username as its label).
    func compare(_ found: Keychain.ReadBack, _ ready: Ready) -> ItemOutcome {
        guard case .read(let info, let value, let label) = found, Planner.sameProtection(info, ready.target) else {
            return Self.differs
        }
        switch ready.item.value {
        case .credentials(let username, let password):
            return Planner.same(label, username) && value == Data(password.utf8) ? ItemOutcome(.verified) : Self.differs
        case .value(let data):
            return value == data ? ItemOutcome(.verified) : Self.differs
        case .sealed:
            return Self.differs
        }
    }

    /// Reads a written item back: verified, or unverified when it differs or can't be read. An item with access
    /// control is read with the context of the run's prompt, when the source's protected items were read through
    /// one (no prompt of its own); through a prompt of its own when there is none, or it doesn't open the item.
    func verify(_ ready: Ready) async -> ItemOutcome {
        if let outcome = verifyWithSharedContext(ready) { return outcome }
        do throws(KeychainError) {
            if try await verify(ready.item.value, ready.target, ready.keychain) { return ItemOutcome(.verified) }
            return Self.differs
        } catch {
            return ItemOutcome(unreadable: error)
        }
    }

    /// The read-back of an item with access control through a context the run's prompt left, its protection and
    /// its value in one read; nil when there is none, or it doesn't open the item (the caller then prompts).
    func verifyWithSharedContext(_ ready: Ready) -> ItemOutcome? {
        guard let authentications = source?.authentications, !authentications.isEmpty else { return nil }
        let control = ready.target.options.accessControl ?? .none
        // Only the context evaluated for this access control opens the item; without one, the caller prompts.
        guard let context = authentications.first(where: { $0.accessControl == control })?.context else { return nil }
        do throws(KeychainError) {
            return compare(
                try ready.keychain.readBack(
                    ready.target.key, writtenWith: ready.target.options, authentication: context), ready)
        } catch  where error.code == .AUTHENTICATION_FAILED || error.code == .INTERACTION_NOT_ALLOWED {
            return nil
        } catch {
            return ItemOutcome(unreadable: error)
        }
    }

    /// Writes the item if the target key still holds what the plan saw; false, with nothing written, if not.
    func write(
        _ value: SourceValue, _ target: TargetItem, _ keychain: Keychain, expecting: Keychain.ExpectedHolder
    ) throws(KeychainError) -> Bool {
        if expecting == .absent {
            // The plan saw the key absent: one add, which the keychain refuses if an item holds the key since.
            return try keychain.addAbsent(target.key, try Self.absentValue(value, target), target.options)
        }
        switch (value, target.kind) {
        case (.credentials(let username, let password), .credentials):
            let options = target.options
            return try keychain.setCredentials(
                Credentials(username: username, password: password),
                CredentialsOptions(
                    server: Self.server(of: target.key), accessible: options.accessible,
                    accessControl: options.accessControl, authValidity: options.authValidity,
                    synchronizable: options.synchronizable, android: options.android),
                expecting: expecting)
        case (.value(let data), .string):
            return try keychain.setItem(target.key, utf8: data, target.options, expecting: expecting)
        case (.value(let data), .bytes):
            return try keychain.setBytes(target.key, data, target.options, expecting: expecting)
        default:
            throw KeychainError(.INVALID_ARGUMENT, "the source value does not fit a '\(target.kind.rawValue)' item")
        }
    }

    /// What the migration's own writes (``Keychain/addAbsent(_:_:_:)``, ``Keychain/convert(_:to:_:_:)``) store of
    /// `value` as a `target.kind` item.
    /// - Throws: `INVALID_ARGUMENT` when the value does not fit the kind.
    static func absentValue(_ value: SourceValue, _ target: TargetItem) throws(KeychainError) -> Keychain.AbsentValue {
        switch (value, target.kind) {
        case (.credentials(let username, let password), .credentials):
            .credentials(Credentials(username: username, password: password), server: server(of: target.key))
        case (.value(let data), .string): .string(data)
        case (.value(let data), .bytes): .bytes(data)
        default:
            throw KeychainError(.INVALID_ARGUMENT, "the source value does not fit a '\(target.kind.rawValue)' item")
        }
    }

    /// Reads the item back: its attributes without a prompt, its value too (through the device's prompt when
    /// the item asks for one), and compares them with what was written.
    func verify(_ value: SourceValue, _ target: TargetItem, _ keychain: Keychain) async throws(KeychainError) -> Bool {
        guard let info = try await keychain.getItemInfo(target.key), Planner.sameProtection(info, target)
        else { return false }
        switch value {
        case .credentials(let username, let password):
            let read = try await keychain.getCredentials(CredentialsGetOptions(server: Self.server(of: target.key)))
            return read == Credentials(username: username, password: password)
        case .value(let data):
            return try await keychain.getBytes(target.key) == data
        case .sealed:
            return false
        }
    }

    /// The server of a credentials key (`credentials:<server>`), by its bytes: `hasPrefix` would miss a key whose
    /// server starts with a combining mark (the `:` and the mark are one Character).
    static func server(of key: String) -> String? {
        let prefix = "credentials:".utf8
        return key.utf8.starts(with: prefix) ? String(Substring(key.utf8.dropFirst(prefix.count))) : nil
    }

}

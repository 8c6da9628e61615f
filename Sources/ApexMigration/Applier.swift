import ApexDumps
import ApexKeychain
import Foundation

/// The outcome of one planned action after a run.
public enum ItemResult: String, Sendable, Codable {
    /// Written and read back equal.
    case verified
    /// Written, but the read-back differed or failed.
    case unverified
    /// The write failed; the target is as it was.
    case failed
}

/// Writes every `create` through the core's public API, reads each back, records it in the ledger, and removes
/// a source item only once its target item was read back equal.
struct Applier {
    let target: MigrationTarget
    let ledger: Ledger
    let policy: MigrationPolicy
    let source: DatabaseSource?

    /// Applies the plan; returns a result for each action that was a `create`, by index, and the error
    /// messages (never a value) of the failures.
    func apply(_ plan: MigrationPlan, progress: (@Sendable (Int, Int) -> Void)?) async -> [Int: (ItemResult, String?)] {
        var results: [Int: (ItemResult, String?)] = [:]
        let creates = plan.actions.indices.filter { plan.actions[$0].action == .create }
        for (done, index) in creates.enumerated() {
            results[index] = await apply(plan.actions[index].item)
            progress?(done + 1, creates.count)
        }
        return results
    }

    private func apply(_ item: SourceItem) async -> (ItemResult, String?) {
        guard let target = item.target else { return (.failed, "no target") }
        do {
            let keychain = try self.target.keychain(service: target.service, accessGroup: target.accessGroup)
            guard let fingerprint = try await ledger.fingerprint(of: item.value, kind: target.kind, create: true) else {
                return (.failed, "the value is sealed")
            }
            try await ledger.record(Ledger.Entry(fingerprint: fingerprint, state: .pending), for: target)
            var sourceKey: ItemAttributes.PrimaryKey?
            var collides = false
            if policy.removeSource, let source, let key = source.keys[item.origin.location] {
                sourceKey = key
                if let attributes = source.items[item.origin.location] {
                    collides = Planner.isSame(attributes, as: target, in: keychain)
                }
            }
            if collides, let sourceKey {
                try await journalAndRemove(sourceKey, for: target)
            }
            try await write(item.value, target, keychain)
            guard try await verify(item.value, target, keychain) else {
                return (.unverified, "the item read back differs from what was written")
            }
            try await ledger.record(Ledger.Entry(fingerprint: fingerprint, state: .verified), for: target)
            if collides {
                try await ledger.removeJournal(for: target)
            } else if let sourceKey {
                try removeSource(sourceKey)
            }
            return (.verified, nil)
        } catch let error as KeychainError {
            return (.failed, "\(error.code.rawValue): \(error.message)")
        } catch {
            return (.failed, "\(error)")
        }
    }

    private func write(_ value: SourceValue, _ target: TargetItem, _ keychain: Keychain) async throws(KeychainError) {
        switch (value, target.kind) {
        case (.credentials(let username, let password), .credentials):
            let options = target.options
            try await keychain.setCredentials(
                Credentials(username: username, password: password),
                CredentialsOptions(
                    server: Self.server(of: target.key), accessible: options.accessible,
                    accessControl: options.accessControl, authValidity: options.authValidity,
                    synchronizable: options.synchronizable, android: options.android))
        case (.value(let data), .string):
            guard let text = String(validating: data, as: UTF8.self) else {
                throw KeychainError(.INVALID_ARGUMENT, "the value of '\(target.key)' is not UTF-8")
            }
            try await keychain.setItem(target.key, text, target.options)
        case (.value(let data), .bytes):
            try await keychain.setBytes(target.key, data, target.options)
        default:
            throw KeychainError(.INVALID_ARGUMENT, "the source value does not fit a '\(target.kind.rawValue)' item")
        }
    }

    /// Reads the item back: its attributes without a prompt, its value too (through the device's prompt when
    /// the item asks for one), and compares them with what was written.
    private func verify(_ value: SourceValue, _ target: TargetItem, _ keychain: Keychain) async throws(KeychainError) -> Bool {
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

    static func server(of key: String) -> String? {
        key.hasPrefix("credentials:") ? String(key.dropFirst("credentials:".count)) : nil
    }

    // MARK: Source removal

    /// Journals the source item that holds its own target key, then removes it: the journal lets a later run
    /// put it back if this one stops before the target item is verified.
    private func journalAndRemove(_ key: ItemAttributes.PrimaryKey, for target: TargetItem) async throws {
        guard let database = source?.database else { return }
        let value = try database.value(for: key)
        guard let attributes = try database.attributes(
            matching: ItemQuery(itemClass: key.itemClass, service: key.service, account: key.account, accessGroup: key.accessGroup)
        ).first(where: { $0.primaryKey == key && !$0.isApexItem }) else { return }
        try await ledger.journal(Ledger.JournalRecord(item: StoredItem(KeychainItem(attributes: attributes, value: value))), for: target)
        try database.delete(key)
    }

    /// Removes a migrated source item by its primary key, if it is still another library's item.
    private func removeSource(_ key: ItemAttributes.PrimaryKey) throws {
        guard let database = source?.database else { return }
        let still = try database.attributes(
            matching: ItemQuery(itemClass: key.itemClass, service: key.service, account: key.account, accessGroup: key.accessGroup))
        guard still.contains(where: { $0.primaryKey == key && !$0.isApexItem }) else { return }
        try database.delete(key)
    }
}

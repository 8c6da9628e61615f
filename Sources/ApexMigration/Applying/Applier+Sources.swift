import ApexDumpModel
import ApexKeychain
import Foundation

/// How an ``Applier`` moves source items aside, puts them back and removes them (on the device, with
/// `removeSource`).
extension Applier {
    /// After the read-back, inside the transaction after the batch's own: for a verified item, with `removeSource`,
    /// removes its own source and the parked holders; for another, puts back what its write displaced.
    func settle(
        _ ready: Ready, _ outcome: ItemOutcome, displaced: Displaced, _ replacing: [ItemAttributes.PrimaryKey]
    )
        -> ItemOutcome
    {
        guard outcome.result == .verified else {
            // The item written is removed and the sources put back: the target is as it was, as after a failed
            // write.
            var undone = outcome
            undone.result = .failed
            switch displaced {
            case .nothing: return outcome
            case .parked(let parked): return putBack(parked, for: ready.target, noting: undone)
            case .converted(let original, let key): return restore(original, at: key, noting: undone)
            }
        }
        let parked: [ParkedItem] = if case .parked(let items) = displaced { items } else { [] }
        return removeSources(of: ready.item, parked: parked, replacing: replacing, for: ready.target)
    }

    /// For a source item turned into its target in place whose target was not verified: the item as it was, in
    /// one replacement (never absent). A failure to do so is noted; the target, which holds the value written,
    /// stays.
    func restore(
        _ original: KeychainItem, at key: ItemAttributes.PrimaryKey, noting outcome: ItemOutcome
    )
        -> ItemOutcome
    {
        guard let database = source?.database else { return outcome }
        do {
            try database.replace(key, with: original)
            return outcome
        } catch {
            var noted = outcome
            noted.result = .unverified
            noted.reason =
                (outcome.reason ?? "")
                + "; the source item turned into it could not be put back (\(error.message)): the item stays in the package"
            return noted
        }
    }

    /// For a verified item, with `removeSource`: removes its own source and the parked holders. A failure here
    /// keeps the item verified (it is in place) and leaves the rest to the next run, which removes the sources
    /// of items that exist and mends what the journal names.
    func removeSources(
        of item: SourceItem, parked: [ParkedItem], replacing: [ItemAttributes.PrimaryKey], for target: TargetItem
    ) -> ItemOutcome {
        guard policy.removeSource else { return ItemOutcome(.verified) }
        do {
            if let own = source?.keys[item.origin.location], !replacing.contains(own) { try removeSource(own) }
            if !parked.isEmpty { try discard(parked, for: target) }
            return ItemOutcome(.verified)
        } catch {
            return ItemOutcome(
                .verified,
                reason:
                    "written and read back, but its source items could not be removed now (\(error)): the next run removes them"
            )
        }
    }

    /// ``putBack(_:for:removingTarget:)`` for an item that was not written or verified, noting on its outcome a
    /// failure to put them back (which the next run mends from the journal).
    func putBack(_ items: [ParkedItem], for target: TargetItem, noting outcome: ItemOutcome) -> ItemOutcome {
        do {
            try putBack(items, for: target)
            return outcome
        } catch {
            var noted = outcome
            noted.reason =
                (outcome.reason ?? "") + "; the source items removed to make room could not be put back "
                + "now (\(error)): the next run puts them back"
            return noted
        }
    }

    /// For an item that was not verified: removes what was written under the target key (the package's item
    /// only), puts the parked source items back, and drops the journal.
    func putBack(_ items: [ParkedItem], for target: TargetItem, removingTarget: Bool = true) throws {
        let keychain = try self.target.keychain(service: target.service, accessGroup: target.accessGroup)
        if removingTarget { try keychain.removeItemSynchronously(target.key) }
        guard let database = source?.database else { return }
        for item in items { try item.unpark(in: database) }
        try ledger.removeJournal(for: target)
    }

    /// For a verified item: deletes the parked source items (parked by this run: each by its parking key, no
    /// look-up) and drops the journal.
    func discard(_ items: [ParkedItem], for target: TargetItem) throws {
        guard let database = source?.database else { return }
        for item in items { _ = try database.delete(item.parkingKey) }
        try ledger.dropJournal(for: target, in: self.target.database)
    }

    // MARK: Moving sources aside

    /// Journals the source items under the target key, then parks them (renames them aside): the journal lets a
    /// later run put them back if this one stops before the target item is verified.
    func park(_ keys: [ItemAttributes.PrimaryKey], for target: TargetItem) throws -> [ParkedItem] {
        guard let database = source?.database else { return [] }
        var items: [ParkedItem] = []
        var found: [ItemAttributes.PrimaryKey] = []
        for key in keys {
            // The source's listing found them (this run's, the target's database): no look-up per item.
            if let attributes = try source?.listedForeign[key] ?? Self.foreignItem(key, in: database) {
                items.append(ParkedItem(attributes))
                found.append(attributes.primaryKey)
            }
        }
        guard !items.isEmpty else { return [] }
        try ledger.addJournal(Ledger.JournalRecord(parked: items), for: target)
        for (item, key) in zip(items, found) { try database.rename(key, toAccount: item.parkingAccount) }
        return items
    }

    /// The attributes of the other library's item under exactly `key`, if it is still there.
    static func foreignItem(
        _ key: ItemAttributes.PrimaryKey, in database: any KeychainDatabase
    ) throws(KeychainDatabaseError)
        -> ItemAttributes?
    {
        try database.attributes(
            matching: ItemQuery(
                itemClass: key.itemClass, service: key.service, account: key.account, accessGroup: key.accessGroup)
        ).first { $0.primaryKey == key && !$0.isApexItem }
    }

    /// Removes a migrated source item by its primary key, if it is still another library's item: one this run's
    /// listing found as such is deleted at once (no look-up); another only once a look-up finds it so.
    func removeSource(_ key: ItemAttributes.PrimaryKey) throws(KeychainError) {
        guard let database = source?.database else { return }
        do {
            if source?.listedForeign[key] == nil {
                guard try Self.foreignItem(key, in: database) != nil else { return }
            }
            _ = try database.delete(key)
        } catch {
            throw KeychainError(
                error.status == .interactionNotAllowed ? .INTERACTION_NOT_ALLOWED : .INTERNAL,
                "can't remove the migrated source item of service '\(key.service)': \(error.message)")
        }
    }
}

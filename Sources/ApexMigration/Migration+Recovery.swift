import ApexDumpModel
import ApexKeychain
import Foundation

/// What a run mends first, of what an interrupted run left.
extension Migration {
    // MARK: Recovery

    /// Verifies what an interrupted run turned into the package's items in place and did not record verified
    /// (``Ledger/Entry/converted``): no source item is left to plan for them. An item of the package there whose
    /// value has the entry's fingerprint is recorded verified; any other stays pending, as the ledger says.
    func verifyInterruptedConversions(_ ledger: Ledger) async throws(MigrationError) {
        guard case .database = source else { return }
        do throws(KeychainError) {
            let conversions = try await ledger.pendingConversions()
            guard !conversions.isEmpty else { return }
            var batch: Ledger.Batch?
            for (digest, entry, key) in conversions {
                let keychain = try target.keychain(service: key.service, accessGroup: key.accessGroup)
                let found = try keychain.readBack(
                    key.account, writtenWith: SetOptions(synchronizable: key.synchronizable))
                guard case .read(_, let value, let label) = found,
                    try await ledger.matches(entry.fingerprint, value, label: label)
                else { continue }
                if batch == nil { batch = try await ledger.newBatch() }
                var verified = entry
                verified.state = .verified
                batch?.set(verified, at: digest)
            }
            guard let batch else { return }
            do {
                try target.database.atomically { try ledger.record(batch) }
            } catch let error as KeychainError {
                throw error
            } catch {
                throw KeychainError(.INTERNAL, "the migration's ledger could not be written: \(error)")
            }
            ledger.remember(batch)
        } catch {
            throw Self.targetError(error)
        }
    }

    /// Mends what an interrupted run left parked: when the target was written and the ledger has it verified,
    /// the parked source items are deleted; otherwise whatever the package wrote under the target key is removed
    /// and the parked items are put back. Either way the journal is dropped, in the same transaction.
    func restoreInterruptedRemovals(_ ledger: Ledger) async throws(MigrationError) {
        guard case .database(let database, _) = source else { return }
        do {
            for (key, digest, record) in try await ledger.journalRecords() {
                var keychain: Keychain?
                var verified = false
                if let place = record.parked.first {
                    let opened = try target.keychain(service: place.service, accessGroup: place.accessGroup)
                    keychain = opened
                    if try await opened.hasItem(place.account) {
                        verified = try await ledger.isVerified(digest: digest)
                    }
                }
                try database.atomically {
                    if let keychain, let place = record.parked.first {
                        if verified {
                            for item in record.parked { try item.discard(in: database) }
                        } else {
                            try keychain.removeItemSynchronously(place.account)
                            for item in record.parked { try item.unpark(in: database) }
                        }
                    }
                    try ledger.removeJournal(key: key)
                }
            }
        } catch {
            throw .restoringParkedItems("\(error)")
        }
    }
}

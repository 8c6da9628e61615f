import ApexKeychain
import Foundation

/// The journal's writes of a run that parks sources on the device, with one call each: the journal key of a
/// target is absent when a run begins (the run mends and drops every journal record an earlier run left before it
/// plans), so a record is one add and its removal one delete.
extension Ledger {
    /// ``journal(_:for:)`` as one add; the full write when a record is there after all.
    func addJournal(_ record: JournalRecord, for target: TargetItem) throws(KeychainError) {
        guard let data = try? JSONEncoder().encode(record) else {
            throw KeychainError(.INTERNAL, "the migration journal could not be encoded")
        }
        let key = Self.journalKey(id: id, digest: Self.digest(target))
        if try !keychain.addAbsent(key, .bytes(data), Self.protection) {
            try keychain.setBytesSynchronously(key, data, Self.protection)
        }
    }

    /// ``removeJournal(for:)`` as one delete, by the record's primary key (a record of the ledger's reserved service,
    /// which only the migration writes; never a staged write: it is written without access control, in a class
    /// readable since the first unlock, so it is replaced in place). A delete by query would cost a listing too.
    func dropJournal(for target: TargetItem, in database: any KeychainDatabase) throws(KeychainError) {
        let key = ItemAttributes.PrimaryKey(
            itemClass: .genericPassword, service: keychain.service,
            account: Self.journalKey(id: id, digest: Self.digest(target)), accessGroup: keychain.accessGroup,
            synchronizable: false, server: "", securityDomain: "", protocolCode: "", authenticationType: "", port: 0,
            path: "")
        do {
            _ = try database.delete(key)
        } catch {
            throw KeychainError(
                error.status == .interactionNotAllowed ? .INTERACTION_NOT_ALLOWED : .INTERNAL,
                "the migration journal could not be removed: \(error.message)")
        }
    }
}

import ApexKeychain
import Foundation

/// A source item moved aside to make room for its target (on-device migration with `removeSource`): renamed to
/// a parking account, so that its value is never read or copied and keeps its own protection. It is deleted once
/// the target is verified, or renamed back when it is not; the ledger's journal names it meanwhile, so that a
/// run stopped in between is mended by the next.
struct ParkedItem: Codable, Equatable {
    var service: String
    /// The account it had, and gets back.
    var account: String
    var accessGroup: String
    var synchronizable: Bool

    /// What the parking account adds to the account (U+0000 keeps it apart from any name an app writes).
    static let suffix = "\u{0}apex-parked"

    var parkingAccount: String { account + Self.suffix }

    /// The primary key of the item once parked.
    var parkingKey: ItemAttributes.PrimaryKey {
        ItemAttributes.PrimaryKey(
            itemClass: .genericPassword, service: service, account: parkingAccount, accessGroup: accessGroup,
            synchronizable: synchronizable, server: "", securityDomain: "", protocolCode: "", authenticationType: "",
            port: 0, path: "")
    }

    init(_ attributes: ItemAttributes) {
        service = attributes.service
        account = attributes.account
        accessGroup = attributes.accessGroup
        synchronizable = attributes.synchronizable
    }

    /// The other library's item at `account` (the original place or the parking one), if it is there.
    func find(at account: String, in database: any KeychainDatabase) throws(KeychainDatabaseError) -> ItemAttributes? {
        try database.attributes(
            matching: ItemQuery(
                itemClass: .genericPassword, service: service, account: account, accessGroup: accessGroup,
                synchronizable: synchronizable)
        ).first { !$0.isApexItem }
    }

    /// Moves the item to its parking account.
    func park(in database: any KeychainDatabase) throws(KeychainDatabaseError) {
        guard let item = try find(at: account, in: database) else { return }
        try database.rename(item.primaryKey, toAccount: parkingAccount)
    }

    /// Moves the item back to its account; nothing when it is not parked (never parked, or already back).
    func unpark(in database: any KeychainDatabase) throws(KeychainDatabaseError) {
        guard let item = try find(at: parkingAccount, in: database) else { return }
        try database.rename(item.primaryKey, toAccount: account)
    }

    /// Deletes the parked item, once its target is verified.
    func discard(in database: any KeychainDatabase) throws(KeychainDatabaseError) {
        guard let item = try find(at: parkingAccount, in: database) else { return }
        _ = try database.delete(item.primaryKey)
    }
}

import ApexKeychain
import Foundation

/// What the importers' `seed(_:into:device:)` share: the items an app's test puts into a database to stand for
/// an old library's, written as the library's own set writes them.
package enum Seeding {
    /// The item a library's `SecItemAdd` of `attributes` and the UTF-8 of `value` leaves on `device` now: created
    /// and modified at the device's time.
    package static func item(_ attributes: ItemAttributes, value: String, on device: any Device) -> KeychainItem {
        var attributes = attributes
        attributes.createdAt = device.state().now
        attributes.modifiedAt = attributes.createdAt
        return KeychainItem(attributes: attributes, value: Data(value.utf8))
    }

    /// Gives the item of `database` under `item`'s primary key `item`'s value and modification date, its other
    /// attributes unchanged, as a library's `SecItemUpdate` of the value alone does (after `errSecDuplicateItem`);
    /// false when there is none.
    package static func updateValue(
        of item: KeychainItem, in database: any KeychainDatabase
    ) throws(KeychainDatabaseError) -> Bool {
        let key = item.attributes.primaryKey
        let query = ItemQuery(
            itemClass: key.itemClass, service: key.service, account: key.account, accessGroup: key.accessGroup,
            synchronizable: key.synchronizable)
        guard var old = try database.attributes(matching: query).first(where: { $0.primaryKey == key }) else {
            return false
        }
        old.modifiedAt = item.attributes.modifiedAt
        try database.replace(key, with: KeychainItem(attributes: old, value: item.value))
        return true
    }
}

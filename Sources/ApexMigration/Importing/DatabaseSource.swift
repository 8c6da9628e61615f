import ApexDumpModel
import ApexKeychain
import Foundation

/// Other libraries' items in a keychain database, as raw records the importers read: the on-device case,
/// where the source and the target share one keychain.
struct DatabaseSource {
    static let path = "keychain database"

    /// The database the items are in.
    let database: any KeychainDatabase
    /// The records, and for each record's location the primary key of the item it came from.
    var dump: Dump
    var keys: [String: ItemAttributes.PrimaryKey]
    var items: [String: ItemAttributes]

    /// Reads every item without the package's creator mark.
    /// - Parameter valuesOf: when given, only these items' values are read (a run that retries what an earlier
    ///   one left pending); the others are records without a value, which the importers see as they are and the
    ///   plan leaves out.
    /// - Throws: ``MigrationError/tryLater`` when the device is locked and an item's class can't be read now.
    init(
        database: any KeychainDatabase, device: any Device, valuesOf: Set<ItemAttributes.PrimaryKey>? = nil
    )
        throws(MigrationError)
    {
        self.database = database
        let state = device.state()
        let foreign: [ItemAttributes]
        do {
            foreign = try database.attributes(matching: ItemQuery()).filter { !$0.isApexItem }
        } catch {
            throw MigrationError.source("\(Self.path): \(error)")
        }
        var records: [KeychainRecord] = []
        var keys: [String: ItemAttributes.PrimaryKey] = [:]
        var items: [String: ItemAttributes] = [:]
        for (index, a) in foreign.enumerated() {
            let location = "item \(index + 1)"
            keys[location] = a.primaryKey
            items[location] = a
            if let valuesOf, !valuesOf.contains(a.primaryKey) {
                records.append(Self.record(a, location: location, value: .absent))
                continue
            }
            let alwaysReadable = a.protectionDomain == .dk || a.protectionDomain == .dku
            let needsUnlock = a.protectionDomain == .ak || a.protectionDomain == .aku || a.protectionDomain == .akpu
            if !alwaysReadable, !state.unlockedSinceBoot || (state.isLocked && needsUnlock) {
                throw MigrationError.tryLater("the device is locked, and the source items can't be read now")
            }
            let value: DumpValue
            do {
                value = .data(try database.value(for: a.primaryKey))
            } catch  where error.status == .interactionNotAllowed {
                throw MigrationError.tryLater("the source items can't be read now: \(error.message)")
            } catch {
                value = .damaged("the value can't be read: \(error.status.rawValue)")
            }
            records.append(Self.record(a, location: location, value: value))
        }
        dump = Dump(path: Self.path, format: .keychainDatabase, content: .keychain(records))
        self.keys = keys
        self.items = items
    }

    /// The record of item `a`, as the importers read it.
    private static func record(_ a: ItemAttributes, location: String, value: DumpValue) -> KeychainRecord {
        KeychainRecord(
            location: location, itemClass: a.itemClass.rawValue, service: .string(a.service),
            account: .string(a.account), generic: a.generic.map(DumpBytes.data), value: value,
            protection: a.protectionDomain.rawValue, accessGroup: a.accessGroup, label: a.label,
            creator: a.creator, synchronizable: a.synchronizable, createdAt: a.createdAt,
            modifiedAt: a.modifiedAt, server: a.server, protocolCode: a.protocolCode,
            port: a.port == 0 ? nil : a.port, path: a.path, authenticationType: a.authenticationType,
            securityDomain: a.securityDomain,
            accessControl: a.accessControl.isEmpty
                ? nil
                : AccessControlDescription(
                    flags: a.accessControl, protection: a.protectionDomain.rawValue,
                    raw: "flags:\(a.accessControl.rawValue)"))
    }
}

import ApexDumps
import Foundation

// Dumps built in memory, as a reader would have returned them, for the tests of what reads them: the importers',
// the migration's and the CLI's.

/// An iOS dump of `records`.
package func keychainDump(
    _ records: [KeychainRecord], path: String = "keychain.plist", format: DumpFormat = .iosPlist
) -> Dump {
    Dump(path: path, format: format, content: .keychain(records))
}

/// A preferences dump of string entries, in the order given.
package func preferencesDump(
    _ path: String, format: DumpFormat = .sharedPreferences, _ entries: [(String, String)]
) -> Dump {
    Dump(
        path: path, format: format,
        content: .preferences(entries.map { PreferenceEntry(name: $0.0, value: .string($0.1)) }))
}

/// A generic password as a dump shows it: its service, account and value as text, its `pdmn` and access control
/// as given.
package func genericPasswordRecord(
    service: String, account: String, value: String, protection: String = "ak",
    accessControl: AccessControlDescription? = nil, location: String = "item 1"
) -> KeychainRecord {
    KeychainRecord(
        location: location, itemClass: "genp", service: .string(service), account: .string(account),
        value: .data(Data(value.utf8)), protection: protection, accessControl: accessControl)
}

// docs/LIBRARY.md, "Open or create a store": from `import` down, this file is
// the guide's block, line for line (LibraryGuideTests compares them). Change both together.
import ApexKeychainStore
import Foundation

/// Opens the app's store, creating it with a key file beside it on first use.
func openStore(at url: URL) throws(StoreError) -> SQLiteKeychainDatabase {
    let key = StoreKeySource.keyFile(SQLiteKeychainDatabase.defaultKeyFile(for: url))
    do {
        return try SQLiteKeychainDatabase(opening: url, key: key)
    } catch {
        guard error.kind == .notFound else { throw error }
        return try SQLiteKeychainDatabase.create(at: url, key: key, device: .linux, bundleIdentifier: "com.example.app")
    }
}

/// Opens a store locked with a passphrase (read from a file the user named, say), creating it on first use.
func openStore(at url: URL, passphrase: Data) throws(StoreError) -> SQLiteKeychainDatabase {
    guard FileManager.default.fileExists(atPath: url.path) else {
        return try SQLiteKeychainDatabase.create(at: url, key: .passphrase(passphrase))
    }
    return try SQLiteKeychainDatabase(opening: url, key: .passphrase(passphrase))
}

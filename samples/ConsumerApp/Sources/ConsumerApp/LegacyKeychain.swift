import Foundation

/// What react-native-keychain, expo-secure-store and react-native-encrypted-storage left in the app's iOS keychain
/// before the update, written as a keychain dump (an XML plist, items by class). Every value is made up.
enum LegacyKeychain {
    /// One item the old libraries wrote: where it is, and the value the migrated item must read back.
    struct Item {
        let library: String
        let service: String
        let key: String
        let value: String

        /// Whether the package keeps it as credentials (react-native-keychain's username and password pairs),
        /// read with `getCredentials()`; otherwise it is a string under its key, read with `getItem(_:)`.
        var isCredentials: Bool { library == "react-native-keychain" }
    }

    /// The items, in the dump's order.
    static func items(bundleID: String) -> [Item] {
        [
            // react-native-keychain: setGenericPassword(username, password), default service (the bundle id).
            Item(
                library: "react-native-keychain", service: bundleID, key: "consumer@example.com",
                value: "consumer-password-0001"),
            // react-native-keychain: setGenericPassword with `service: "refresh"`.
            Item(library: "react-native-keychain", service: "refresh", key: "consumer", value: "consumer-refresh-0002"),
            // expo-secure-store: setItemAsync("authToken", value), its default keychainService "app".
            Item(library: "expo-secure-store", service: "app", key: "authToken", value: "consumer-token-0003"),
            // react-native-encrypted-storage: EncryptedStorage.setItem("session", value), no service at all; the
            // package keeps it in the app's default service (the bundle id).
            Item(
                library: "react-native-encrypted-storage", service: "", key: "session", value: "consumer-session-0004"),
        ]
    }

    /// Writes the dump of `items` into `folder` and returns its path.
    static func writeDump(_ items: [Item], accessGroup: String, into folder: URL) throws -> String {
        let records: [[String: Any]] = items.map { item in
            var record: [String: Any] = [
                "svce": item.service, "agrp": accessGroup, "pdmn": "ck", "sync": 0,
                "v_Data": Data(item.value.utf8),
            ]
            if item.library == "expo-secure-store" {
                // expo-secure-store keeps its key as data, in both the account and the generic attribute.
                record["acct"] = Data(item.key.utf8)
                record["gena"] = Data(item.key.utf8)
            } else {
                record["acct"] = item.key
            }
            return record
        }
        let data = try PropertyListSerialization.data(fromPropertyList: ["genp": records], format: .xml, options: 0)
        let file = folder.appendingPathComponent("keychain.plist")
        try data.write(to: file)
        return file.path
    }
}

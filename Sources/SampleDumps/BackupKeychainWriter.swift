import ApexDumps
import Foundation

/// Writes a backup's keychain file (`keychain-backup.plist`, `ios-encrypted-backups.md` §1.6, §1.7): per class an
/// array of `{v_Data, v_PersistentRef}`, each `v_Data` a version-3 item sealed under a key of its own, wrapped
/// under its class's key; the plaintext a DER dictionary of the item's attributes and its secret.
public enum BackupKeychainWriter {
    /// One keychain item, as a phone keeps it.
    public struct Item: Sendable {
        /// `genp` or `inet`.
        public var itemClass: String
        /// `svce` (or `srvr` for an internet password), `acct`, `agrp`, `pdmn`.
        public var service: String, account: String, accessGroup: String, protection: String
        /// The secret (`v_Data`). A made-up value: never print it.
        public var value: [UInt8]
        /// `gena`, when the item has it (expo-secure-store writes its key there as well as in `acct`).
        public var generic: [UInt8]?
        /// The class whose key wraps the item's (6 `ak`, 7 `ck`, 8 `dk`, 9–11 the ThisDeviceOnly ones).
        public var protectionClass: UInt32

        /// An item; `protection` follows the class unless given.
        public init(
            itemClass: String = "genp", service: String, account: String, value: [UInt8], generic: [UInt8]? = nil,
            accessGroup: String = "ABCDE12345.com.example.app", protectionClass: UInt32 = 7, protection: String? = nil
        ) {
            let names: [UInt32: String] = [6: "ak", 7: "ck", 8: "dk", 9: "aku", 10: "cku", 11: "dku"]
            self.itemClass = itemClass
            self.service = service
            self.account = account
            self.value = value
            self.generic = generic
            self.accessGroup = accessGroup
            self.protectionClass = protectionClass
            self.protection = protection ?? names[protectionClass] ?? "ck"
        }
    }

    /// The file's bytes (XML), the items sealed with `classKeys` (``BackupKeybagWriter/write()``); an item whose
    /// class has no key there is sealed under a made-up one, as a ThisDeviceOnly item is under the phone's key.
    public static func write(_ items: [Item], classKeys: [UInt32: [UInt8]], seed: UInt64 = 4) -> Data {
        var random = SampleRandom(seed: seed)
        var byClass: [String: [PlistValue]] = [:]
        for item in items {
            let nameKey = item.itemClass == "inet" ? "srvr" : "svce"
            var attributes: [(String, DERValue)] = [
                (nameKey, .string(item.service)), ("acct", .string(item.account)),
                ("agrp", .string(item.accessGroup)),
                ("pdmn", .string(item.protection)), ("sync", .integer(0)), ("tomb", .integer(0)),
                ("musr", .data(Data())), ("v_Data", .data(Data(item.value))),
            ]
            if let generic = item.generic { attributes.append(("gena", .data(Data(generic)))) }
            let der = DERWriter.encode(.dictionary(attributes))
            let classKey = classKeys[item.protectionClass] ?? Array(random.bytes(32))
            let blob = BackupItemBlob.seal(
                Array(der), protectionClass: item.protectionClass, classKey: classKey, itemKey: Array(random.bytes(32)))
            byClass[item.itemClass, default: []].append(
                .dictionary([
                    ("v_Data", .data(Data(blob.bytes))),
                    (
                        "v_PersistentRef",
                        .data(Data(BackupKeybagWriter.le32(item.protectionClass) + Array(random.bytes(8))))
                    ),
                ]))
        }
        var root: [(String, PlistValue)] = byClass.sorted { $0.key < $1.key }.map { ($0.key, .array($0.value)) }
        root.append(("keybag-uuid", .data(Data(random.bytes(16)))))
        return XMLPlistWriter.write(.dictionary(root))
    }
}

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
        /// Whether the item is a tombstone (`tomb` 1): a deleted item kept for iCloud Keychain's sync.
        public var tombstone: Bool

        /// An item; `protection` follows the class unless given.
        public init(
            itemClass: String = "genp", service: String, account: String, value: [UInt8], generic: [UInt8]? = nil,
            accessGroup: String = "ABCDE12345.com.example.app", protectionClass: UInt32 = 7, protection: String? = nil,
            tombstone: Bool = false
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
            self.tombstone = tombstone
        }
    }

    /// The file's bytes (a binary plist, as securityd writes it), the items sealed with `classKeys` (``BackupKeybagWriter/write()``); an item whose
    /// class has no key there is sealed under a made-up one, as a ThisDeviceOnly item is under the phone's key.
    public static func write(_ items: [Item], classKeys: [UInt32: [UInt8]], seed: UInt64 = 4) -> Data {
        write(
            entries: items.map { item in
                let nameKey = item.itemClass == "inet" ? "srvr" : "svce"
                var attributes: [(String, DERValue)] = [
                    (nameKey, .string(item.service)), ("acct", .string(item.account)),
                    ("agrp", .string(item.accessGroup)), ("pdmn", .string(item.protection)),
                    ("sync", .integer(0)), ("tomb", .integer(item.tombstone ? 1 : 0)), ("musr", .data(Data())),
                    ("v_Data", .data(Data(item.value))),
                ]
                if let generic = item.generic { attributes.append(("gena", .data(Data(generic)))) }
                return Entry(itemClass: item.itemClass, protectionClass: item.protectionClass, attributes: attributes)
            }, classKeys: classKeys, seed: seed)
    }

    /// The protection class of each `pdmn` a backup holds (`ios-encrypted-backups.md` §1.3).
    static let classes: [String: UInt32] = ["ak": 6, "ck": 7, "dk": 8, "aku": 9, "cku": 10, "dku": 11]

    /// A sample dump's items as a phone's backup holds them: those stored `akpu` or with access control are left
    /// out (a backup never holds them, §1.8); each of the others keeps its attributes, `acct` and `gena` as text
    /// or data as they were written.
    static func write(sampleItems: [SampleItem], classKeys: [UInt32: [UInt8]], seed: UInt64) -> Data {
        let entries = sampleItems.compactMap { item -> Entry? in
            guard item.accessControl == nil, let protectionClass = classes[item.protection] else { return nil }
            func der(_ bytes: DumpBytes) -> DERValue {
                switch bytes {
                case .string(let text): .string(text)
                case .data(let data): .data(data)
                }
            }
            var attributes: [(String, DERValue)] = [
                ("acct", der(item.account)), ("agrp", .string(item.accessGroup)), ("pdmn", .string(item.protection)),
                ("sync", .integer(item.synchronizable ? 1 : 0)), ("tomb", .integer(0)), ("musr", .data(Data())),
                ("v_Data", .data(item.value)),
            ]
            if let service = item.service { attributes.append(("svce", der(service))) }
            if let server = item.server { attributes.append(("srvr", .string(server))) }
            if let generic = item.generic { attributes.append(("gena", der(generic))) }
            if let label = item.label { attributes.append(("labl", .string(label))) }
            if let creator = item.creator { attributes.append(("crtr", .integer(Int64(creator)))) }
            return Entry(itemClass: item.itemClass, protectionClass: protectionClass, attributes: attributes)
        }
        return write(entries: entries, classKeys: classKeys, seed: seed)
    }

    /// One item to seal: its class, protection class and DER attributes.
    struct Entry {
        var itemClass: String
        var protectionClass: UInt32
        var attributes: [(String, DERValue)]
    }

    private static func write(entries: [Entry], classKeys: [UInt32: [UInt8]], seed: UInt64) -> Data {
        var random = SampleRandom(seed: seed)
        var byClass: [String: [PlistValue]] = [:]
        for entry in entries {
            let der = DERWriter.encode(.dictionary(entry.attributes))
            let classKey = classKeys[entry.protectionClass] ?? Array(random.bytes(32))
            let blob = BackupItemBlob.seal(
                Array(der), protectionClass: entry.protectionClass, classKey: classKey,
                itemKey: Array(random.bytes(32)))
            byClass[entry.itemClass, default: []].append(
                .dictionary([
                    ("v_Data", .data(Data(blob.bytes))),
                    (
                        "v_PersistentRef",
                        .data(Data(BackupKeybagWriter.le32(entry.protectionClass) + Array(random.bytes(8))))
                    ),
                ]))
        }
        var root: [(String, PlistValue)] = byClass.sorted { $0.key < $1.key }.map { ($0.key, .array($0.value)) }
        root.append(("keybag-uuid", .data(Data(random.bytes(16)))))
        return BinaryPlistWriter.write(.dictionary(root))
    }
}

import ApexNettle
import Foundation

/// The items of a backup's keychain file (`keychain-backup.plist`, `ios-encrypted-backups.md` §1.6–1.8), opened
/// with the backup's class keys and turned into records as a keychain plist's items are: each item's DER holds
/// every attribute and `v_Data`. What can't be opened is counted and explained, never dropped silently.
public struct BackupKeychain: Sendable {
    /// The items opened, as records (`genp item 1`, …).
    public var records: [KeychainRecord]
    /// The items the password can't open, by protection class: the ThisDeviceOnly classes (9–11), sealed with the
    /// phone's own key. Their attributes are inside the ciphertext too, so they can't be told apart.
    public var sealedByClass: [UInt32: Int]
    /// The items whose bytes are damaged: where, and what is wrong (never a value). Each spoils only itself.
    public var damaged: [(location: String, problem: String)]

    /// The item classes a keychain file holds, in the order read.
    static let classes = ["genp", "inet", "cert", "keys"]

    /// Reads the keychain file's decrypted bytes (``BackupFile/decrypt(_:classKeys:)``); `path` names it in errors.
    public init(file: [UInt8], classKeys: [UInt32: [UInt8]], path: String) throws(DumpError) {
        let root: PlistNode
        do {
            root = try PlistParser.parse(Data(file))
        } catch {
            throw DumpError(.malformed, path: path, "the keychain file is not a property list: \(error)")
        }
        guard case .dictionary(let keychain) = root else {
            throw DumpError(.malformed, path: path, "the keychain file is not a dictionary")
        }
        records = []
        sealedByClass = [:]
        damaged = []
        var budget = ExpansionBudget.unlimited
        for itemClass in Self.classes {
            guard let found = keychain[itemClass] else { continue }
            guard case .array(let items) = found else {
                throw DumpError(.malformed, path: path, "'\(itemClass)' is \(found.kindName), not an array")
            }
            for (index, item) in items.enumerated() {
                let location = "\(itemClass) item \(index + 1)"
                guard case .dictionary(let fields) = item, case .data(let blob)? = fields["v_Data"] else {
                    damaged.append((location, "no v_Data"))
                    continue
                }
                var plaintext: [UInt8]
                do throws(BackupItemBlob.Failure) {
                    plaintext = try BackupItemBlob(Array(blob)).open(classKeys: classKeys)
                } catch {
                    switch error {
                    case .classNotOpen(let protectionClass): sealedByClass[protectionClass, default: 0] += 1
                    case .malformed(let why), .damaged(let why): damaged.append((location, why))
                    }
                    continue
                }
                defer { Nettle.wipe(&plaintext) }
                do {
                    let attributes = try Self.attributes(plaintext)
                    let found = IOSPlistReader.FoundItem(
                        location: location, classKey: itemClass,
                        attributes: [(.string("class"), .string(itemClass))] + attributes, depth: 1)
                    records.append(try PlistItem(found, path: path).record(budget: &budget))
                } catch let error as DumpError {
                    damaged.append((location, error.message))
                } catch {
                    damaged.append((location, "its attributes can't be read: \(error)"))
                }
            }
        }
    }

    /// An item's DER dictionary as plist attributes.
    static func attributes(_ der: [UInt8]) throws -> [(key: PlistNode, value: PlistNode)] {
        guard case .dictionary(let pairs) = try AccessControlDecoder.DERParser.parse(Data(der)) else {
            throw DumpError(.malformed, path: "", "the item's DER is not a dictionary")
        }
        return pairs.map { (PlistNode.string($0.key), Self.node($0.value)) }
    }

    private static func node(_ value: AccessControlDecoder.Node) -> PlistNode {
        switch value {
        case .boolean(let flag): .boolean(flag)
        case .integer(let number): .integer(number)
        case .string(let text): .string(text)
        case .data(let data): .data(data)
        case .date(let date): .date(date)
        case .null: .null
        case .array(let items): .array(items.map(node))
        case .dictionary(let pairs): .dictionary(PlistDictionary(pairs.map { (.string($0.key), node($0.value)) }))
        }
    }
}

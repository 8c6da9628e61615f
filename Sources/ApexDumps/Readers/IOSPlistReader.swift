import ApexKeychain
import Foundation
import Synchronization

/// Reads iOS keychain dumps written as property lists (XML or binary): `SecItemCopyMatching`-style attribute
/// dictionaries, as on-device dumpers and decrypted forensic exports write them.
///
/// ### Structure
/// The top level is either an array of item dictionaries (locations `item 1`, `item 2`, …) or a dictionary of
/// such arrays keyed by class, `genp`, `inet`, `cert`, `keys`, `idnt` (locations `genp item 1`, …; other
/// top-level keys, such as a backup's `keybag-uuid`, are not items and are left out). A class given twice (two
/// dumps joined by hand) keeps the items of every array, named `genp array 1 item 1`, `genp array 2 item 1`, …
///
/// Item keys are the keychain's attribute names. `svce`, `acct` and `gena` may be strings or data; `crtr` an
/// integer, a decimal string or four characters (`ApxK`); `sync` 0/1 or a boolean; `cdat`/`mdat` dates,
/// `CFAbsoluteTime` numbers, or ISO 8601 or NSDate-description (`2018-07-21 18:11:15 +0000`) text; `accc` serialized DER data or the text form of a
/// `SecAccessControlRef` (see ``AccessControlDecoder``). Text attributes given as UTF-8 data are read as text;
/// `labl`, `srvr`, `path`, `atyp` and `sdmn` data that is not UTF-8 is kept in `extra` as `hex:…`. Every other
/// key is kept in `KeychainRecord/extra` as text (data as `hex:…`).
///
/// A `pdmn`, `sync` or `accc` that can't be read (a `pdmn` number, a `sync` of 2, an `accc` that does not decode)
/// is that item's problem, not the dump's: it goes to `KeychainRecord/unreadable` with what is wrong, the item's
/// protection is unknown (`KeychainRecord/unreadableProtection`: its importer blocks it), and the other items
/// read as they are.
///
/// An item's class is its `class`; else the dictionary key it sits under; else, in the array form, `inet` when
/// it has an internet-password attribute (`srvr`, `ptcl`, `port`, `path`, `atyp`, `sdmn`) and `genp` when it
/// has `svce` or `gena`. Any other item without a class is an error.
///
/// Two kinds of plist that are not attribute dumps are refused with `DumpError/Kind/unsupported`:
/// - an encrypted iTunes/Finder `keychain-backup.plist`, whose items hold only `v_Data` (a blob sealed to the
///   backup keybag, attributes included) and `v_PersistentRef`;
/// - an iphone-dataprotection device-keys plist (`key835`, `KeyBagKeys`, …), which holds keys, not items.
public enum IOSPlistReader {
    /// Whether the first bytes of a file look like a property list: the `bplist00` magic, or XML that declares
    /// a `plist` in its first kilobyte.
    ///
    /// - Parameter prefix: the file's first bytes (a kilobyte is enough).
    public static func looksLike(_ prefix: Data) -> Bool {
        if prefix.starts(with: Array("bplist00".utf8)) { return true }
        var head = Array(prefix.prefix(1024))
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { head.removeFirst(3) }
        let text = String(decoding: head, as: UTF8.self).drop { $0.isWhitespace }
        guard text.hasPrefix("<?xml") || text.hasPrefix("<!DOCTYPE plist") || text.hasPrefix("<plist") else {
            return false
        }
        return text.contains("<plist") || text.contains("DOCTYPE plist")
    }

    /// Reads the keychain items of a plist dump.
    ///
    /// - Parameters:
    ///   - data: the file's bytes.
    ///   - path: the file's path, for errors and nothing else.
    /// - Returns: the items in file order (class by class in the order `genp`, `inet`, `cert`, `keys`, `idnt`
    ///   for the dictionary form, a class's arrays in file order).
    /// - Throws: `DumpError` with kind `.malformed` when the file is not an XML or binary plist, is truncated
    ///   or otherwise malformed (see `PlistParser`: a binary plist holding a set, a reference cycle, an XML
    ///   DOCTYPE that declares entities are among what is refused), nests deeper than `DumpLimits/maxDepth`
    ///   inside an item, or holds an item or attribute of the wrong type (the message names the item and the
    ///   attribute, never a value), or whose shared objects, read out, would hold far more values than its size
    ///   allows or more bytes than `DumpLimits/maxFileBytes`; `.unsupported` for an encrypted backup (see the
    ///   type's documentation); `.notADump` for a plist that holds no keychain items (a device-keys plist, a
    ///   dictionary without class arrays, such as an app's `Info.plist`; a top-level array none of whose
    ///   elements is a dictionary with a keychain attribute; a top level that is neither). An XML `<data>` that is not valid Base64 is an error
    ///   naming the item and attribute, except in `v_Data`, where the item's value is
    ///   `DumpValue/damaged(_:)` (`damaged value: …`) and the other items read.
    public static func read(_ data: consuming Data, path: String) throws(DumpError) -> [KeychainRecord] {
        var budget = ExpansionBudget.run()
        return try read(data, path: path, budget: &budget)
    }

    /// ``read(_:path:)`` within what is left of a run's `budget` (see ``ExpansionBudget``), which keeps what the
    /// read did not spend; tests reach a small budget at a small cost.
    static func read(
        _ data: consuming Data, path: String, budget run: inout ExpansionBudget
    ) throws(DumpError) -> [KeychainRecord] {
        let start = run.forFile(byteCount: data.count)
        var budget = start
        let root = try parse(data, path: path)
        // The file's bytes are not needed past the tree: dropped here (when the caller passed them on), before the
        // items are made.
        _ = consume data
        let arrays = try itemArrays(in: root, path: path)
        // Every item is counted before any is made: a file that refers to one item millions of times is refused
        // at once.
        budget.items -= arrays.reduce(0) { $0 + $1.elements.count }
        guard budget.items >= 0 else { throw expands(path, budget) }
        if let records = try readConcurrently(arrays, root: root, path: path, budget: &budget) {
            run.spend(from: start, to: budget)
            return records
        }

        // Item by item, for the first error in file order.
        var items: [FoundItem] = []
        items.reserveCapacity(arrays.reduce(0) { $0 + $1.elements.count })
        for array in arrays {
            for (index, element) in array.elements.enumerated() {
                items.append(try found(element, in: array, at: index, path: path, budget: &budget))
            }
        }
        try refuseEncryptedBackup(items, root: root, path: path)
        var records: [KeychainRecord] = []
        records.reserveCapacity(items.count)
        for item in items {
            records.append(try PlistItem(item, path: path).record(budget: &budget))
        }
        run.spend(from: start, to: budget)
        return records
    }

    /// The records of every item, read on the machine's cores; nil when an item fails or the items together spend
    /// more than the budget, for the read item by item to find the first error. When every item reads, that read
    /// would give these records.
    ///
    /// The budget is shared: each item may spend what the items read so far have left, and after a failure the
    /// rest are not read, so a file that refers to one item over and over costs no more here than item by item.
    private static func readConcurrently(
        _ arrays: [ItemArray], root: PlistNode, path: String, budget: inout ExpansionBudget
    ) throws(DumpError) -> [KeychainRecord]? {
        let initial = budget
        // Where each array's items start in the flat list of all items.
        let starts = arrays.indices.map { array in arrays[..<array].reduce(0) { $0 + $1.elements.count } }
        let total = arrays.reduce(0) { $0 + $1.elements.count }
        // What the items read so far spent; values past the budget once anything fails.
        let spentValues = Atomic<Int>(0)
        let spentBytes = Atomic<Int>(0)
        let results = concurrentMap(count: total) { flat -> (item: FoundItem, record: KeychainRecord)? in
            var left = initial
            left.values -= spentValues.load(ordering: .relaxed)
            left.bytes -= spentBytes.load(ordering: .relaxed)
            guard !left.isOverspent else { return nil }
            let array = starts.lastIndex { $0 <= flat } ?? 0
            let index = flat - starts[array]
            var remaining = left
            guard
                let item = try? found(
                    arrays[array].elements[index], in: arrays[array], at: index, path: path, budget: &remaining),
                let record = try? PlistItem(item, path: path).record(budget: &remaining)
            else {
                spentValues.wrappingAdd(initial.values + 1, ordering: .relaxed)
                return nil
            }
            spentValues.wrappingAdd(left.values - remaining.values, ordering: .relaxed)
            spentBytes.wrappingAdd(left.bytes - remaining.bytes, ordering: .relaxed)
            return (item, record)
        }
        guard spentValues.load(ordering: .relaxed) <= budget.values, spentBytes.load(ordering: .relaxed) <= budget.bytes
        else { return nil }
        // What every item together spent.
        let spent = (values: spentValues.load(ordering: .relaxed), bytes: spentBytes.load(ordering: .relaxed))
        var records: [KeychainRecord] = []
        records.reserveCapacity(total)
        for result in results {
            guard let result else { return nil }
            records.append(result.record)
        }
        try refuseEncryptedBackup(results.lazy.map { $0!.item }, root: root, path: path)
        budget.values -= spent.values
        budget.bytes -= spent.bytes
        return records
    }

    /// One item as found: where it is, the class of the array it sits in, its attributes (one per key, every key
    /// a string) and its depth.
    struct FoundItem {
        var location: String
        var classKey: String?
        var attributes: [(key: PlistNode, value: PlistNode)]
        var depth: Int

        /// The value of attribute `key`.
        subscript(key: String) -> PlistNode? {
            for attribute in attributes {
                if case .string(let found) = attribute.key, found == key { return attribute.value }
            }
            return nil
        }

        /// The attributes' names.
        var keys: some Sequence<String> {
            attributes.lazy.map { if case .string(let key) = $0.key { key } else { "" } }
        }
    }

    /// The file's tree, read by the project's own parsers (``PlistParser``).
    private static func parse(_ data: Data, path: String) throws(DumpError) -> PlistNode {
        guard !data.isEmpty else { throw DumpError(.malformed, path: path, "the file is empty") }
        guard data.count <= DumpLimits.maxFileBytes else {
            throw DumpError(.malformed, path: path, "the file is larger than \(DumpLimits.maxFileBytes) bytes")
        }
        do {
            return try PlistParser.parse(data)
        } catch {
            throw DumpError(.malformed, path: path, error.message)
        }
    }

    /// An array of items: its class (nil for the top-level array), what locations call it (`genp`, or
    /// `genp array 2` when the class has several; nil for the top-level array) and its elements.
    struct ItemArray {
        var classKey: String?
        var name: String?
        var elements: [PlistNode]
    }

    /// The arrays of items: the top-level array, or the class arrays of the dictionary form in class order (a
    /// class's arrays in file order), each checked to be an array before any item is looked at.
    private static func itemArrays(in root: PlistNode, path: String) throws(DumpError) -> [ItemArray] {
        switch root {
        case .array(let elements):
            guard elements.isEmpty || elements.contains(where: isItemLike) else {
                throw DumpError(
                    .notADump, path: path,
                    "not a keychain dump: the top-level array holds no keychain item (no dictionary with an attribute such as class, svce, acct or agrp)"
                )
            }
            return [ItemArray(classKey: nil, name: nil, elements: elements)]
        case .dictionary(let top):
            // A class given twice (no writer does it; two dumps joined by hand may) keeps both arrays: taking the
            // last, as a dictionary would, drops the first's items without a word.
            var arrays: [ItemArray] = []
            for key in IOSAttributes.classOrder {
                let found = top.entries.filter { if case .string(key) = $0.key { true } else { false } }
                for (index, entry) in found.enumerated() {
                    guard case .array(let elements) = entry.value else {
                        throw DumpError(
                            .malformed, path: path, "\(key) is \(entry.value.kindName), expected an array of items")
                    }
                    let name = found.count == 1 ? key : "\(key) array \(index + 1)"
                    arrays.append(ItemArray(classKey: key, name: name, elements: elements))
                }
            }
            guard !arrays.isEmpty else { throw noItems(top, path: path) }
            return arrays
        case let other:
            throw DumpError(
                .notADump, path: path,
                "not a keychain dump: the top level is \(other.kindName), expected an array of items or a dictionary of item arrays by class"
            )
        }
    }

    /// The attributes that tell a keychain item from other dictionaries (an app's plist of settings).
    private static let itemAttributes: Set<String> = [
        "class", "svce", "acct", "agrp", "pdmn", "v_Data", "v_PersistentRef", "srvr", "gena", "accc", "labl", "cdat",
        "mdat", "sync", "crtr", "ptcl", "atyp", "sdmn", "tkid", "musr",
    ]

    /// Whether an element of a top-level array is a dictionary with at least one keychain attribute, or with a key
    /// that is not a string (which no app's plist has: a damaged or hostile dump, refused as malformed).
    private static func isItemLike(_ element: PlistNode) -> Bool {
        guard case .dictionary(let dictionary) = element else { return false }
        return dictionary.entries.contains { entry in
            if case .string(let key) = entry.key { return itemAttributes.contains(key) }
            return true
        }
    }

    /// Item `index` of `array` with its attributes, each taken from `budget`'s values, which a file that refers
    /// to one item over and over exhausts.
    private static func found(
        _ element: PlistNode, in array: ItemArray, at index: Int, path: String, budget: inout ExpansionBudget
    ) throws(DumpError) -> FoundItem {
        let classKey = array.classKey
        let location = (array.name.map { $0 + " item " } ?? "item ") + String(index + 1)
        guard case .dictionary(let dictionary) = element else {
            throw DumpError(.malformed, path: path, "\(location) is \(element.kindName), expected a dictionary")
        }
        budget.values -= 1 + dictionary.entries.count
        guard budget.values >= 0 else { throw expands(path, budget) }
        guard let attributes = dictionary.stringKeyedEntries() else {
            throw DumpError(.malformed, path: path, "\(location) has a key that is not a string")
        }
        return FoundItem(location: location, classKey: classKey, attributes: attributes, depth: classKey == nil ? 2 : 3)
    }

    /// The error for a file whose shared objects expand past the read's budget (`budget`, overspent), or that
    /// the run's budget can't hold.
    static func expands(_ path: String, _ budget: ExpansionBudget) -> DumpError {
        DumpError(.malformed, path: path, budget.problem ?? budget.problems.values)
    }

    /// The error for a top-level dictionary without class arrays.
    private static func noItems(_ top: PlistDictionary, path: String) -> DumpError {
        let deviceKeys = ["key835", "key89A", "key89B", "KeyBagKeys", "EMF", "DKey", "keybags"]
        if deviceKeys.filter({ top[$0] != nil }).count >= 2 {
            return DumpError(
                .notADump, path: path,
                "this is a device-keys plist (device keys and a keybag, as iphone-dataprotection writes), not a keychain dump: it holds no items"
            )
        }
        return DumpError(
            .notADump, path: path,
            "not a keychain dump: the top-level dictionary has none of the class arrays genp, inet, cert, keys, idnt")
    }

    /// Refuses a file whose every item is a backup's sealed pair `{v_Data, v_PersistentRef}`.
    private static func refuseEncryptedBackup(
        _ items: some Collection<FoundItem>, root: PlistNode, path: String
    ) throws(DumpError) {
        guard !items.isEmpty, items.allSatisfy({ isBackupPair($0) }) else { return }
        let hasKeybagUUID: Bool = {
            if case .dictionary(let top) = root { return top["keybag-uuid"] != nil }
            return false
        }()
        let headers = items.compactMap { sealedBlob($0) }
        guard hasKeybagUUID || headers.count == items.count else { return }
        let versions = Set(headers.map(\.version)).sorted().map(String.init).joined(separator: ", ")
        let detail = versions.isEmpty ? "" : " (blob version \(versions))"
        throw DumpError(
            .unsupported, path: path,
            "this is an encrypted keychain backup (keychain-backup.plist): its \(items.count) items hold only v_Data sealed to the backup keybag\(detail) and v_PersistentRef; their attributes and secrets can't be read without decrypting the backup"
        )
    }

    /// Whether an item has nothing but `v_Data`, `v_PersistentRef` (and perhaps `class`).
    static func isBackupPair(_ item: FoundItem) -> Bool {
        // The keys first: an ordinary item fails on its first attribute.
        item.keys.allSatisfy { $0 == "v_Data" || $0 == "v_PersistentRef" || $0 == "class" } && item["v_Data"] != nil
    }

    /// The header of a backup item's `v_Data` when the item is a backup pair whose data starts like a sealed
    /// keychain blob of versions 0–3 (`uint32 version | uint32 keyclass | uint32 wrapped length`, little-endian).
    static func sealedBlob(_ item: FoundItem) -> (version: UInt32, keyClass: UInt32)? {
        guard isBackupPair(item), case .data(let data) = item["v_Data"], data.count >= 12 + 16 else { return nil }
        return ByteReader.reading(data) { blob -> (version: UInt32, keyClass: UInt32)? in
            guard let first = try? blob.u32(at: 0, .littleEndian), let second = try? blob.u32(at: 4, .littleEndian),
                let third = try? blob.u32(at: 8, .littleEndian)
            else { return nil }
            let version = first & 0x7FFF_FFFF
            let keyClass = second & 0x1F
            guard version <= 3, (6...12).contains(keyClass) else { return nil }
            // Version 0 has a fixed 40-byte wrapped key and no length word; the check below is then a little strict.
            let wrappedLength = version == 0 ? 40 : Int(third)
            guard wrappedLength > 0, wrappedLength <= 1024, 12 + wrappedLength + 16 <= blob.count else { return nil }
            return (version, keyClass)
        }
    }
}

import ApexDumpModel
import ApexKeychain
import ApexMigration
import Foundation

/// The entries of `RN_ENCRYPTED_STORAGE_SHARED_PREF.xml`: plain-text ones (migrated) and
/// EncryptedSharedPreferences ones (sealed), told apart by content.
struct EncryptedStorageAndroid {
    /// Where EncryptedSharedPreferences keeps the Tink keyset of the names (AES256-SIV).
    static let keyKeysetName = "__androidx_security_crypto_encrypted_prefs_key_keyset__"
    /// Where EncryptedSharedPreferences keeps the Tink keyset of the values (AES256-GCM).
    static let valueKeysetName = "__androidx_security_crypto_encrypted_prefs_value_keyset__"

    private let dump: Dump
    private let entries: [PreferenceEntry]
    private let options: ImportOptions
    private let nameKeyset: TinkKeyset?
    private let valueKeyset: TinkKeyset?

    /// - Throws: ``ImportError`` naming the file when a keyset entry is not a Tink keyset in hex.
    init(dump: Dump, entries: [PreferenceEntry], options: ImportOptions) throws(ImportError) {
        self.dump = dump
        self.entries = entries
        self.options = options
        nameKeyset = try Self.keyset(Self.keyKeysetName, in: entries, dump)
        valueKeyset = try Self.keyset(Self.valueKeysetName, in: entries, dump)
    }

    private static func keyset(
        _ name: String, in entries: [PreferenceEntry], _ dump: Dump
    ) throws(ImportError)
        -> TinkKeyset?
    {
        guard let entry = entries.last(where: { $0.name == name }) else { return nil }
        guard case .string(let hex) = entry.value, let keyset = TinkKeyset(hex: hex) else {
            throw ImportError(
                path: dump.path,
                "entry \(name) is not a Tink keyset in hex, as EncryptedSharedPreferences writes it: the file is damaged or not react-native-encrypted-storage's"
            )
        }
        return keyset
    }

    /// How an entry is stored: in plain text, or by EncryptedSharedPreferences.
    enum Form: Equatable {
        case plain
        /// Encrypted under the key ids of the file's keysets (or the file has none to compare with).
        case encrypted
        /// Encrypted, but under a key id that the file's keysets don't hold (keysets made anew since, or an entry
        /// of another file): no keyset of this file opens it.
        case encryptedUnderOtherKeys
    }

    /// How an entry is stored. It is EncryptedSharedPreferences' when its name and value are both Base64 that
    /// starts with Tink's prefix (`0x01`, then a 4-byte key id) and is long enough to hold an AES-SIV name and an
    /// AES-GCM value: such an entry is ciphertext whatever its key ids, never a string to migrate. The key ids
    /// only tell whether the file's keysets are the ones it was encrypted with.
    func form(_ entry: PreferenceEntry) -> Form {
        // SIV: 16-byte tag. GCM: 12-byte IV, a string's 8-byte type and length, 16-byte tag.
        guard case .string(let value) = entry.value, let nameID = Self.tinkKeyID(entry.name, minimum: 5 + 16),
            let valueID = Self.tinkKeyID(value, minimum: 5 + 12 + 8 + 16)
        else { return .plain }
        let matches =
            (nameKeyset.map { $0.keyIDs.contains(nameID) } ?? true)
            && (valueKeyset.map { $0.keyIDs.contains(valueID) } ?? true)
        return matches ? .encrypted : .encryptedUnderOtherKeys
    }

    /// The key id of Base64 text in Tink's form of at least `minimum` bytes; nil for anything else.
    private static func tinkKeyID(_ text: String, minimum: Int) -> UInt32? {
        guard let bytes = base64(text), bytes.count >= minimum, bytes[0] == 1 else { return nil }
        return bytes[1..<5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// Standard Base64, padded or not; nil for anything else.
    static func base64(_ text: String) -> [UInt8]? {
        var padded = text
        if padded.utf8.count % 4 != 0 { padded += String(repeating: "=", count: 4 - padded.utf8.count % 4) }
        return Data(base64Encoded: padded).map { Array($0) }
    }

    func items() -> [SourceItem] {
        let reserved: Set<String> = [Self.keyKeysetName, Self.valueKeysetName]
        let forms = entries.map { reserved.contains($0.name) ? nil : form($0) }
        let sealedCount = forms.filter { $0 != nil && $0 != .plain }.count
        let plainCount = forms.filter { $0 == .plain }.count
        var items: [SourceItem] = []
        for (index, entry) in entries.enumerated() {
            guard let form = forms[index] else { continue }
            let origin = SourceOrigin(path: dump.path, format: dump.format, location: "entry \(index + 1)")
            if form == .plain {
                items.append(plain(entry, origin, mixed: sealedCount))
            } else {
                items.append(sealed(origin, count: sealedCount, plain: plainCount, otherKeys: form != .encrypted))
            }
        }
        return items
    }

    private func sealed(_ origin: SourceOrigin, count: Int, plain: Int, otherKeys: Bool) -> SourceItem {
        let cleartext = nameKeyset?.isCleartext == true && valueKeyset?.isCleartext == true
        let keysets =
            otherKeys
            ? "unmatched"
            : nameKeyset == nil || valueKeyset == nil ? "missing" : (cleartext ? "cleartext" : "keystore-wrapped")
        let reason: String
        var notes: [String] = []
        switch keysets {
        case "unmatched":
            reason =
                "EncryptedSharedPreferences entry (one of \(count) in the file): name and value have Tink's form, but the file's keysets don't hold the key id it was encrypted under (keysets made anew since it was written, or an entry copied from another file): no key this file holds opens it, so the key and value stay sealed"
        case "cleartext":
            reason =
                "EncryptedSharedPreferences entry (one of \(count) in the file): name and value are encrypted with Tink keysets this file stores in cleartext; this tool has no AES-SIV, so the key and value stay sealed"
            notes.append(
                "decryptable off the device: the keysets are in cleartext (react-native-encrypted-storage 4.0.x below API 23, or a device whose Keystore Tink found broken); docs/formats/react-native-encrypted-storage.md says what decrypting them takes"
            )
        case "missing":
            reason =
                "EncryptedSharedPreferences entry (one of \(count) in the file): name and value are encrypted, and the file's Tink keysets are missing from the dump"
        default:
            reason =
                "EncryptedSharedPreferences entry (one of \(count) in the file): name and value are encrypted with Tink keysets wrapped by the Android Keystore key _androidx_security_master_key_, which never leaves the device; the key is unknown"
        }
        if plain > 0 {
            notes.append(
                "the file also holds \(plain) plain-text entr\(plain == 1 ? "y" : "ies"): the library fell back to plain SharedPreferences for them (2.3.0 and later, when EncryptedSharedPreferences failed to open)"
            )
        }
        return SourceItem(
            library: .reactNativeEncryptedStorage, platform: .android, origin: origin,
            source: SourceDescription(
                protection: ["storage": "EncryptedSharedPreferences", "keysets": keysets]),
            value: .sealed(reason), target: nil, notes: notes)
    }

    private func plain(_ entry: PreferenceEntry, _ origin: SourceOrigin, mixed: Int) -> SourceItem {
        var item = SourceItem(
            library: .reactNativeEncryptedStorage, platform: .android, origin: origin,
            source: SourceDescription(account: entry.name, protection: ["storage": "plain-text"]),
            value: .sealed("not read"), target: nil)
        guard case .string(let text) = entry.value else {
            item.verdict = .skipped(
                "not react-native-encrypted-storage's entry: a \(Self.typeName(entry.value)) value, and the library writes strings only"
            )
            return item
        }
        item.value = .value(Data(text.utf8))
        item.notes.append(
            mixed > 0
                ? "plain-text entry beside \(mixed) EncryptedSharedPreferences entr\(mixed == 1 ? "y" : "ies"): written while the library had fallen back to plain SharedPreferences (2.3.0 and later, when EncryptedSharedPreferences failed to open)"
                : "plain-text entry (react-native-encrypted-storage 1.0.0, 2.3.0–2.4.4 below API 23, or the fallback of 2.3.0 and later when EncryptedSharedPreferences failed to open)"
        )
        let rules = DefaultService(options: options)
        guard let service = rules.target(for: &item, inferred: nil) else { return item }
        if let problem = DefaultService.nameProblem(service, "service") ?? DefaultService.nameProblem(entry.name, "key")
        {
            item.verdict = .blocked(problem)
            return item
        }
        item.notes.append(
            "Android: a plain-text entry in credential-encrypted app storage (readable once the device was unlocked after boot): afterFirstUnlockThisDeviceOnly"
        )
        item.target = TargetItem(
            service: service, key: entry.name, kind: .string,
            options: SetOptions(accessible: .afterFirstUnlockThisDeviceOnly, accessControl: AccessControl.none))
        if let filter = rules.filterReason { item.verdict = .skipped(filter) }
        return item
    }

    private static func typeName(_ value: PreferenceValue) -> String {
        switch value {
        case .string: "string"
        case .boolean: "boolean"
        case .int: "int"
        case .long: "long"
        default: "non-string"
        }
    }
}

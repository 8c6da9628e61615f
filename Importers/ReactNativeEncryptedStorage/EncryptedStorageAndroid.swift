import ApexDumpModel
import ApexKeychain
import ApexMigration
import Foundation

/// The entries of `RN_ENCRYPTED_STORAGE_SHARED_PREF.xml` (or of a file recognised as it by its content or by the
/// user's word): plain-text ones (migrated) and EncryptedSharedPreferences ones (sealed), told apart by content.
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
    /// Why the file is taken for the library's when its name is not the library's, or nil.
    private let claimNote: String?

    /// - Throws: ``ImportError`` naming the file when a keyset entry is not a Tink keyset in hex.
    init(
        dump: Dump, entries: [PreferenceEntry], options: ImportOptions,
        recognition: RecordClaims.EncryptedStorageFile
    ) throws(ImportError) {
        self.dump = dump
        self.entries = entries
        self.options = options
        claimNote = Self.claimNote(dump, recognition)
        nameKeyset = try Self.keyset(Self.keyKeysetName, in: entries, dump)
        valueKeyset = try Self.keyset(Self.valueKeysetName, in: entries, dump)
    }

    /// The note of a file taken for the library's under another name (or read from stdin), or nil.
    private static func claimNote(_ dump: Dump, _ recognition: RecordClaims.EncryptedStorageFile) -> String? {
        let name = ReactNativeEncryptedStorageImporter.sharedPreferencesFileName
        guard dump.fileName != name else { return nil }
        switch recognition {
        case .name:
            return nil
        case .keysets:
            return
                "the file is not named \(name): recognised as react-native-encrypted-storage's by the EncryptedSharedPreferences keysets it holds (of the four libraries, only react-native-encrypted-storage writes EncryptedSharedPreferences)"
        case .named:
            return
                "the file is not named \(name) and nothing in it marks it as react-native-encrypted-storage's: claimed because --from react-native-encrypted-storage was given"
        }
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
    /// starts with Tink's prefix (`0x01`, then a 4-byte key id):
    /// - when the file's keysets hold both key ids (the name's in the name keyset, the value's in the value
    ///   keyset), whatever its length: a boolean's or a number's ciphertext is shorter than a string's;
    /// - else when it is long enough for the shortest entry EncryptedSharedPreferences writes (an AES-SIV name of
    ///   an empty key; an AES-GCM value of a boolean): ciphertext under keys the file's keysets don't hold, or of a
    ///   file whose keysets are missing from the dump.
    ///
    /// Such an entry is never a string to migrate.
    func form(_ entry: PreferenceEntry) -> Form {
        guard case .string(let value) = entry.value, let name = Self.tinkCiphertext(entry.name),
            let sealed = Self.tinkCiphertext(value)
        else { return .plain }
        if let nameKeyset, let valueKeyset, nameKeyset.keyIDs.contains(name.keyID),
            valueKeyset.keyIDs.contains(sealed.keyID)
        {
            return .encrypted
        }
        // SIV: a 16-byte tag. GCM: a 12-byte IV, a boolean's 4-byte type and 1 byte, a 16-byte tag.
        guard name.count >= 5 + 16, sealed.count >= 5 + 12 + 5 + 16 else { return .plain }
        let matches =
            (nameKeyset.map { $0.keyIDs.contains(name.keyID) } ?? true)
            && (valueKeyset.map { $0.keyIDs.contains(sealed.keyID) } ?? true)
        return matches ? .encrypted : .encryptedUnderOtherKeys
    }

    /// The key id and length of Base64 text in Tink's form (`0x01`, a 4-byte big-endian key id, then the
    /// ciphertext); nil for anything else.
    private static func tinkCiphertext(_ text: String) -> (keyID: UInt32, count: Int)? {
        guard let bytes = base64(text), bytes.count > 5, bytes[0] == 1 else { return nil }
        return (bytes[1..<5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }, bytes.count)
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
            var item =
                form == .plain
                ? plain(entry, origin, mixed: sealedCount)
                : sealed(origin, count: sealedCount, plain: plainCount, otherKeys: form != .encrypted)
            if let claimNote { item.notes.insert(claimNote, at: 0) }
            items.append(item)
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

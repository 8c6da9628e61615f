import ApexDumpModel
import ApexKeychain
import ApexMigration

/// One service of an `RN_KEYCHAIN` file: its `:u`, `:p` and `:c` entries, after androidx's merge of the
/// SharedPreferences file into the DataStore.
struct AndroidService {
    /// The service as found (`""` is react-native-keychain's default).
    var service: String
    /// The file it is reported from.
    var dump: Dump
    /// The `:u` entry's text (Base64 of the encrypted username).
    var username: String?
    /// The `:p` entry's text.
    var password: String?
    /// The `:c` entry's text (the cipher name).
    var cipher: String?
    /// The entries a DataStore service took from the SharedPreferences file, because the DataStore lacks them.
    var borrowed: [(name: String, path: String)] = []
    /// The DataStore file whose entries win over this SharedPreferences copy.
    var shadowedBy: String?
    /// Whether the file was recognised by its entries, under a name that is not `RN_KEYCHAIN`'s.
    var renamed = false

    /// `entries "S:u", "S:p", "S:c"`, naming the entries that exist, each quoted (``SourceOrigin/quoted(_:)``) so
    /// that no entry name can make two services' locations equal (computed on each call: read it once).
    var location: String {
        var names: [String] = []
        for (found, suffix) in [(username != nil, ":u"), (password != nil, ":p"), (cipher != nil, ":c")] where found {
            names.append(SourceOrigin.quoted(service + suffix))
        }
        return "entries " + names.joined(separator: ", ")
    }
}

/// The `RN_KEYCHAIN` files of the dumps, merged as androidx's `SharedPreferencesMigration` merges them.
enum AndroidEntries {
    /// One file: each service's `:u`, `:p` and `:c` texts (string values only), and its services in the order
    /// they first occur. Services are compared byte for byte, as Java compares the entry names.
    private struct File {
        var dump: Dump
        var isDataStore: Bool
        var renamed: Bool
        /// The services in the order they first occur, each with its texts.
        var services: [(name: String, texts: Texts)] = []
        /// Where each service is in ``services``.
        var index: [ExactName: Int] = [:]

        /// The text of the entry `service` + `suffixes[suffix]`.
        func text(_ service: ExactName, _ suffix: Int) -> String? {
            index[service].flatMap { services[$0].texts[suffix] }
        }
    }

    /// A service's `:u`, `:p` and `:c` texts, by the index of the suffix in ``suffixes``.
    private struct Texts {
        var username, password, cipher: String?

        subscript(index: Int) -> String? {
            get { index == 0 ? username : index == 1 ? password : cipher }
            set {
                switch index {
                case 0: username = newValue
                case 1: password = newValue
                default: cipher = newValue
                }
            }
        }
    }

    private static let suffixes: [String] = [":u", ":p", ":c"]

    /// The services of every `RN_KEYCHAIN.xml` and `RN_KEYCHAIN.preferences_pb` among `dumps`, in file order.
    ///
    /// A DataStore service takes each entry from the DataStore, else from a SharedPreferences file (androidx
    /// copies the keys the DataStore lacks). A SharedPreferences service whose entries a DataStore also holds is
    /// kept, marked as shadowed by that DataStore.
    static func services(in dumps: [Dump]) -> [AndroidService] {
        let files = dumps.compactMap(file)
        let xmls = files.filter { !$0.isDataStore }
        let dataStores = files.filter(\.isDataStore)
        var result: [AndroidService] = []
        for file in files {
            result.reserveCapacity(result.count + file.services.count)
            for (service, found) in file.services {
                var entry = AndroidService(service: service, dump: file.dump)
                entry.renamed = file.renamed
                var texts = found
                if file.isDataStore, !xmls.isEmpty {
                    let key = ExactName(service)
                    for index in suffixes.indices where texts[index] == nil {
                        if let xml = xmls.first(where: { $0.text(key, index) != nil }) {
                            texts[index] = xml.text(key, index)
                            entry.borrowed.append((service + suffixes[index], xml.dump.path))
                        }
                    }
                } else if !file.isDataStore, !dataStores.isEmpty {
                    let key = ExactName(service)
                    entry.shadowedBy =
                        dataStores.first { store in suffixes.indices.contains { store.text(key, $0) != nil } }?
                        .dump.path
                }
                (entry.username, entry.password, entry.cipher) = (texts[0], texts[1], texts[2])
                result.append(entry)
            }
        }
        return result
    }

    /// The cipher names react-native-keychain writes in `:c` entries (all versions).
    static let cipherNames: Set<String> = [
        "FacebookConceal", "KeystoreAESCBC", "KeystoreRSAECB", "KeystoreAESGCM", "KeystoreAESGCM_NoAuth",
    ]

    /// How a preferences dump is known to be an `RN_KEYCHAIN` file, or nil when it is not one.
    enum Recognition {
        /// It has the name react-native-keychain gives it.
        case name
        /// Its entries have react-native-keychain's layout, under another name (a copy renamed `device1.xml`).
        case content
    }

    /// Whether `dump` is an `RN_KEYCHAIN` file: by its name, or by its entries (``holdsEntries(_:)``).
    static func recognition(_ dump: Dump) -> Recognition? {
        guard case .preferences(let entries) = dump.content else { return nil }
        switch dump.fileName {
        case ReactNativeKeychainImporter.sharedPreferencesFileName, ReactNativeKeychainImporter.dataStoreFileName:
            return .name
        default:
            // react-native-encrypted-storage's file holds keys the app chose, which may look like these.
            if RecordClaims.isEncryptedStorageFile(dump) { return nil }
            return holdsEntries(entries) ? .content : nil
        }
    }

    /// Whether entries are react-native-keychain's whatever the file's name: some `S:c` entry holds a cipher name
    /// it writes (``cipherNames``), or every entry is a string named `S:u`, `S:p` or `S:c` and some service has
    /// both `:u` and `:p` (the 1.x layout, without `:c`).
    static func holdsEntries(_ entries: [PreferenceEntry]) -> Bool {
        var halves: [ExactName: (username: Bool, password: Bool)] = [:]
        var onlyCredentials = true
        for entry in entries {
            guard case .string(let text) = entry.value, let (service, suffix) = split(entry.name) else {
                onlyCredentials = false
                continue
            }
            if suffix == 2, cipherNames.contains(text) { return true }
            if suffix < 2 {
                let key = ExactName(service)
                var found = halves[key] ?? (false, false)
                if suffix == 0 { found.username = true } else { found.password = true }
                halves[key] = found
            }
        }
        return onlyCredentials && halves.values.contains { $0.username && $0.password }
    }

    /// The file's react-native-keychain entries, or nil when the dump is not an `RN_KEYCHAIN` file.
    private static func file(_ dump: Dump) -> File? {
        guard case .preferences(let entries) = dump.content, let recognition = recognition(dump) else { return nil }
        var file = File(dump: dump, isDataStore: dump.format == .dataStore, renamed: recognition == .content)
        file.index.reserveCapacity(entries.count / 3 + 1)
        for entry in entries {
            guard case .string(let text) = entry.value, let (service, suffix) = split(entry.name) else { continue }
            let key = ExactName(service)
            let position: Int
            if let found = file.index[key] {
                position = found
            } else {
                position = file.services.count
                file.index[key] = position
                file.services.append((service, Texts()))
            }
            file.services[position].texts[suffix] = text
        }
        return file
    }

    /// `S` of an entry `S:u`, `S:p` or `S:c` (the name without its last two characters: services may contain
    /// `:`), and the index of its suffix in ``suffixes``; nil for any other name.
    private static func split(_ name: String) -> (service: String, index: Int)? {
        guard let index = suffixes.firstIndex(where: { name.hasSuffixBytes($0) }) else { return nil }
        return (String(decoding: name.utf8.dropLast(2), as: UTF8.self), index)
    }
}

extension String {
    /// Whether the UTF-8 bytes end with `suffix`'s (no Unicode normalisation, unlike `hasSuffix`).
    fileprivate func hasSuffixBytes(_ suffix: String) -> Bool {
        utf8.count >= suffix.utf8.count && utf8.suffix(suffix.utf8.count).elementsEqual(suffix.utf8)
    }
}

import ApexDumps

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

    /// `entries S:u/S:p/S:c`, naming the entries that exist.
    var location: String {
        let names = [(username, "u"), (password, "p"), (cipher, "c")].compactMap { $0.0 == nil ? nil : service + ":" + $0.1 }
        return "entries " + names.joined(separator: "/")
    }
}

/// The `RN_KEYCHAIN` files of the dumps, merged as androidx's `SharedPreferencesMigration` merges them.
enum AndroidEntries {
    /// One file: its entries by name (string values only), and its services in the order they first occur.
    private struct File {
        var dump: Dump
        var isDataStore: Bool
        var values: [String: String] = [:]
        var services: [String] = []
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
            for service in file.services {
                let names = suffixes.map { service + $0 }
                var entry = AndroidService(service: service, dump: file.dump)
                var texts: [String?] = names.map { file.values[$0] }
                if file.isDataStore {
                    for (index, name) in names.enumerated() where texts[index] == nil {
                        if let xml = xmls.first(where: { $0.values[name] != nil }) {
                            texts[index] = xml.values[name]
                            entry.borrowed.append((name, xml.dump.path))
                        }
                    }
                } else {
                    entry.shadowedBy = dataStores.first { store in names.contains { store.values[$0] != nil } }?.dump.path
                }
                (entry.username, entry.password, entry.cipher) = (texts[0], texts[1], texts[2])
                result.append(entry)
            }
        }
        return result
    }

    /// The file's react-native-keychain entries, or nil when the dump is not an `RN_KEYCHAIN` file.
    private static func file(_ dump: Dump) -> File? {
        guard case .preferences(let entries) = dump.content else { return nil }
        let isDataStore: Bool
        switch dump.fileName {
        case ReactNativeKeychainImporter.sharedPreferencesFileName: isDataStore = false
        case ReactNativeKeychainImporter.dataStoreFileName: isDataStore = true
        default: return nil
        }
        var file = File(dump: dump, isDataStore: isDataStore)
        var seen: Set<String> = []
        for entry in entries {
            guard case .string(let text) = entry.value, let service = service(of: entry.name) else { continue }
            file.values[entry.name] = text
            if seen.insert(service).inserted { file.services.append(service) }
        }
        return file
    }

    /// `S` of an entry `S:u`, `S:p` or `S:c`: the name without its last two characters (services may contain
    /// `:`), or nil for any other name.
    static func service(of name: String) -> String? {
        guard suffixes.contains(where: { name.hasSuffixBytes($0) }) else { return nil }
        return String(decoding: name.utf8.dropLast(2), as: UTF8.self)
    }
}

extension String {
    /// Whether the UTF-8 bytes end with `suffix`'s (no Unicode normalisation, unlike `hasSuffix`).
    fileprivate func hasSuffixBytes(_ suffix: String) -> Bool {
        utf8.count >= suffix.utf8.count && utf8.suffix(suffix.utf8.count).elementsEqual(suffix.utf8)
    }
}

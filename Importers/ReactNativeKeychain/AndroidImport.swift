import ApexDumpModel
import ApexKeychain
import ApexMigration
import Foundation

/// react-native-keychain's Android services: one credentials item per service, its username and password
/// encrypted by the cipher its `:c` entry names.
struct AndroidImport {
    private let options: ImportOptions
    private let rules: ServiceRules
    private let services: [AndroidService]
    private let keyring: ConcealKeyring

    init(dumps: [Dump], options: ImportOptions, keyring: ConcealKeyring) {
        self.options = options
        self.rules = ServiceRules(options: options)
        self.services = AndroidEntries.services(in: dumps)
        self.keyring = keyring
    }

    /// One item per service, in file and entry order.
    func items() -> [SourceItem] {
        var items = services.concurrentMap { item($0) }
        // A tag that fails where the same key opens other entries of the file is damage, not a missing or wrong key
        // file: sealed for good, so that it does not keep the migration open.
        let opened = Set(items.lazy.filter { if case .sealed = $0.value { false } else { true } }.map(\.origin.path))
        for index in items.indices
        where items[index].verdict == .needsInput(ConcealEntry.tagMismatch) && opened.contains(items[index].origin.path)
        {
            items[index].verdict = .migrate
            items[index].value = .sealed(
                ConcealEntry.tagMismatch
                    + "; the same key opens this file's other FacebookConceal entries, so this one is damaged")
        }
        return items
    }

    static let conceal = "FacebookConceal"
    static let keystoreSealed = "Android Keystore key: the value can only be read on the device"

    private func item(_ entry: AndroidService) -> SourceItem {
        var item = SourceItem(
            library: .reactNativeKeychain, platform: .android,
            origin: SourceOrigin(path: entry.dump.path, format: entry.dump.format, location: entry.location),
            source: SourceDescription(service: entry.service, protection: entry.cipher.map { ["cipher": $0] } ?? [:]),
            value: .sealed(Self.keystoreSealed), target: nil)
        if entry.renamed {
            let name =
                entry.dump.format == .dataStore
                ? ReactNativeKeychainImporter.dataStoreFileName : ReactNativeKeychainImporter.sharedPreferencesFileName
            item.notes.append(
                "the file is named \(quoted(entry.dump.fileName)), not \(name): recognised as react-native-keychain's by its <service>:u, :p and :c entries"
            )
        }
        for (name, path) in entry.borrowed {
            item.notes.append(
                "entry \(quoted(name)) is taken from \(path): the DataStore lacks it, and androidx's SharedPreferences migration copies it over"
            )
        }
        guard let username = entry.username, let password = entry.password else {
            item.value = .sealed("incomplete entry: there is no value to read")
            item.verdict = .skipped(
                "incomplete: react-native-keychain reads a service only when both \(quoted(entry.service + ":u")) and \(quoted(entry.service + ":p")) exist"
            )
            return item
        }
        let cipher = entry.cipher ?? Self.conceal
        if entry.cipher == nil {
            item.notes.append(
                "no \(quoted(entry.service + ":c")) entry (written by react-native-keychain 1.x): read as FacebookConceal, as versions 2 to 9 do; version 10 treats the entry as absent"
            )
        }
        var valueProblem: String?
        var missing: String?
        if cipher == Self.conceal {
            let opened = ConcealEntry.open(
                username: username, password: password, service: entry.service, keyring: keyring)
            item.value = opened.value
            item.source.account = opened.account
            item.notes += opened.notes
            valueProblem = opened.problem
            if opened.needsInput, case .sealed(let why) = opened.value { missing = why }
        }
        let filter = rules.filterReason(entry.service)
        // A cipher with no known protection still leaves a target (service and key) with no protection; a service
        // that can't be named leaves none.
        var protection: Result<MappedProtection, Blocked>
        do throws(Blocked) {
            let mapped = try AndroidProtection.map(cipher: cipher, options: options)
            item.notes += mapped.notes
            protection = .success(mapped)
        } catch {
            protection = .failure(error)
        }
        var target: TargetItem?
        var blocked: String?
        do throws(Blocked) {
            let service = try targetService(entry.service, notes: &item.notes)
            switch protection {
            case .success(let mapped):
                target = TargetItem(service: service, key: "credentials", kind: .credentials, options: mapped.options)
            case .failure:
                target = .unknownProtection(service: service, key: "credentials", kind: .credentials)
            }
        } catch {
            if error.needsInput { missing = missing ?? error.reason } else { blocked = error.reason }
        }
        if case .failure(let unmapped) = protection { blocked = unmapped.reason }
        if let shadowedBy = entry.shadowedBy, filter == nil {
            item.verdict = .shadowed(
                "the DataStore \(shadowedBy) holds this service's entries, and they win: androidx's SharedPreferences migration keeps the keys the DataStore already has"
            )
            item.target = target
        } else if let filter {
            item.verdict = .skipped(filter)
            item.target = valueProblem == nil ? target : nil
        } else if let reason = blocked ?? valueProblem {
            item.verdict = .blocked(reason)
            item.target = target
        } else if let missing {
            item.verdict = .needsInput(missing)
            item.target = target
        } else {
            item.target = target
        }
        return item
    }

    /// Whether `service` holds `://` (a server URL), byte for byte.
    static func containsScheme(_ service: String) -> Bool {
        var previous: (UInt8, UInt8) = (0, 0)
        for byte in service.utf8 {
            if previous == (UInt8(ascii: ":"), UInt8(ascii: "/")), byte == UInt8(ascii: "/") { return true }
            previous = (previous.1, byte)
        }
        return false
    }

    /// The target service: the user's mapping, else the service itself; the default `""` goes to the bundle id.
    private func targetService(_ service: String, notes: inout [String]) throws(Blocked) -> String {
        if let mapped = options.serviceMap[service] {
            try ServiceRules.checkName(mapped, "service")
            notes.append("service \(quoted(service)) is written to \(quoted(mapped)), as the service map says")
            return mapped
        }
        guard service.isEmpty else {
            try ServiceRules.checkName(service, "service")
            if Self.containsScheme(service) {
                notes.append(
                    "on Android, internet credentials are stored like generic ones under the server's name; if the app saved this with setInternetCredentials, its iOS counterpart is 'credentials:<server>' in the app's default service"
                )
            }
            return service
        }
        guard let bundleID = options.bundleID else {
            throw .needsInput(
                "the item is in react-native-keychain's default Android service \"\", which goes to the app's default service (its bundle id): pass --bundle-id, or name a service for \"\" with --service-map"
            )
        }
        try ServiceRules.checkName(bundleID, "service")
        notes.append(
            "react-native-keychain's default Android service \"\" is written to the app's default service \(quoted(bundleID)), the bundle id given (--bundle-id, or the store's from 'store init --bundle-id')"
        )
        return bundleID
    }
}

/// The protection of each cipher, mapped to the package's.
enum AndroidProtection {
    /// The ciphers with no user authentication.
    static let unauthenticated: Set<String> = ["KeystoreAESCBC", "KeystoreAESGCM_NoAuth", AndroidImport.conceal]
    /// The ciphers whose key needs a strong biometric (5 s validity).
    static let biometric: Set<String> = ["KeystoreRSAECB", "KeystoreAESGCM"]

    static func map(cipher: String, options: ImportOptions) throws(Blocked) -> MappedProtection {
        var notes = [
            "accessible 'afterFirstUnlock': Android has no lock-state classes, and react-native-keychain's keys could be used whenever the app ran"
        ]
        let isKeystore = cipher != AndroidImport.conceal
        if isKeystore, unauthenticated.contains(cipher) || biometric.contains(cipher) {
            notes.append(
                "keyStorage 'strongbox': react-native-keychain created its Keystore keys in StrongBox when the device had it"
            )
        }
        if unauthenticated.contains(cipher) {
            let options = SetOptions(
                accessible: .afterFirstUnlock, accessControl: AccessControl.none,
                android: isKeystore ? AndroidOptions(keyStorage: .strongbox) : nil)
            if !isKeystore {
                notes.append(
                    "FacebookConceal kept its key in the app's files (crypto.KEY_256.xml), outside the Keystore; the migrated item gets the package's Keystore protection, which is stronger"
                )
            }
            return MappedProtection(options: options, notes: notes)
        }
        guard biometric.contains(cipher) else {
            throw Blocked("unknown cipher \(quoted(cipher)): its protection can't be mapped")
        }
        let control: AccessControl = options.androidBiometryAcceptsPasscode ? .biometryAnyOrPasscode : .biometryAny
        notes.append(
            "\(cipher)'s key needed a strong biometric, valid for 5 s after each authentication and not invalidated by new enrolments: mapped to '\(control.rawValue)' with authValidity 5"
        )
        if options.androidBiometryAcceptsPasscode {
            notes.append(
                "the device credential is accepted too, as you said react-native-keychain 10 did (API 30 and later)")
        } else {
            notes.append(
                "react-native-keychain 10 also accepted the device credential (API 30 and later); if the app used version 10, pass --android-biometry-accepts-passcode to migrate, which maps it to 'biometryAnyOrPasscode'"
            )
        }
        let options = SetOptions(
            accessible: .afterFirstUnlock, accessControl: control, authValidity: 5,
            android: AndroidOptions(keyStorage: .strongbox))
        return MappedProtection(options: options, notes: notes)
    }
}

import ApexDumpModel
import ApexKeychain
import ApexMigration
import ExpoSecureStoreImporter
import Foundation

/// The Android half of the importer: the entries of the files ``RNSIAndroidFile`` recognises.
struct RNSIAndroidImport {
    private let options: ImportOptions
    private let files: [(dump: Dump, kind: RNSIAndroidFile, entries: [PreferenceEntry])]
    /// Service names whose hash may name a 6.x file.
    private let candidates: [String]

    init(dumps: [Dump], options: ImportOptions, iosServices: [String]) {
        var files: [(Dump, RNSIAndroidFile, [PreferenceEntry])] = []
        var candidates = [ReactNativeSensitiveInfoImporter.modernService]
        if let bundle = options.bundleID { candidates.append(bundle) }
        candidates += options.serviceMap.sources + iosServices
        for dump in dumps {
            guard case .preferences(let entries) = dump.content,
                let kind = RNSIAndroidFile.kind(of: dump, named: RNSINaming.named(options))
            else { continue }
            if kind == .keyVersions { candidates += entries.map(\.name) }
            files.append((dump, kind, entries))
        }
        self.options = options
        self.files = files
        self.candidates = candidates
    }

    func items() -> [SourceItem] {
        var items: [SourceItem] = []
        var ranks: [Int] = []
        for (dump, kind, entries) in files {
            let service = Self.service(of: kind, among: candidates)
            let rank = Self.rank(kind, fileName: dump.fileName)
            for (index, entry) in entries.enumerated() {
                let origin = SourceOrigin(path: dump.path, format: dump.format, location: "entry \(index + 1)")
                items.append(item(entry, origin: origin, kind: kind, fileName: dump.fileName, service: service))
                ranks.append(rank)
            }
        }
        return Self.shadowingOlderCopies(items, ranks: ranks)
    }

    /// Which file a newer version reads: 6.x's, 5.6.x's, `shared_preferences.xml` (and custom names), alpha.1's
    /// `keystore.xml`, then ≤5.0.0's `app.xml`. No version reads an older one's file (the format doc, §12).
    private static func rank(_ kind: RNSIAndroidFile, fileName: String) -> Int {
        switch kind {
        case .v6: 0
        case .v5_6: 1
        case .keyVersions: 5
        case .classic: fileName == "app.xml" ? 4 : fileName == "keystore.xml" ? 3 : 2
        }
    }

    /// One copy per target service and key: the newest version's file wins (then the first dump); the others are
    /// shadowed, so an upgrade's stale copy never conflicts with the value the app reads now.
    private static func shadowingOlderCopies(_ found: [SourceItem], ranks: [Int]) -> [SourceItem] {
        var items = found
        var groups: [ExactName: [Int]] = [:]
        for (index, item) in items.enumerated() where item.verdict == .migrate {
            guard let target = item.target else { continue }
            groups[ExactName(target.service, target.key), default: []].append(index)
        }
        for members in groups.values where members.count > 1 {
            let ordered = members.sorted { (ranks[$0], $0) < (ranks[$1], $1) }
            let winner = items[ordered[0]]
            for loser in ordered.dropFirst() {
                let why =
                    ranks[loser] == ranks[ordered[0]]
                    ? "a duplicate from another dump"
                    : "a later version's file: the library never reads an older version's file"
                items[loser].verdict = .shadowed(
                    "the same target service and key come from \(winner.origin.path) \(winner.origin.location), which is taken (\(why))"
                )
            }
        }
        return items
    }

    /// The service a 6.x file's name hashes, among `candidates`.
    private static func service(of kind: RNSIAndroidFile, among candidates: [String]) -> String? {
        guard case .v6(let hash?) = kind else { return nil }
        return candidates.first { RNSINaming.serviceHash($0) == hash }
    }

    private func item(
        _ entry: PreferenceEntry, origin: SourceOrigin, kind: RNSIAndroidFile, fileName: String, service: String?
    ) -> SourceItem {
        var item = SourceItem(
            library: .reactNativeSensitiveInfo, platform: .android, origin: origin,
            source: SourceDescription(account: entry.name), value: .sealed("not read"), target: nil)
        guard case .string(let text) = entry.value else {
            // Only rnsi.key_versions.xml holds other types.
            item.source.service = entry.name
            item.source.account = nil
            item.verdict = .skipped(
                "react-native-sensitive-info 6.x's key-version counter of service '\(entry.name)', not a secret")
            return item
        }
        switch kind {
        case .keyVersions:
            item.verdict = .skipped("an entry of react-native-sensitive-info's key-version file, not a secret")
            return item
        case .classic(let how):
            return classic(item, key: entry.name, text: text, how: how, fileName: fileName)
        case .v5_6, .v6:
            return modern(item, name: entry.name, text: text, kind: kind, fileName: fileName, service: service)
        }
    }

    // MARK: 4.x – 5.5.8, 6.0.0-alpha

    private func classic(_ found: SourceItem, key: String, text: String, how: String, fileName: String) -> SourceItem {
        var item = found
        var notes = [
            "claimed as react-native-sensitive-info 4.x–5.5.8 / 6.0.0-alpha: \(how)",
            "the classic Android values have no service: taken as 'app', the iOS default of the same versions",
        ]
        let protection: ExpoProtection
        switch RNSIAndroidEntry.shape(text) {
        case .touchID:
            item.value = .sealed(
                "a touchID value: AES-CBC under the Android Keystore key 'MyAesKeyAlias', which needs a fingerprint on every use and never leaves the device: decrypt it on the device"
            )
            item.source.protection = ["cipher": "touchID (AES/CBC, MyAesKeyAlias)"]
            protection = ExpoProtection(
                accessible: .whenPasscodeSetThisDeviceOnly, accessControl: .biometryCurrentSet,
                notes: [
                    "touchID: the key needs biometric authentication on every use and, unless the app called setInvalidatedByBiometricEnrollment(false), a new enrollment invalidates it → biometryCurrentSet (the stronger reading)",
                    Self.authNote,
                ])
        case .alphaCiphertext:
            let alias = fileName == "app.xml" ? "SHARED_PREFERENCE_KEY" : "MySharedPreferenceKeyAlias"
            item.value = .sealed(
                "6.0.0-alpha / 5.0.0 ciphertext: AES-GCM (or RSA below API 23) under the Android Keystore key '\(alias)', which never leaves the device: decrypt it on the device"
            )
            item.source.protection = ["cipher": "AES/GCM fixed IV (\(alias))"]
            protection = ExpoProtection(
                accessible: .afterFirstUnlockThisDeviceOnly, accessControl: .none,
                notes: [
                    "told from plaintext by its shape (Base64 with a final line break, at least 16 bytes: ciphertext and tag); the key needs no authentication",
                    Self.unlockNote,
                ])
        case .plaintext:
            item.value = .value(Data(text.utf8))
            item.source.protection = ["cipher": "none (plaintext)"]
            protection = ExpoProtection(
                accessible: .afterFirstUnlock, accessControl: .none,
                notes: [
                    "a plaintext value (4.x and 5.0.1–5.5.8 wrote values in the clear): readable from app storage once the device was unlocked after boot, and included in backups → afterFirstUnlock"
                ])
        }
        notes += protection.notes
        let (service, mapNote) = ExpoNaming.targetService(
            [ReactNativeSensitiveInfoImporter.classicService], base: ReactNativeSensitiveInfoImporter.classicService,
            options)
        if let mapNote { notes.append(mapNote) }
        item.notes = notes
        return finish(
            item, service: service, key: key, names: [ReactNativeSensitiveInfoImporter.classicService],
            protection: protection)
    }

    // MARK: 5.6.x and 6.x

    private func modern(
        _ found: SourceItem, name: String, text: String, kind: RNSIAndroidFile, fileName: String, service: String?
    ) -> SourceItem {
        var item = found
        guard let fields = RNSIAndroidEntry.json(text), let entry = RNSIModernEntry(fields) else {
            item.verdict = .skipped(
                "not a react-native-sensitive-info entry: its value is not the JSON (ciphertext, iv, alias or version) the library writes"
            )
            return item
        }
        var notes: [String] = []
        var key = name
        var serviceFound = service
        let alias: String
        if kind == .v5_6 {
            notes.append("react-native-sensitive-info 5.6.x ('sensitive_info.xml', entries '<service>::<key>')")
            if let s = entry.service, let k = entry.key, name == s + "::" + k {
                serviceFound = s
                key = k
            } else if let cut = name.range(of: "::") {
                serviceFound = String(name[..<cut.lowerBound])
                key = String(name[cut.upperBound...])
                notes.append("the entry's JSON does not name its service and key: split at the first '::'")
            }
            alias = RNSINaming.sha256Hex(name, bytes: 16)
        } else {
            notes.append("react-native-sensitive-info 6.x ('sensitive_info_<hash>.xml', one file per service)")
            alias = entry.alias ?? "(not recorded)"
            if let serviceFound {
                notes.append(
                    "service '\(serviceFound)' found by its SHA-256, which the file name '\(fileName)' holds")
            }
        }
        item.source.service = serviceFound
        item.source.account = key
        item.value = .sealed(
            "AES-256-GCM under the Android Keystore key '\(alias)', which never leaves the device: decrypt it on the device"
        )
        var protection: [String: String] = [
            "requiresAuthentication": entry.requiresAuthentication ? "true" : "false",
            "authenticators": String(entry.authenticators),
            "invalidateOnEnrollment": entry.invalidateOnEnrollment ? "true" : "false",
        ]
        if let control = entry.accessControl { protection["accessControl"] = control }
        if let level = entry.securityLevel { protection["securityLevel"] = level }
        item.source.protection = protection
        let mapped = Self.protection(entry, v6: kind != .v5_6)
        notes += mapped.notes
        guard let serviceFound else {
            item.notes = notes
            item.verdict = .needsInput(
                "the service is not recorded: the file name holds the first 8 bytes of its SHA-256, which match none of 'default', the bundle id and the services of --service-map; name it with --service-map SERVICE=TARGET"
            )
            return item
        }
        let (service, mapNote) = ExpoNaming.targetService([serviceFound], base: serviceFound, options)
        if let mapNote { notes.append(mapNote) }
        item.notes = notes
        return finish(item, service: service, key: key, names: [serviceFound], protection: mapped)
    }

    /// An entry's protection from what it records; the stronger reading where its fields disagree.
    static func protection(_ entry: RNSIModernEntry, v6: Bool) -> ExpoProtection {
        let requires = entry.requiresAuthentication || (entry.accessControl.map { $0 != "none" } ?? false)
        guard requires else {
            return ExpoProtection(
                accessible: .afterFirstUnlockThisDeviceOnly, accessControl: .none,
                notes: ["no authentication (accessControl 'none')", unlockNote])
        }
        let passcode = entry.authenticators & 0x8000 != 0
        let biometric = entry.authenticators & 0xFF != 0
        var notes: [String] = []
        let control: AccessControl
        if entry.accessControl == "devicePasscode" || (passcode && !biometric) {
            control = .passcode
        } else {
            // Unknown enrollment binding (no authenticators recorded) takes the stronger reading.
            let currentSet = entry.invalidateOnEnrollment || entry.authenticators == 0
            control =
                passcode
                ? (currentSet ? .biometryCurrentSetOrPasscode : .biometryAnyOrPasscode)
                : (currentSet ? .biometryCurrentSet : .biometryAny)
        }
        let asked =
            entry.requiresAuthentication
            ? "authentication required"
            : "requiresAuthentication false, but accessControl asks for authentication: the stronger reading"
        notes.append(
            "\(asked) (accessControl '\(entry.accessControl ?? "?")', authenticators 0x\(String(entry.authenticators, radix: 16)), invalidateOnEnrollment \(entry.invalidateOnEnrollment)) → \(control.rawValue)"
        )
        notes.append(
            v6
                ? "on API 30+ 6.x keys are probably not bound to authentication (only the app's prompt gates them): mapped to what the entry asks for, the stronger reading"
                : "on API 28 and lower 5.6.x keys are not bound to authentication (only the app's prompt gates them): mapped to what the entry asks for, the stronger reading"
        )
        notes.append(authNote)
        return ExpoProtection(accessible: .whenPasscodeSetThisDeviceOnly, accessControl: control, notes: notes)
    }

    // MARK: Shared

    static let unlockNote =
        "Android: credential-encrypted app storage (readable once the device was unlocked after boot) and a Keystore key that never leaves the device → afterFirstUnlockThisDeviceOnly"
    static let authNote =
        "Android: a Keystore key that needs user authentication exists only while a secure lock screen is set → whenPasscodeSetThisDeviceOnly"

    /// The item with its target and verdict.
    private func finish(
        _ found: SourceItem, service: String, key: String, names: [String], protection: ExpoProtection
    ) -> SourceItem {
        var item = found
        if let problem = ExpoNaming.nameProblem(key, "key") ?? ExpoNaming.nameProblem(service, "target service") {
            item.verdict = .blocked(problem)
        } else {
            item.target = TargetItem(
                service: service, key: key, kind: .string,
                options: SetOptions(
                    accessible: protection.accessible, accessControl: protection.accessControl,
                    authValidity: protection.accessControl == .none ? nil : 0, synchronizable: false))
        }
        if let filtered = ExpoNaming.filterVerdict(names, options) { item.verdict = filtered }
        return item
    }
}

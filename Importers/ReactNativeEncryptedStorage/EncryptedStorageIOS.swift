import ApexDumpModel
import ApexKeychain
import ApexMigration
import Foundation

/// react-native-encrypted-storage's iOS items: generic passwords with no service, account = key, data = value.
struct EncryptedStorageIOS {
    private let options: ImportOptions
    private let candidates: [(dump: Dump, record: KeychainRecord)]
    private let app: AppIdentity
    /// The paths of the dumps that hold another SDK's empty-service item.
    private let contradicted: Set<String>
    /// Whether the user named this library (`--from react-native-encrypted-storage`).
    private let named: Bool

    init(dumps: [Dump], options: ImportOptions) {
        var candidates: [(dump: Dump, record: KeychainRecord)] = []
        var all: [KeychainRecord] = []
        for dump in dumps {
            guard case .keychain(let records) = dump.content else { continue }
            all += records
            for record in records where ReactNativeEncryptedStorageImporter.hasItemShape(record) {
                candidates.append((dump, record))
            }
        }
        let app = AppIdentity(records: all, bundleID: options.bundleID)
        // Only the app's own items count: other apps' empty-service items (a whole device's dump) say nothing of
        // what this app wrote.
        var contradicted = Set<String>()
        for (dump, record) in candidates
        where Self.markReason(record) != nil && record.accessGroup.flatMap(app.foreignGroupReason) == nil {
            contradicted.insert(dump.path)
        }
        self.options = options
        self.candidates = candidates
        self.app = app
        self.contradicted = contradicted
        self.named = options.libraries?.contains(.reactNativeEncryptedStorage) ?? false
    }

    /// Why an empty-service item is recognisably another SDK's or another app's, or nil.
    static func foreignReason(_ record: KeychainRecord, _ app: AppIdentity) -> String? {
        if let group = record.accessGroup, let reason = app.foreignGroupReason(group) { return reason }
        return markReason(record)
    }

    /// Why an empty-service item is recognisably another SDK's by an attribute the library never sets, or nil.
    static func markReason(_ record: KeychainRecord) -> String? {
        let attribute =
            NoteText.foreignAttribute(record)
            ?? (record.accessControl.map { !$0.flags.isEmpty } ?? record.extra["accc"].map(NoteText.isSet) ?? false
                ? "an access control (accc)" : nil)
            ?? (record.synchronizable ? "iCloud Keychain sync (sync)" : nil)
        guard let attribute else { return nil }
        return
            "another SDK's item with an empty service: it has \(attribute), which react-native-encrypted-storage never sets"
    }

    func items() -> [SourceItem] {
        candidates.map { item($0.dump, $0.record) }
    }

    private func item(_ dump: Dump, _ record: KeychainRecord) -> SourceItem {
        var protection: [String: String] = ["synchronizable": record.synchronizable ? "true" : "false"]
        protection["pdmn"] = record.protection
        record.accessControl?.record(in: &protection)
        var item = SourceItem(
            library: .reactNativeEncryptedStorage, platform: .ios,
            origin: SourceOrigin(path: dump.path, format: dump.format, location: record.location),
            source: SourceDescription(
                itemClass: record.itemClass, service: record.service?.text, account: record.account?.text,
                accessGroup: record.accessGroup, protection: protection),
            value: .sealed("not read"), target: nil)
        let (value, valueProblem) = Self.value(record)
        item.value = value
        if let reason = Self.foreignReason(record, app) {
            item.verdict = .skipped(reason)
            return item
        }
        if named {
            item.notes.append(
                "claimed as react-native-encrypted-storage's: a generic password with no service, and --from react-native-encrypted-storage names the library"
            )
        } else if contradicted.contains(dump.path) {
            item.verdict = .skipped(
                "a generic password with no service, but the dump also holds another SDK's items with no service, so it may be theirs: pass --from react-native-encrypted-storage to migrate it as react-native-encrypted-storage's"
            )
            return item
        } else {
            item.notes.append(
                "claimed as react-native-encrypted-storage's on weak evidence: a generic password with no service and no attribute that library never sets (it writes no mark of its own); another SDK that writes such items would look the same"
            )
        }
        let rules = DefaultService(options: options)
        guard let service = rules.target(for: &item, inferred: app) else { return item }
        guard let key = record.account?.text else {
            item.verdict = .blocked("the account (the key) is missing or not valid UTF-8, so it can't name a key")
            return item
        }
        if let problem = DefaultService.nameProblem(service, "service") ?? DefaultService.nameProblem(key, "key") {
            item.verdict = .blocked(problem)
            return item
        }
        let group = accessGroup(record, notes: &item.notes)
        // A pdmn or sync the dump holds but can't be read: the item's protection is unknown, whatever the default.
        let protectionClass =
            record.unreadableProtection.map { Result.failure(ProtectionProblem($0)) }
            ?? Self.accessible(record.protection)
        switch protectionClass {
        case .failure(let reason):
            item.target = .unknownProtection(service: service, key: key, kind: .string, accessGroup: group)
            item.verdict = .blocked(reason.reason)
        case .success(let (accessible, note)):
            if let note { item.notes.append(note) }
            let options = SetOptions(accessible: accessible, accessControl: AccessControl.none, synchronizable: false)
            item.target = TargetItem(service: service, key: key, kind: .string, options: options, accessGroup: group)
            if let valueProblem { item.verdict = .blocked(valueProblem) }
        }
        if let filter = rules.filterReason { item.verdict = .skipped(filter) }
        return item
    }

    /// The target class for `pdmn` as found, with a note when it is not what the library leaves (Apple's
    /// default), or why there is none (also when the dump records no class: Apple's default is never assumed).
    static func accessible(_ pdmn: String?) -> Result<(Accessible, String?), ProtectionProblem> {
        // Apple's default is never assumed: a patched copy of the library (issue #104) sets a this-device-only
        // class, which whenUnlocked would weaken.
        guard let pdmn else {
            return .failure(
                ProtectionProblem(
                    "the dump records no protection class (pdmn): react-native-encrypted-storage sets none, but a patched copy of it (issue #104) sets a this-device-only one, so Apple's default whenUnlocked is not assumed"
                ))
        }
        guard let domain = ProtectionDomain(rawValue: pdmn) else {
            return .failure(
                ProtectionProblem(
                    "unknown protection class (pdmn) \(NoteText.quoted(pdmn)): it has no equivalent in the package"))
        }
        switch domain {
        case .ak: return .success((.whenUnlocked, nil))
        case .dk:
            return .success(
                (
                    .afterFirstUnlock,
                    "pdmn dk (always, deprecated) is not supported by the package: mapped to the nearest stronger afterFirstUnlock"
                ))
        case .dku:
            return .success(
                (
                    .afterFirstUnlockThisDeviceOnly,
                    "pdmn dku (always, this device only, deprecated) is not supported by the package: mapped to the nearest stronger afterFirstUnlockThisDeviceOnly"
                ))
        case .ck, .aku, .cku, .akpu:
            let accessible = domain.accessible ?? .whenPasscodeSetThisDeviceOnly
            return .success(
                (
                    accessible,
                    "pdmn \(pdmn) kept as found (\(accessible.rawValue)): react-native-encrypted-storage sets no class, so a patched copy of it (issue #104) or an earlier write chose this one"
                ))
        }
    }

    /// The target's access group: the item's, when it is not the app's default group (with a note).
    private func accessGroup(_ record: KeychainRecord, notes: inout [String]) -> String? {
        guard let group = record.accessGroup, !app.isDefaultGroup(group) else { return nil }
        notes.append(
            app.defaultService == nil
                ? "kept in access group \(NoteText.quoted(group)): without the bundle id it can't be told from the app's default group"
                : "kept in access group \(NoteText.quoted(group)), which is not the app's default group (react-native-encrypted-storage writes to the first group of the app's entitlement)"
        )
        return group
    }

    /// The value as found, and why it can't be written as a string.
    static func value(_ record: KeychainRecord) -> (SourceValue, String?) {
        switch record.value {
        case .absent: return (.sealed("the dump holds no value for this item"), nil)
        case .damaged(let why): return (.sealed("the dump's value can't be used: \(why)"), "damaged value: \(why)")
        case .data(let data):
            guard String(validUTF8: data) != nil else {
                return (
                    .value(data),
                    "the value is not valid UTF-8: react-native-encrypted-storage reads it as a string and returns nothing"
                )
            }
            return (.value(data), nil)
        }
    }
}

/// Why an item's protection has no equivalent in the package.
struct ProtectionProblem: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

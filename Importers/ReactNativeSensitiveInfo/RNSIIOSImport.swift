import ApexDumpModel
import ApexKeychain
import ApexMigration
import ExpoSecureStoreImporter
import Foundation

/// Which react-native-sensitive-info family wrote an iOS item, told by its generic attribute (`gena`).
enum RNSIIOSFamily: Equatable {
    /// 4.x–5.5.8 and 6.0.0-alpha: no `gena`.
    case classic
    /// 5.6.x: JSON `{accessControl, securityLevel, timestamp}`.
    case v5_6(SensitiveInfoMetadata)
    /// 6.x: JSON `{securityLevel, backend, accessControl, timestamp}`.
    case v6(SensitiveInfoMetadata)
    /// Later 6.x: the metadata HMAC key item (`<S>.rnsi.hmac`, account `metadata`).
    case hmacKey

    /// The family of `record`, or nil when this library did not write it (``RecordClaims/sensitiveInfoShape(_:options:)``,
    /// the claim react-native-keychain's importer defers to).
    static func of(_ record: KeychainRecord, options: ImportOptions) -> RNSIIOSFamily? {
        switch RecordClaims.sensitiveInfoShape(record, options: options) {
        case nil: nil
        case .classic: .classic
        case .metadata(let metadata): metadata.backend == nil ? .v5_6(metadata) : .v6(metadata)
        case .hmacKey: .hmacKey
        }
    }

    /// The versions, for notes.
    var versions: String {
        switch self {
        case .classic: "4.x–5.5.8 or 6.0.0-alpha (no generic attribute)"
        case .v5_6: "5.6.x (JSON metadata without 'backend' in the generic attribute)"
        case .v6: "6.x (JSON metadata with 'backend' in the generic attribute)"
        case .hmacKey: "6.x"
        }
    }
}

/// The iOS half of the importer.
struct RNSIIOSImport {
    private let options: ImportOptions
    private let claimed: [(dumpIndex: Int, dump: Dump, record: KeychainRecord, family: RNSIIOSFamily)]
    private let defaultGroup: String?

    init(dumps: [Dump], options: ImportOptions) {
        var claimed: [(Int, Dump, KeychainRecord, RNSIIOSFamily)] = []
        for (index, dump) in dumps.enumerated() {
            guard case .keychain(let records) = dump.content else { continue }
            for record in records {
                if let family = RNSIIOSFamily.of(record, options: options) {
                    claimed.append((index, dump, record, family))
                }
            }
        }
        self.options = options
        self.claimed = claimed
        // Without a bundle id, the access group most of the items share is taken as the app's default.
        var counts: [String: Int] = [:]
        for item in claimed { if let group = item.2.accessGroup { counts[group, default: 0] += 1 } }
        defaultGroup = counts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
    }

    /// One item per claimed record; the second copy of one service, group and key is shadowed.
    func items() -> [SourceItem] {
        var items = claimed.map { item($0.dump, $0.record, $0.family) }
        var first: [ExactName: Int] = [:]
        for index in items.indices {
            guard items[index].verdict == .migrate, let target = items[index].target else { continue }
            let place = ExactName(target.service, target.accessGroup ?? "", target.key)
            if let winner = first[place] {
                let there = "\(items[winner].origin.path) \(items[winner].origin.location)"
                items[index].verdict = .shadowed(
                    "the same target service and key come from \(there), which is taken (a copy in another dump or service)"
                )
            } else {
                first[place] = index
            }
        }
        return items
    }

    private func item(_ dump: Dump, _ record: KeychainRecord, _ family: RNSIIOSFamily) -> SourceItem {
        let service = record.service?.text ?? ""
        let key = record.account?.text ?? ""
        var protection: [String: String] = ["sync": RecordClaims.syncAsFound(record)]
        if let pdmn = record.protection { protection["pdmn"] = pdmn }
        record.accessControl?.record(in: &protection)
        var item = SourceItem(
            library: .reactNativeSensitiveInfo, platform: .ios,
            origin: SourceOrigin(path: dump.path, format: dump.format, location: record.location),
            source: SourceDescription(
                itemClass: record.itemClass, service: service, account: key, accessGroup: record.accessGroup,
                protection: protection),
            value: .sealed("not read"), target: nil)
        var notes = ["written by react-native-sensitive-info \(family.versions)"]
        if family == .hmacKey {
            item.verdict = .skipped(
                "react-native-sensitive-info 6.x's own metadata HMAC key (service '<S>.rnsi.hmac', account 'metadata'), not an app value"
            )
            item.notes = notes
            return item
        }
        switch family {
        case .classic:
            if service == ReactNativeSensitiveInfoImporter.classicService {
                notes.append(
                    "service 'app' without a generic attribute: react-native-sensitive-info's classic default; expo-secure-store, whose default is also 'app', always writes the key into the generic attribute"
                )
            } else {
                notes.append(RNSINaming.claimedByChoice)
            }
            // An access control without a flag (objection prints `None`) constrains nothing: not touchID's.
            if let control = record.accessControl, !control.flags.isEmpty {
                notes.append(
                    control.flags == .userPresence
                        ? "written with touchID: true and userPresence (the default flag, and what 5.4.1–5.5.3 wrote for the biometry names): biometry or the passcode"
                        : "written with touchID: true (an access control with the chosen flag, over protection class \(record.protection ?? "not recorded"))"
                )
            }
        case .v5_6(let metadata), .v6(let metadata):
            notes.append(
                "metadata: accessControl '\(metadata.accessControl)', securityLevel '\(metadata.securityLevel)'; the protection is taken from the item as found"
            )
            if metadata.accessControl != "none", record.accessControl == nil {
                notes.append(
                    "the metadata names an access control but the item has none (the library's errSecParam fallback writes afterFirstUnlock without one): kept as found"
                )
            }
        case .hmacKey: break
        }

        // The value: the UTF-8 of a JavaScript string.
        var kind = TargetKind.string
        var verdict = SourceVerdict.migrate
        switch record.value {
        case .data(let data):
            item.value = .value(data)
            if String(validUTF8: data) == nil {
                verdict = .skipped(
                    "the value is not valid UTF-8: react-native-sensitive-info stores UTF-8 strings only and could not have written it"
                )
            } else if data.contains(0) {
                kind = .bytes
                notes.append("the value holds U+0000, which the package's strings refuse: stored as bytes")
            }
        case .absent:
            item.value = .sealed("the dump holds no value for this item")
        case .damaged(let why):
            item.value = .sealed("the dump's value is damaged: \(why)")
            verdict = .blocked("damaged value: \(why)")
        }

        // Protection, from the item as found.
        var mapped: (Accessible, AccessControl)?
        switch Self.protection(record) {
        case .success(let result):
            notes += result.notes
            mapped = (result.accessible, result.accessControl)
        case .failure(let blocked):
            if verdict == .migrate { verdict = .blocked(blocked.reason) }
        }
        var synchronizable = false
        if mapped != nil, let note = RecordClaims.unknownSyncNote(record) { notes.append(note) }
        if record.synchronizable, let (accessible, control) = mapped {
            if let reason = ExpoProtectionMapping.synchronizationBlocked(accessible, control) {
                if verdict == .migrate { verdict = .blocked(reason) }
                mapped = nil
            } else {
                synchronizable = true
                notes.append("synchronizable (the kSecAttrSynchronizable option of 5.5.1+ or iosSynchronizable of 6.x)")
            }
        }

        // The access group: kept unless it is the app's default.
        var targetGroup: String?
        if let group = record.accessGroup {
            let isDefault =
                options.bundleID.map { ExpoIOSImport.isDefault(group, bundleID: $0) } ?? (group == defaultGroup)
            if !isDefault {
                targetGroup = group
                notes.append("access group '\(group)' is not the app's default: kept")
            }
        }

        let (targetService, mapNote) = ExpoNaming.targetService([service], base: service, options)
        if let mapNote { notes.append(mapNote) }
        let nameProblem = ExpoNaming.nameProblem(key, "key") ?? ExpoNaming.nameProblem(targetService, "target service")
        if verdict == .migrate, let nameProblem { verdict = .blocked(nameProblem) }
        if let filtered = ExpoNaming.filterVerdict([service], options) { verdict = filtered }
        if nameProblem == nil {
            if let (accessible, control) = mapped {
                item.target = TargetItem(
                    service: targetService, key: key, kind: kind,
                    options: SetOptions(
                        accessible: accessible, accessControl: control, authValidity: control == .none ? nil : 0,
                        synchronizable: synchronizable),
                    accessGroup: targetGroup)
            } else {
                item.target = .unknownProtection(service: targetService, key: key, kind: kind, accessGroup: targetGroup)
            }
        }
        item.verdict = verdict
        item.notes = notes
        return item
    }

    /// The class and access control of the item as found; an item without `pdmn` is blocked (Apple's default is
    /// never assumed).
    static func protection(_ record: KeychainRecord) -> Result<ExpoProtection, Blocked> {
        ExpoProtectionMapping.iosProtection(
            record,
            missing:
                "the dump records no protection class (pdmn) for the item: Apple's default whenUnlocked is not assumed"
        ).map { protection in
            var protection = protection
            protection.notes.removeAll { $0 == ExpoProtectionMapping.akpuNote }
            return protection
        }
    }
}

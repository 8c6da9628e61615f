import ApexDumpModel
import ApexKeychain
import ApexMigration
import Foundation

/// react-native-keychain's iOS items: generic passwords (one per service) and internet passwords (one per
/// server), each holding a username (account) and a UTF-8 password (data).
struct IOSImport {
    private let options: ImportOptions
    private let rules: ServiceRules
    private let candidates: [(dump: Dump, record: KeychainRecord)]
    private let app: AppIdentity

    init(dumps: [Dump], options: ImportOptions) {
        var candidates: [(dump: Dump, record: KeychainRecord)] = []
        for dump in dumps {
            guard case .keychain(let records) = dump.content else { continue }
            for record in records where [.genericPassword, .internetPassword].contains(record.knownClass) {
                // expo-secure-store's, react-native-sensitive-info's and react-native-encrypted-storage's items are
                // theirs alone.
                if !KnownForeignItems.isExpoSecureStore(record), !KnownForeignItems.isEncryptedStorageShape(record),
                    RecordClaims.sensitiveInfoShape(record, options: options) == nil
                {
                    candidates.append((dump, record))
                }
            }
        }
        self.options = options
        self.rules = ServiceRules(options: options)
        self.candidates = candidates
        self.app = AppIdentity(records: candidates.map(\.record), bundleID: options.bundleID)
    }

    /// One item per candidate record, in dump and record order.
    func items() -> [SourceItem] {
        // Counted per dump: two exports of one keychain hold the same items, which are no duplicates.
        let scopes = candidates.concurrentMap { candidate in
            scope(candidate.record).map { candidate.dump.path + "\u{0}" + $0 }
        }
        var counts: [String: Int] = [:]
        counts.reserveCapacity(scopes.count)
        for case let scope? in scopes { counts[scope, default: 0] += 1 }
        let perScope = counts
        var items = concurrentMap(count: candidates.count) { index in
            let (dump, record) = candidates[index]
            var item = item(dump, record)
            if let scope = scopes[index], let count = perScope[scope], count > 1 {
                item.notes.append(duplicateNote(record, count: count))
            }
            return item
        }
        shadowPartialCopies(&items)
        return items
    }

    /// What every dump format records of an item, by its bytes: class, service (a generic password's),
    /// account, access group, protection class, access-control flags and value.
    private struct Recorded: Hashable {
        var itemClass: String
        var service: Data?
        var account: Data?
        var accessGroup: String?
        var protection: String?
        /// No access control and objection's `None` (no flags) alike are 0.
        var flags: UInt32
        var value: Data
    }

    private static func recorded(_ record: KeychainRecord) -> Recorded? {
        guard case .data(let value) = record.value else { return nil }
        return Recorded(
            itemClass: record.itemClass, service: record.knownClass == .internetPassword ? nil : record.service?.bytes,
            account: record.account?.bytes, accessGroup: record.accessGroup, protection: record.protection,
            flags: record.accessControl?.flags.rawValue ?? 0, value: value)
    }

    /// A record of a dump that leaves attributes unrecorded (objection's JSON: whether an item synchronizes, an
    /// internet password's server) that is, in everything it records, a record of another dump that leaves
    /// nothing out: the same keychain item, read twice. The fuller copy stands for it, and it is `shadowed`
    /// (it would otherwise conflict with that copy, or be blocked for its unknown server).
    private func shadowPartialCopies(_ items: inout [SourceItem]) {
        guard candidates.contains(where: { !$0.record.unrecorded.isEmpty }) else { return }
        var full: [Recorded: Int] = [:]
        for (index, candidate) in candidates.enumerated() where candidate.record.unrecorded.isEmpty {
            if let key = Self.recorded(candidate.record), full[key] == nil { full[key] = index }
        }
        for (index, candidate) in candidates.enumerated() where !candidate.record.unrecorded.isEmpty {
            switch items[index].verdict {
            case .migrate, .blocked: break
            case .shadowed, .skipped, .needsInput: continue
            }
            guard let key = Self.recorded(candidate.record), let other = full[key],
                !ExactText.equal(candidates[other].dump.path, candidate.dump.path)
            else { continue }
            items[index].verdict = .shadowed(
                "the same item is in \(candidates[other].dump.path) \(candidates[other].record.location), which also records "
                    + "what this dump leaves out (whether it synchronizes, an internet password's server): that copy stands for it"
            )
            items[index].copyOf = SourceOrigin(
                path: candidates[other].dump.path, format: candidates[other].dump.format,
                location: candidates[other].record.location)
        }
    }

    /// Records react-native-keychain would see as one slot (same class, service or server, group and sync
    /// scope); nil for records already known not to be its.
    private func scope(_ record: KeychainRecord) -> String? {
        guard foreignReason(record) == nil, !Self.serverUnknown(record) else { return nil }
        let name = record.knownClass == .internetPassword ? record.server ?? "" : record.service?.text ?? ""
        return [record.itemClass, name, record.accessGroup ?? "", record.synchronizable ? "1" : "0"]
            .joined(separator: "\u{0}")
    }

    private func duplicateNote(_ record: KeychainRecord, count: Int) -> String {
        let what = record.knownClass == .internetPassword ? "server" : "service"
        return
            "\(count) items share this \(what) in the dump; react-native-keychain keeps one per \(what) (each save deletes the others), so the others may be another SDK's: check which one the app wrote"
    }

    private func foreignReason(_ record: KeychainRecord) -> String? {
        if let group = record.accessGroup, let reason = app.foreignGroupReason(group) { return reason }
        return KnownForeignItems.reason(record)
    }

    // MARK: - One item

    private func item(_ dump: Dump, _ record: KeychainRecord) -> SourceItem {
        let isInternet = record.knownClass == .internetPassword
        let source = SourceDescription(
            itemClass: record.itemClass, service: record.service?.text, account: record.account?.text,
            server: record.server, accessGroup: record.accessGroup, protection: protectionAsFound(record))
        var item = SourceItem(
            library: .reactNativeKeychain, platform: .ios,
            origin: SourceOrigin(path: dump.path, format: dump.format, location: record.location),
            source: source, value: .sealed("not read"), target: nil)
        let (value, valueProblem) = self.value(record)
        item.value = value
        if let reason = foreignReason(record) {
            item.verdict = .skipped(reason)
            return item
        }
        var notes: [String] = []
        var filter: String?
        var mapped: Mapped?
        var blocked: String?
        var missing: String?
        do throws(Blocked) {
            if isInternet {
                if Self.serverUnknown(record) { throw Self.unknownServer(dump) }
                let server = record.server ?? ""
                filter = rules.filterReason(server, what: "server")
                mapped = try internetTarget(server: server, record, notes: &notes)
            } else {
                let service: String
                switch record.service {
                case nil: service = ""
                case let found?:
                    guard let text = found.text else {
                        throw Blocked("the service (svce) is not valid UTF-8, so it can't name a target service")
                    }
                    service = text
                }
                filter = rules.filterReason(service)
                mapped = try genericTarget(service: service, record, notes: &notes)
            }
        } catch {
            if error.needsInput { missing = error.reason } else { blocked = error.reason }
        }
        item.notes = notes
        let target = mapped?.target
        if let filter {
            item.verdict = .skipped(filter)
            item.target = valueProblem == nil ? target : nil
        } else if let reason = blocked ?? mapped?.blocked ?? valueProblem {
            // Blocked, with the target it was meant for when its names are known (see `Mapped`).
            item.verdict = .blocked(reason)
            item.target = target
        } else if let missing {
            item.verdict = .needsInput(missing)
        } else {
            item.target = target
        }
        return item
    }

    /// A target, and why the item is blocked when its protection has no equivalent (the target then has no
    /// protection). A name that can't be mapped throws instead: there is no target.
    private struct Mapped {
        var target: TargetItem
        var blocked: String?
    }

    private func genericTarget(
        service: String, _ record: KeychainRecord, notes: inout [String]
    ) throws(Blocked) -> Mapped {
        let targetService = rules.mapped(service)
        try ServiceRules.checkName(targetService, "service")
        if service == app.defaultService { notes.append(app.note) }
        if let note = rules.mapNote(service) { notes.append(note) }
        return target(service: targetService, key: "credentials", record, notes: &notes)
    }

    /// Whether the dump does not record the internet password's server at all (objection's JSON): its target key,
    /// `credentials:<server>`, is then unknown.
    private static func serverUnknown(_ record: KeychainRecord) -> Bool {
        record.knownClass == .internetPassword && record.server == nil && record.unrecorded.contains("srvr")
    }

    private static func unknownServer(_ dump: Dump) -> Blocked {
        let how =
            dump.format == .objectionJSON
            ? "objection's JSON has no server field; read a plist or SQLite export of the same keychain, or add \"server\" to this item"
            : "the dump does not record it"
        return Blocked("the server, which names the target key (credentials:<server>), is unknown: \(how)")
    }

    private func internetTarget(
        server: String, _ record: KeychainRecord, notes: inout [String]
    ) throws(Blocked) -> Mapped {
        guard let defaultService = app.defaultService else {
            throw .needsInput(
                "internet credentials go to the app's default service, and its name (the bundle id) is unknown: pass --bundle-id"
            )
        }
        let targetService = rules.mapped(defaultService)
        try ServiceRules.checkName(targetService, "service")
        let key = "credentials:" + server
        try ServiceRules.checkName(key, "key")
        notes.append(app.note)
        if let note = rules.mapNote(defaultService) { notes.append(note) }
        return target(service: targetService, key: key, record, notes: &notes)
    }

    private func target(service: String, key: String, _ record: KeychainRecord, notes: inout [String]) -> Mapped {
        let undecoded = record.extra["accc"].map { !$0.isEmpty } ?? false
        let mapped: MappedProtection
        do throws(Blocked) {
            mapped = try IOSProtectionMapping.map(
                unreadable: record.unreadableProtection, pdmn: record.protection, accessControl: record.accessControl,
                undecodedAccessControl: undecoded,
                synchronizable: record.synchronizable)
        } catch {
            let target = TargetItem.unknownProtection(
                service: service, key: key, kind: .credentials, accessGroup: accessGroup(record, notes: &notes))
            return Mapped(target: target, blocked: error.reason)
        }
        notes += mapped.notes
        if let note = RecordClaims.unknownSyncNote(record) { notes.append(note) }
        let target = TargetItem(
            service: service, key: key, kind: .credentials, options: mapped.options,
            accessGroup: accessGroup(record, notes: &notes))
        return Mapped(target: target)
    }

    /// The target's access group: the item's, when it is not the app's default group (with a note).
    private func accessGroup(_ record: KeychainRecord, notes: inout [String]) -> String? {
        var accessGroup: String?
        if let group = record.accessGroup, !app.isDefaultGroup(group) {
            accessGroup = group
            notes.append(
                app.defaultService == nil
                    ? "kept in access group \(quoted(group)): without the bundle id it can't be told from the app's default group"
                    : "kept in access group \(quoted(group)), which is not the app's default group")
        }
        return accessGroup
    }

    // MARK: - Value and attributes

    /// The credentials, or the value as found and why it can't be credentials.
    private func value(_ record: KeychainRecord) -> (SourceValue, String?) {
        let data: Data
        switch record.value {
        case .data(let found): data = found
        case .absent: return (.sealed("the dump holds no value for this item"), nil)
        case .damaged(let why):
            // Never written: the item is blocked, with the damage named (never the bytes).
            return (.sealed("the dump's value can't be used: \(why)"), "damaged value: \(why)")
        }
        guard let password = String(validUTF8: data) else {
            return (.value(data), "the password (data) is not valid UTF-8, so it can't be a credentials password")
        }
        if password.utf8.contains(0) {
            return (.value(data), "the password (data) contains U+0000, which a credentials password can't hold")
        }
        guard let account = record.account else {
            return (.value(data), "the item has no account, so it holds no username")
        }
        guard let username = account.text else {
            return (.value(data), "the account (the username) is not valid UTF-8")
        }
        if username.isEmpty {
            return (.value(data), "the account (the username) is empty; the package's credentials need one")
        }
        if username.utf8.contains(0) {
            return (.value(data), "the account (the username) contains U+0000, which a username can't hold")
        }
        return (.credentials(username: username, password: password), nil)
    }

    /// The protection attributes as found.
    private func protectionAsFound(_ record: KeychainRecord) -> [String: String] {
        var found: [String: String] = [
            "synchronizable": record.synchronizableUnknown ? "unknown" : record.synchronizable ? "true" : "false"
        ]
        found["pdmn"] = record.protection
        if let control = record.accessControl {
            control.record(in: &found)
        } else if let raw = record.extra["accc"], !raw.isEmpty {
            found["accessControl"] = raw
        }
        return found
    }
}

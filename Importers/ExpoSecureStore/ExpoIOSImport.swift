import ApexDumpModel
import ApexKeychain
import ApexMigration
import Foundation

/// The spelling of an iOS service: since 12.8.0 `S:no-auth` / `S:auth`, before it the bare `S`. The raw value is
/// the rank in expo-secure-store's read order (`get(with:options:)`: no-auth, then auth, then bare).
enum ExpoServiceVariant: Int, Comparable {
    case noAuth = 0
    case auth = 1
    case bare = 2

    static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// The base service and the spelling of a service as found.
    static func split(_ service: String) -> (base: String, variant: ExpoServiceVariant) {
        if let base = ExpoNaming.dropping(":no-auth", from: service) { return (base, .noAuth) }
        if let base = ExpoNaming.dropping(":auth", from: service) { return (base, .auth) }
        return (service, .bare)
    }
}

/// The iOS half of the importer: claims the records with expo's signature, maps them, and marks the copies
/// expo-secure-store would never read.
package struct ExpoIOSImport {
    let options: ImportOptions
    private var claimed: [Claimed] = []

    /// A record with expo's signature, and where it is.
    private struct Claimed {
        var dump: Dump
        var dumpIndex: Int
        var recordIndex: Int
        var record: KeychainRecord
        var key: String
        var service: String
    }

    /// A mapped item with what shadowing needs.
    private struct Candidate {
        var found: ExpoFound
        /// The base service, access group and key, byte for byte (as the keychain compares them): the copies of
        /// one key share it.
        var group: ExactName
        var rank: (sync: Int, variant: Int)
        var service: String
        /// Where the copy is, for the reasons: the dump and the record.
        var place: String { "\(found.item.origin.path) \(found.item.origin.location)" }
    }

    init(options: ImportOptions) { self.options = options }

    /// Takes the records with expo's signature: a generic password with a service, whose account and generic
    /// attributes hold the same non-empty bytes, valid UTF-8.
    mutating func add(_ records: [KeychainRecord], of dump: Dump, dumpIndex: Int) {
        // Room for every record at once: grown by doubling, the array would leave its smaller copies behind.
        claimed.reserveCapacity(claimed.count + records.count)
        for (index, record) in records.enumerated() {
            guard record.knownClass == .genericPassword, let service = record.service?.text,
                let account = record.account, let generic = record.generic,
                !account.bytes.isEmpty, account.bytes == generic.bytes, let key = account.text
            else { continue }
            claimed.append(
                Claimed(
                    dump: dump, dumpIndex: dumpIndex, recordIndex: index, record: record, key: key, service: service))
        }
    }

    /// The items, with shadowed copies marked.
    func finish() -> [ExpoFound] {
        let defaultGroup = resolveDefaultGroup()
        var candidates = claimed.concurrentMap { candidate(for: $0, defaultGroup: defaultGroup) }
        // Copies of one key, by the first copy's index; a key found once (the usual case) makes no array.
        var first: [ExactName: Int] = [:]
        first.reserveCapacity(candidates.count)
        var groups: [Int: [Int]] = [:]
        for (index, candidate) in candidates.enumerated() {
            if let head = first[candidate.group] {
                groups[head, default: [head]].append(index)
            } else {
                first[candidate.group] = index
            }
        }
        for members in groups.values {
            let ordered = members.sorted { a, b in
                (
                    candidates[a].rank.sync, candidates[a].rank.variant, candidates[a].found.dumpIndex,
                    candidates[a].found.recordIndex
                )
                    < (
                        candidates[b].rank.sync, candidates[b].rank.variant, candidates[b].found.dumpIndex,
                        candidates[b].found.recordIndex
                    )
            }
            let winner = candidates[ordered[0]]
            for loser in ordered.dropFirst() {
                let reason = shadowReason(candidates[loser], winner: winner)
                if case .skipped = candidates[loser].found.item.verdict {
                    candidates[loser].found.item.notes.append("also shadowed: \(reason)")
                } else {
                    candidates[loser].found.item.verdict = .shadowed(reason)
                }
            }
        }
        return candidates.map(\.found)
    }

    private func shadowReason(_ loser: Candidate, winner: Candidate) -> String {
        let there = winner.place
        if loser.rank.sync > winner.rank.sync {
            return
                "expo-secure-store's queries never match synchronizable items; it reads the copy under service '\(winner.service)' (\(there))"
        }
        if loser.rank.variant == winner.rank.variant {
            return
                "the same item is also under service '\(winner.service)' in \(there), which is taken (a duplicate from another dump)"
        }
        let base = ExpoServiceVariant.split(winner.service).base
        return
            "expo-secure-store reads '\(base):no-auth', then '\(base):auth', then '\(base)': it finds the copy under service '\(winner.service)' (\(there)) first"
    }

    // MARK: Access groups

    /// The app's default access group, with the note that says how it was found, or nil when unknown.
    private func resolveDefaultGroup() -> (group: String?, note: String?) {
        if options.bundleID != nil { return (nil, nil) }
        var counts: [String: Int] = [:]
        for item in claimed { if let group = item.record.accessGroup { counts[group, default: 0] += 1 } }
        guard let best = counts.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }) else { return (nil, nil) }
        let how =
            counts.count == 1
            ? "the only access group among expo-secure-store's items"
            : "the access group of most of expo-secure-store's items"
        return (best.key, "access group taken as the app's default: \(how) (no bundle id given)")
    }

    /// Whether `group` is the app's default, `<team>.<bundle id>` (a team or app-ID prefix is ten characters
    /// of A–Z and 0–9, so an app group `group.<bundle id>` is not taken for it).
    package static func isDefault(_ group: String, bundleID: String) -> Bool {
        if group == bundleID { return true }
        guard let team = ExpoNaming.dropping("." + bundleID, from: group) else { return false }
        return team.utf8.count == 10
            && team.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }
    }

    // MARK: One item

    private func candidate(for claim: Claimed, defaultGroup: (group: String?, note: String?)) -> Candidate {
        let record = claim.record
        let (base, variant) = ExpoServiceVariant.split(claim.service)
        let names = variant == .bare ? [claim.service] : [claim.service, base]
        var notes: [String] = []
        var protection = [String: String](minimumCapacity: 5)
        protection["sync"] = RecordClaims.syncAsFound(record)
        if let pdmn = record.protection { protection["pdmn"] = pdmn }
        record.accessControl?.record(in: &protection)

        // The target's access group.
        var targetGroup: String?
        if let group = record.accessGroup {
            if let bundle = options.bundleID {
                if !Self.isDefault(group, bundleID: bundle) {
                    targetGroup = group
                    notes.append("access group '\(group)' is not the app's default ('<team>.\(bundle)'): kept")
                }
            } else if group == defaultGroup.group {
                if let note = defaultGroup.note { notes.append(note) }
            } else {
                targetGroup = group
                notes.append(
                    "access group '\(group)' is not the one taken as the app's default: kept (give the bundle id to decide)"
                )
            }
        }

        // The value: expo stores the UTF-8 of a JavaScript string.
        var kind = TargetKind.string
        var verdict = SourceVerdict.migrate
        let value: SourceValue
        switch record.value {
        case .data(let data):
            value = .value(data)
            if String(validUTF8: data) == nil {
                verdict = .skipped(
                    "the value is not valid UTF-8: expo-secure-store stores UTF-8 strings only and could not have written or read it back"
                )
            } else if data.withUnsafeBytes({ $0.firstIndex(of: 0) != nil }) {
                kind = .bytes
                notes.append(
                    "the value holds U+0000, which the package's strings refuse: stored as bytes (read it with getBytes)"
                )
            }
        case .absent:
            value = .sealed("the dump holds no value for this item")
        case .damaged(let why):
            // Never written: the item is blocked, with the damage named (never the bytes).
            value = .sealed("the dump's value is damaged: \(why)")
            verdict = .blocked("damaged value: \(why)")
        }

        if !ExpoNaming.isJavaScriptKey(claim.key) { notes.append(ExpoNaming.unusualKeyNote) }

        // Protection; nil when it has no equivalent (the item is blocked, its target without protection).
        var mapped: (Accessible, AccessControl)?
        switch mapProtection(record, variant: variant, service: claim.service) {
        case .success(let result):
            notes += result.notes
            mapped = (result.accessible, result.accessControl)
        case .failure(let blocked):
            if verdict == .migrate { verdict = .blocked(blocked.reason) }
        }
        var synchronizable = false
        if record.synchronizable {
            notes.append(
                "the item is synchronizable, which expo-secure-store never writes and its queries never match: not written by it as released"
            )
            if let (accessible, control) = mapped {
                if let reason = ExpoProtectionMapping.synchronizationBlocked(accessible, control) {
                    if verdict == .migrate { verdict = .blocked(reason) }
                    mapped = nil
                } else {
                    synchronizable = true
                }
            }
        }

        // Target names.
        let (service, mapNote) = ExpoNaming.targetService(names, base: base, options)
        if let mapNote { notes.append(mapNote) }
        // A name the package can't hold leaves no target.
        let nameProblem = ExpoNaming.nameProblem(claim.key, "key") ?? ExpoNaming.nameProblem(service, "target service")
        if verdict == .migrate, let nameProblem { verdict = .blocked(nameProblem) }
        if let filtered = ExpoNaming.filterVerdict(names, options) { verdict = filtered }

        var target: TargetItem?
        if nameProblem == nil {
            if let (accessible, control) = mapped {
                target = TargetItem(
                    service: service, key: claim.key, kind: kind,
                    options: SetOptions(
                        accessible: accessible, accessControl: control, authValidity: control == .none ? nil : 0,
                        synchronizable: synchronizable),
                    accessGroup: targetGroup)
            } else {
                target = .unknownProtection(service: service, key: claim.key, kind: kind, accessGroup: targetGroup)
            }
        }
        let item = SourceItem(
            library: .expoSecureStore, platform: .ios,
            origin: SourceOrigin(path: claim.dump.path, format: claim.dump.format, location: record.location),
            source: SourceDescription(
                itemClass: record.itemClass, service: claim.service, account: claim.key,
                accessGroup: record.accessGroup, protection: protection),
            value: value, target: target, verdict: verdict, notes: notes)
        let group = ExactName(base, record.accessGroup ?? "", claim.key)
        return Candidate(
            found: ExpoFound(dumpIndex: claim.dumpIndex, recordIndex: claim.recordIndex, item: item), group: group,
            rank: (record.synchronizable ? 1 : 0, variant.rawValue), service: claim.service)
    }

    /// The item's class and access control, from what the item holds.
    private func mapProtection(
        _ record: KeychainRecord, variant: ExpoServiceVariant, service: String
    )
        -> Result<ExpoProtection, Blocked>
    {
        let mapped = ExpoProtectionMapping.iosProtection(
            record, missing: "the dump records no protection class (pdmn) for the item: any class would be a guess")
        guard case .success(var protection) = mapped else { return mapped }
        let (control, flags) = (protection.accessControl, record.accessControl?.flags ?? [])
        if variant == .auth, control == .none {
            protection.notes.append(
                "under '\(service)', the spelling of requireAuthentication writes, but the item has no access control: kept as found"
            )
        } else if variant == .noAuth, control != .none {
            protection.notes.append(
                "under '\(service)', the spelling of writes without requireAuthentication, but the item has access control \(ExpoProtectionMapping.names(of: flags)): kept as found"
            )
        }
        return .success(protection)
    }
}

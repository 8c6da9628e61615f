import ApexDumpModel
import ApexKeychain
import ApexMigration
import Foundation

/// The Android half of the importer: claims the entries of expo's `SecureStore` files, maps them, and marks the
/// copies expo-secure-store would never read.
struct ExpoAndroidImport {
    let options: ImportOptions
    private var found: [Candidate] = []

    /// Which kind of file an entry is in; the raw value ranks them (the file a standalone build reads first).
    enum FileKind: Int {
        /// `SecureStore.xml`.
        case unscoped = 0
        /// A file of another name whose entries have expo's layout.
        case other = 1
        /// `<experience>-SecureStore.xml`: Expo Go's per-project file.
        case scoped = 2
    }

    /// A mapped entry with what shadowing needs.
    private struct Candidate {
        var found: ExpoFound
        var fileKind: FileKind
        var name: String
        /// Service (as found or assumed) and key; nil for an entry that isn't expo's JSON.
        var group: String?
        var key: String?
        var legacy: Bool
        var service: String
        var place: String
    }

    init(options: ImportOptions) { self.options = options }

    static func fileKind(_ fileName: String) -> (FileKind, experience: String?) {
        if fileName == "SecureStore.xml" { return (.unscoped, nil) }
        if let scope = ExpoNaming.dropping("-SecureStore.xml", from: fileName), !scope.isEmpty {
            return (.scoped, scope.removingPercentEncoding ?? scope)
        }
        return (.other, nil)
    }

    /// Takes every entry of a `SecureStore` file, and the entries of expo's layout from any other file.
    mutating func add(_ entries: [PreferenceEntry], of dump: Dump, dumpIndex: Int) {
        // react-native-encrypted-storage's file holds values the app chose, which may look like expo's JSON.
        if RecordClaims.isEncryptedStorageFile(dump) { return }
        let (kind, experience) = Self.fileKind(dump.fileName)
        for (index, entry) in entries.enumerated() {
            var fields: [String: ExpoJSONScalar]?
            var problem: String?
            if case .string(let text) = entry.value {
                fields = ExpoAndroidEntry.fields(of: text)
                if fields == nil { problem = "its value is not a JSON object" }
            } else {
                problem = "its value is not a string"
            }
            if kind == .other, let present = fields, !ExpoAndroidEntry.signature.allSatisfy({ present[$0] != nil }) {
                continue
            }
            let origin = SourceOrigin(path: dump.path, format: dump.format, location: "entry \(index + 1)")
            let place = "\(dump.path) entry \(index + 1)"
            if let problem {
                // Only a SecureStore file's every entry is expo's.
                guard kind != .other else { continue }
                let item = SourceItem(
                    library: .expoSecureStore, platform: .android, origin: origin, source: SourceDescription(),
                    value: .sealed("not an expo-secure-store entry"), target: nil,
                    verdict: .skipped("not an expo-secure-store entry: \(problem) (expo writes JSON strings only)"))
                found.append(
                    Candidate(
                        found: ExpoFound(dumpIndex: dumpIndex, recordIndex: index, item: item), fileKind: kind,
                        name: entry.name, group: nil, key: nil, legacy: false, service: "", place: place))
                continue
            }
            guard let fields else { continue }
            found.append(
                candidate(
                    entry.name, ExpoAndroidEntry(fields), origin: origin, place: place, kind: kind,
                    experience: experience,
                    fileName: dump.fileName, dumpIndex: dumpIndex, index: index))
        }
    }

    /// The items, with shadowed copies marked.
    func finish() -> [ExpoFound] {
        var candidates = found
        func shadow(_ loser: Int, _ reason: String) {
            if case .skipped = candidates[loser].found.item.verdict {
                candidates[loser].found.item.notes.append("also shadowed: \(reason)")
            } else if case .shadowed = candidates[loser].found.item.verdict {
                return
            } else {
                candidates[loser].found.item.verdict = .shadowed(reason)
            }
        }
        // 1. One file holding a name twice: Android loads the file into a map, so the last entry wins.
        // Names, keys and groups compare byte for byte, as Java's strings do.
        var lastOfName: [ExactName: Int] = [:]
        for (index, candidate) in candidates.enumerated() {
            let name = ExactName(String(candidate.found.dumpIndex), candidate.name)
            if let earlier = lastOfName[name] {
                shadow(
                    earlier,
                    "the file holds this name again in \(candidate.place), which Android keeps when it loads the file")
            }
            lastOfName[name] = index
        }
        // 2. A legacy entry whose key also has a 12.5.0+ entry in the same file: expo reads `<service>-<key>` first
        //    and removes the bare key when it writes the key again.
        var newEntries: [ExactName: Int] = [:]
        for (index, candidate) in candidates.enumerated() where !candidate.legacy {
            guard let key = candidate.key else { continue }
            let place = ExactName(String(candidate.found.dumpIndex), key)
            if newEntries[place] == nil { newEntries[place] = index }
        }
        for (index, candidate) in candidates.enumerated() where candidate.legacy {
            if let key = candidate.key, let first = newEntries[ExactName(String(candidate.found.dumpIndex), key)] {
                let winner = candidates[first]
                shadow(
                    index,
                    "expo-secure-store 12.5.0+ reads the entry of service '\(winner.service)' (\(winner.place)) before the legacy bare key"
                )
            }
        }
        // 3. The same service and key in several files: the one a standalone build reads wins, among the entries
        //    each file itself would let expo read.
        var groups: [ExactName: [Int]] = [:]
        for (index, candidate) in candidates.enumerated() {
            if case .shadowed = candidate.found.item.verdict { continue }
            if let group = candidate.group { groups[ExactName(group), default: []].append(index) }
        }
        for members in groups.values {
            let files = Set(members.map { candidates[$0].found.dumpIndex })
            guard files.count > 1 else { continue }
            let ordered = members.sorted { a, b in
                let x = candidates[a]
                let y = candidates[b]
                return (x.fileKind.rawValue, x.legacy ? 1 : 0, x.found.dumpIndex, x.found.recordIndex)
                    < (y.fileKind.rawValue, y.legacy ? 1 : 0, y.found.dumpIndex, y.found.recordIndex)
            }
            let winner = candidates[ordered[0]]
            for loser in ordered.dropFirst() where candidates[loser].found.dumpIndex != winner.found.dumpIndex {
                let other = candidates[loser]
                if other.legacy && !winner.legacy {
                    shadow(
                        loser,
                        "expo-secure-store 12.5.0+ reads the entry of service '\(winner.service)' (\(winner.place)) before a legacy bare key"
                    )
                    continue
                }
                let why =
                    other.fileKind.rawValue > winner.fileKind.rawValue
                    ? "a standalone build reads SecureStore.xml, not a scoped or renamed file"
                    : "a duplicate from another dump"
                shadow(
                    loser,
                    "the same service '\(winner.service)' and key are in \(winner.place), which is taken (\(why))")
            }
        }
        return candidates.map(\.found)
    }

    // MARK: One entry

    private func candidate(
        _ name: String, _ entry: ExpoAndroidEntry, origin: SourceOrigin, place: String, kind: FileKind,
        experience: String?, fileName: String, dumpIndex: Int, index: Int
    ) -> Candidate {
        var notes: [String] = []
        // The key and the service: `<keystoreAlias>-<key>` since 12.5.0, the bare key before.
        let key: String
        var serviceFound: String?
        let legacy = !entry.usesKeystoreSuffix
        if legacy {
            key = name
            notes.append(
                "legacy entry (before expo-secure-store 12.5.0): named by its bare key, with no record of its service; taken as the default service '\(ExpoNaming.androidDefaultService)'"
            )
        } else if let alias = entry.keystoreAlias,
            let rest = ExpoNaming.dropping(prefix: alias + "-", from: name), !rest.isEmpty
        {
            key = rest
            serviceFound = alias
        } else {
            key = name
            serviceFound = entry.keystoreAlias
            notes.append(
                "the entry's name does not start with '<keystoreAlias>-': expo-secure-store finds it only as a bare key; taken as the key"
            )
        }
        let service = serviceFound ?? ExpoNaming.androidDefaultService
        let base = service == ExpoNaming.androidDefaultService ? ExpoNaming.iosDefaultService : service
        let names = base == service ? [service] : [service, base]
        if service == ExpoNaming.androidDefaultService {
            notes.append(
                "expo-secure-store's Android default service 'key_v1' is its iOS default 'app': both go to 'app'")
        }
        switch kind {
        case .unscoped: break
        case .scoped:
            notes.append(
                "from a scoped file (experience '\(experience ?? "")'): Expo Go's per-project store, or a pre-SDK 41 standalone app's that later versions copy into SecureStore.xml"
            )
        case .other:
            notes.append(
                "the file is named '\(fileName)', not SecureStore.xml: claimed for its entries' expo-secure-store layout"
            )
        }
        if !ExpoNaming.isJavaScriptKey(key) { notes.append(ExpoNaming.unusualKeyNote) }
        if !entry.unknownFields.isEmpty {
            notes.append("fields expo-secure-store doesn't write: \(entry.unknownFields.joined(separator: ", "))")
        }

        var verdict = SourceVerdict.migrate
        var target: TargetItem?
        if let damage = entry.damage {
            verdict = .skipped("expo-secure-store can't read the entry: \(damage)")
        } else if let unmappable = entry.unmappable, !legacy {
            verdict = .blocked(unmappable)
        }
        let (targetService, mapNote) = ExpoNaming.targetService(names, base: base, options)
        if let mapNote { notes.append(mapNote) }
        // A legacy entry's flag is not read at all: it takes the stronger reading whatever it holds.
        let authentication = legacy ? .biometry : entry.authentication
        let mapped = authentication.map {
            ExpoProtectionMapping.android($0, legacy: legacy, flagAsFound: entry.authenticationAsFound)
        }
        if let mapped { notes += mapped.notes }
        if let problem = ExpoNaming.nameProblem(key, "key") ?? ExpoNaming.nameProblem(targetService, "target service") {
            // A name the package can't hold leaves no target.
            if verdict == .migrate { verdict = .blocked(problem) }
        } else if let mapped {
            target = TargetItem(
                service: targetService, key: key, kind: .string,
                options: SetOptions(
                    accessible: mapped.accessible, accessControl: mapped.accessControl,
                    authValidity: mapped.accessControl == .none ? nil : 0, synchronizable: false))
        } else {
            // A requireAuthentication that can't be told (blocked): where the item was meant to go, no protection.
            target = .unknownProtection(service: targetService, key: key, kind: .string)
        }
        if let filtered = ExpoNaming.filterVerdict(names, options) { verdict = filtered }

        let keystoreKey = entry.keystoreKey(service: serviceFound)
        let item = SourceItem(
            library: .expoSecureStore, platform: .android, origin: origin,
            source: SourceDescription(service: serviceFound, account: key, protection: entry.protection),
            value: .sealed(
                "encrypted with the Android Keystore key '\(keystoreKey)', which never leaves the device: decrypt it on the device"
            ),
            target: target, verdict: verdict, notes: notes)
        return Candidate(
            found: ExpoFound(dumpIndex: dumpIndex, recordIndex: index, item: item), fileKind: kind, name: name,
            group: service + "\u{0}" + key, key: key, legacy: legacy, service: service, place: place)
    }
}

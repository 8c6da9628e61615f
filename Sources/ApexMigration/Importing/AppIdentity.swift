import ApexDumpModel
import Foundation

/// The app the iOS items belong to: its default service (the bundle id), how it was found, and its team.
///
/// Shared by the importers whose items go to the app's default service (react-native-keychain's default service,
/// react-native-encrypted-storage's items, which have none): the bundle id given, else the one access group of
/// the records that could be the app's.
package struct AppIdentity: Sendable {
    /// The app's bundle id: react-native-keychain's default service; nil when neither given nor inferable.
    package var defaultService: String?
    /// The team prefix of the app's default access group, when a record shows it.
    package var team: String?
    /// How the default service was found, or why it is unknown (for items in the default service).
    package var note: String

    /// The app as the user names it, or as the records' access groups show it.
    package init(records: [KeychainRecord], bundleID: String?) {
        // The distinct access groups in the order they first occur (a dump has a handful among its items).
        var seen = Set<String>()
        var distinct: [String] = []
        var last: String?
        for record in records {
            guard let group = record.accessGroup, group != last else { continue }
            last = group
            if seen.insert(group).inserted { distinct.append(group) }
        }
        let groups = distinct.compactMap(Self.split)
        if let bundleID {
            defaultService = bundleID
            team = groups.first { $0.bundle == bundleID }?.team
            note =
                "the app's default service \(NoteText.quoted(bundleID)) is the bundle id given (--bundle-id, or the store's from 'store init --bundle-id')"
            return
        }
        var candidates: [(team: String, bundle: String)] = []
        for group in groups where !candidates.contains(where: { $0.bundle == group.bundle }) {
            candidates.append(group)
        }
        // The candidates' bundle ids that are also the service of a generic password.
        let bundles = Set(candidates.map(\.bundle))
        var services = Set<String>()
        if !bundles.isEmpty {
            for record in records where record.knownClass == .genericPassword {
                if let service = record.service?.text, bundles.contains(service) { services.insert(service) }
            }
        }
        let matching = candidates.filter { services.contains($0.bundle) }
        let chosen = matching.count == 1 ? matching[0] : (candidates.count == 1 ? candidates[0] : nil)
        if let chosen {
            defaultService = chosen.bundle
            team = chosen.team
            note =
                "the app's default service \(NoteText.quoted(chosen.bundle)) is the bundle id inferred from access group \(NoteText.quoted(chosen.team + "." + chosen.bundle)); to set it yourself, pass --bundle-id to migrate"
        } else if candidates.isEmpty {
            note =
                "the app's default service (its bundle id) is unknown: no access group shows it; pass --bundle-id to migrate"
        } else {
            let listed = candidates.prefix(5).map { NoteText.quoted($0.team + "." + $0.bundle) }.joined(separator: ", ")
            note =
                "the app's default service (its bundle id) is unknown: several access groups could be the app's (\(listed)); pass --bundle-id to migrate"
        }
    }

    /// `ABCDE12345.com.example.app` → (`ABCDE12345`, `com.example.app`): a ten-character team id of capitals
    /// and digits, a dot, and the rest.
    package static func split(_ group: String) -> (team: String, bundle: String)? {
        // The team and the dot are ASCII, so the first eleven bytes are the first eleven scalars.
        let bytes = group.utf8
        guard bytes.count > 11 else { return nil }
        let team = bytes.prefix(10)
        guard team.allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }),
            bytes[bytes.index(bytes.startIndex, offsetBy: 10)] == UInt8(ascii: ".")
        else { return nil }
        return (String(decoding: team, as: UTF8.self), String(decoding: bytes.dropFirst(11), as: UTF8.self))
    }

    /// Whether `group` is the app's default access group (`<team>.<bundle id>`).
    package func isDefaultGroup(_ group: String) -> Bool {
        guard let defaultService, let parts = Self.split(group) else { return false }
        return parts.bundle == defaultService && (team == nil || parts.team == team)
    }

    /// Why an item in `group` is not this app's, or nil: Apple's own groups, and groups of another team once the
    /// app's team is known.
    package func foreignGroupReason(_ group: String) -> String? {
        if group == "apple" || group == "ichat" || group.hasPrefix("com.apple.") {
            return "not the app's item: access group \(NoteText.quoted(group)) is Apple's"
        }
        if let team, let parts = Self.split(group), parts.team != team {
            return
                "not the app's item: access group \(NoteText.quoted(group)) belongs to team \(NoteText.quoted(parts.team)), not the app's team \(NoteText.quoted(team))"
        }
        return nil
    }
}

/// Names in notes and reasons.
package enum NoteText {
    /// A name for a note: in quotes, control characters escaped, at most 120 characters.
    package static func quoted(_ name: String) -> String {
        var text = ""
        for scalar in name.unicodeScalars.prefix(120) {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                text += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        if name.unicodeScalars.count > 120 { text += "…" }
        return "'\(text)'"
    }

    /// The first attribute a library that writes only class, service, account and data (react-native-keychain,
    /// react-native-encrypted-storage) never sets, that `record` carries: another SDK's mark. Nil when none.
    package static func foreignAttribute(_ record: KeychainRecord) -> String? {
        if let generic = record.generic, !generic.bytes.isEmpty { return "a generic attribute (gena)" }
        if let label = record.label, isSet(label) { return "a label (labl)" }
        if let creator = record.creator, creator != 0 { return "a creator code (crtr)" }
        let others = [("desc", "a description (desc)"), ("icmt", "a comment (icmt)"), ("type", "a type code (type)")]
        for (key, name) in others where record.extra[key].map(isSet) == true { return name }
        return nil
    }

    /// Whether a text attribute holds something (dump tools print absent values in several ways: `None`,
    /// `(null)`, `0`, …).
    package static func isSet(_ text: String) -> Bool {
        !["", "0", "(null)", "null", "<null>", "nil", "None"].contains(text.trimmingCharacters(in: .whitespaces))
    }
}

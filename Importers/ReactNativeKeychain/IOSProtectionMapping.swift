import ApexDumpModel
import ApexKeychain

/// The package's protection for a source item, and a note on every lossy or inferred step.
struct MappedProtection: Equatable {
    var options: SetOptions
    var notes: [String]
}

/// Maps an iOS item's protection as found (`pdmn`, `accc`, `sync`) to the package's, never to anything weaker.
enum IOSProtectionMapping {
    /// The mapping of one item.
    /// - Parameters:
    ///   - unreadable: why the item's protection is unknown when the dump's `pdmn`, `accc` or `sync` for it can't
    ///     be read (``KeychainRecord/unreadableProtection``); the item is then blocked with it.
    ///   - pdmn: `pdmn` as found.
    ///   - accessControl: `accc`, decoded.
    ///   - undecodedAccessControl: whether the dump has an `accc` its reader could not decode.
    ///   - synchronizable: `sync`.
    static func map(
        unreadable: String? = nil, pdmn: String?, accessControl: AccessControlDescription?,
        undecodedAccessControl: Bool, synchronizable: Bool
    ) throws(Blocked) -> MappedProtection {
        if let unreadable { throw Blocked(unreadable) }
        if accessControl == nil, undecodedAccessControl {
            throw Blocked(
                "the item has an access control (accc) the dump reader could not decode, so its protection is unknown")
        }
        var notes: [String] = []
        let domain = try protectionDomain(pdmn: pdmn, inAccessControl: accessControl?.protection, notes: &notes)
        let accessible = self.accessible(domain, notes: &notes)
        let control = try self.accessControl(accessControl?.flags ?? [], notes: &notes)
        if synchronizable {
            if accessible.isThisDeviceOnly {
                throw Blocked(
                    "the item is synchronizable (iCloud Keychain) but its class maps to '\(accessible.rawValue)', a this-device-only class; the package allows neither combination, and dropping either would weaken it"
                )
            }
            if control != .none {
                throw Blocked(
                    "the item is synchronizable (iCloud Keychain) and has access control '\(control.rawValue)'; the package does not sync items with access control, and dropping either would weaken it"
                )
            }
            notes.append(cloudSyncNote)
        }
        let options = SetOptions(accessible: accessible, accessControl: control, synchronizable: synchronizable)
        return MappedProtection(options: options, notes: notes)
    }

    /// The note on every synchronizable item: react-native-keychain's `cloudSync` bug.
    static let cloudSyncNote =
        "kept synchronizable (iCloud Keychain), as stored; react-native-keychain 9.1.0 and later mark an item synchronizable whenever the app passes cloudSync, even cloudSync: false (issue #800), so an item the app never meant to sync may already be in iCloud Keychain"

    // MARK: - Protection class

    /// The protection domain to keep: `pdmn`, or the one inside the access control, or the stronger of the two.
    private static func protectionDomain(
        pdmn: String?, inAccessControl: String?, notes: inout [String]
    ) throws(Blocked) -> ProtectionDomain {
        let outside = try pdmn.map { (text) throws(Blocked) in try domain(text, "protection class (pdmn)") }
        let inside = try inAccessControl.map { (text) throws(Blocked) in
            try domain(text, "protection class inside the access control")
        }
        switch (outside, inside) {
        case (nil, nil):
            throw Blocked("the dump records no protection class (pdmn) for the item, so its protection is unknown")
        case (let found?, nil), (nil, let found?):
            return found
        case (let outside?, let inside?):
            guard outside != inside else { return outside }
            let kept = stronger(outside, inside)
            notes.append(
                "the access control records protection class '\(inside.rawValue)' but pdmn is '\(outside.rawValue)': the stronger reading '\(kept.rawValue)' is kept"
            )
            return kept
        }
    }

    private static func domain(_ text: String, _ what: String) throws(Blocked) -> ProtectionDomain {
        guard let domain = ProtectionDomain(rawValue: text) else {
            throw Blocked("unknown \(what) \(quoted(text)): it has no equivalent in the package")
        }
        return domain
    }

    /// How a domain ranks: when it is readable (0 always, 1 after first unlock, 2 when unlocked, 3 when unlocked
    /// with a passcode set), and whether it stays on this device.
    private static func rank(_ domain: ProtectionDomain) -> (level: Int, deviceOnly: Bool) {
        switch domain {
        case .dk: (0, false)
        case .dku: (0, true)
        case .ck: (1, false)
        case .cku: (1, true)
        case .ak: (2, false)
        case .aku: (2, true)
        case .akpu: (3, true)
        }
    }

    /// The weakest domain at least as strong as both: the later availability, and this-device-only if either is.
    static func stronger(_ a: ProtectionDomain, _ b: ProtectionDomain) -> ProtectionDomain {
        let (ra, rb) = (rank(a), rank(b))
        let deviceOnly = ra.deviceOnly || rb.deviceOnly
        switch max(ra.level, rb.level) {
        case 0: return deviceOnly ? .dku : .dk
        case 1: return deviceOnly ? .cku : .ck
        case 2: return deviceOnly ? .aku : .ak
        default: return .akpu
        }
    }

    /// The package's class; the deprecated "always" classes become the nearest stronger one, with a note.
    private static func accessible(_ domain: ProtectionDomain, notes: inout [String]) -> Accessible {
        if let accessible = domain.accessible { return accessible }
        let mapped: Accessible = domain == .dku ? .afterFirstUnlockThisDeviceOnly : .afterFirstUnlock
        notes.append(
            "protection class '\(domain.rawValue)' (always) is deprecated and not supported by the package: mapped to '\(mapped.rawValue)', the nearest stronger class, so the item is no longer readable before the first unlock after a restart"
        )
        return mapped
    }

    // MARK: - Access control

    /// The package's access control for the flags, or why there is none.
    static func accessControl(_ flags: AccessControlFlags, notes: inout [String]) throws(Blocked) -> AccessControl {
        if flags.isEmpty { return .none }
        let words = flags.words
        if flags.contains(.applicationPassword) {
            throw Blocked(
                "access control \(words) needs an application password, which has no equivalent in the package")
        }
        if flags.contains(.privateKeyUsage) {
            throw Blocked(
                "access control \(words) is a private-key usage constraint, which has no equivalent in the package")
        }
        if flags.contains(.watch) {
            throw Blocked("access control \(words) accepts a paired watch, which has no equivalent in the package")
        }
        let known: AccessControlFlags = [.userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .or, .and]
        if !flags.subtracting(known).isEmpty {
            throw Blocked("access control \(words) has flags the importer does not know, so its protection is unknown")
        }
        let constraints = flags.subtracting([.or, .and])
        if flags.contains(.and) || (constraints.rawValue.nonzeroBitCount > 1 && !flags.contains(.or)) {
            throw Blocked(
                "access control \(words) is an and-combination (every constraint at each use), which has no equivalent in the package"
            )
        }
        switch flags {
        case [.userPresence]:
            return .biometryAnyOrPasscode
        case [.biometryAny, .devicePasscode, .or]:
            notes.append(
                "access control biometryAny|devicePasscode|or is written as userPresence, Apple's constraint for any enrolled biometric or the passcode"
            )
            return .biometryAnyOrPasscode
        case [.biometryAny]:
            return .biometryAny
        case [.biometryCurrentSet]:
            notes.append(currentSetNote)
            return .biometryCurrentSet
        case [.devicePasscode]:
            return .passcode
        case [.biometryCurrentSet, .devicePasscode, .or]:
            notes.append(currentSetNote)
            return .biometryCurrentSetOrPasscode
        default:
            throw Blocked("access control \(words) has no equivalent in the package")
        }
    }

    private static let currentSetNote =
        "biometryCurrentSet: the new item is bound to the biometrics enrolled when it is written, not to the set the source item was bound to"
}

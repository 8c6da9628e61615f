import ApexDumpModel
import ApexKeychain
import Foundation

/// A mapped protection: the target's class and access control with the notes on lossy or inferred steps, or why
/// there is no equivalent. (Package access: react-native-sensitive-info's importer maps iOS items the same way.)
package struct ExpoProtection {
    package var accessible: Accessible
    package var accessControl: AccessControl
    package var notes: [String]

    package init(accessible: Accessible, accessControl: AccessControl, notes: [String]) {
        self.accessible = accessible
        self.accessControl = accessControl
        self.notes = notes
    }
}

/// The protection mapping of both platforms. Never weaker than the source: a step that changes what the item
/// allows is taken towards the stronger side and noted.
package enum ExpoProtectionMapping {
    /// Why a synchronizable item of this class and access control can't be written as one, or nil when it can:
    /// the package syncs only items without access control whose class may leave the device.
    package static func synchronizationBlocked(_ accessible: Accessible, _ control: AccessControl) -> String? {
        guard control != .none || accessible.isThisDeviceOnly else { return nil }
        return
            "synchronizable with \(accessible.rawValue) and access control \(control.rawValue): the package syncs only items without access control whose class may leave the device"
    }

    /// An iOS item's class and access control as found, mapped: the class inside the access control wins over a
    /// different `pdmn` (the keychain resets `pdmn` to it, with a note); an item with neither is blocked with
    /// `missing` as the reason, and one whose `pdmn`, `accc` or `sync` can't be read with
    /// ``KeychainRecord/unreadableProtection``.
    package static func iosProtection(
        _ record: KeychainRecord, missing: String
    ) -> Result<ExpoProtection, Blocked> {
        if let unreadable = record.unreadableProtection { return .failure(Blocked(unreadable)) }
        var notes: [String] = []
        let inner = record.accessControl?.protection
        var pdmn = record.protection
        if let outer = pdmn, let inner, inner != outer {
            notes.append(
                "pdmn '\(outer)' differs from the protection '\(inner)' inside the access control; the keychain resets pdmn to the access control's, so '\(inner)' is used"
            )
            pdmn = inner
        }
        guard let pdmn = pdmn ?? inner else { return .failure(Blocked(missing)) }
        let found: Accessible
        switch accessible(pdmn: pdmn) {
        case .success(let (mapped, classNotes)):
            found = mapped
            notes += classNotes
        case .failure(let blocked):
            return .failure(blocked)
        }
        switch accessControl(flags: record.accessControl?.flags ?? []) {
        case .success(let control):
            return .success(ExpoProtection(accessible: found, accessControl: control, notes: notes))
        case .failure(let blocked):
            return .failure(blocked)
        }
    }

    /// The note on every `akpu` item: the SDK 49 bug (expo-secure-store 12.2.x–12.5.x, fixed in 12.6.0) stored
    /// `WHEN_UNLOCKED_THIS_DEVICE_ONLY` as `akpu`.
    package static let akpuNote =
        "pdmn akpu kept as found (whenPasscodeSetThisDeviceOnly): the item disappears if the passcode is removed. expo-secure-store 12.2–12.5 (Expo SDK 49) stored WHEN_UNLOCKED_THIS_DEVICE_ONLY as akpu by mistake (fixed in 12.6.0), so the app may have asked for whenUnlockedThisDeviceOnly; change it by hand if so"

    /// The target class for a `pdmn` code, or why there is none.
    package static func accessible(pdmn: String) -> Result<(Accessible, [String]), Blocked> {
        guard let domain = ProtectionDomain(rawValue: pdmn) else {
            return .failure(Blocked("protection class (pdmn) '\(pdmn)' is not one an item can have in the package"))
        }
        switch domain {
        case .dk:
            return .success(
                (
                    .afterFirstUnlock,
                    [
                        "pdmn dk (always, deprecated) is not supported by the package: mapped to the nearest stronger afterFirstUnlock; the item is no longer readable before the first unlock after a restart"
                    ]
                ))
        case .dku:
            return .success(
                (
                    .afterFirstUnlockThisDeviceOnly,
                    [
                        "pdmn dku (always, this device only, deprecated) is not supported by the package: mapped to the nearest stronger afterFirstUnlockThisDeviceOnly; the item is no longer readable before the first unlock after a restart"
                    ]
                ))
        case .akpu:
            return .success((.whenPasscodeSetThisDeviceOnly, [akpuNote]))
        case .ak, .ck, .aku, .cku:
            // Exact: the four remaining codes are the package's own classes.
            return .success((domain.accessible ?? .whenUnlockedThisDeviceOnly, []))
        }
    }

    /// The single constraints the package's access controls are built of.
    private static let constraints: AccessControlFlags = [
        .userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .watch,
    ]

    /// The target access control for an iOS item's flags, or why there is none.
    ///
    /// userPresence (biometry or passcode, expo-secure-store ≤ 11.x) and biometryAny-or-passcode →
    /// biometryAnyOrPasscode; biometryAny → biometryAny; biometryCurrentSet (12.0.0 and later) →
    /// biometryCurrentSet; devicePasscode → passcode; biometryCurrentSet-or-passcode → biometryCurrentSetOrPasscode.
    /// And-combinations, applicationPassword, watch and privateKeyUsage have no equivalent.
    package static func accessControl(flags: AccessControlFlags) -> Result<AccessControl, Blocked> {
        let shown = names(of: flags)
        if flags.contains(.applicationPassword) {
            return .failure(
                Blocked("access control \(shown): an application password has no equivalent in the package"))
        }
        if flags.contains(.privateKeyUsage) {
            return .failure(
                Blocked(
                    "access control \(shown): private-key usage has no meaning for a password item and no equivalent in the package"
                ))
        }
        if flags.contains(.watch) {
            return .failure(
                Blocked("access control \(shown): a paired-watch constraint has no equivalent in the package"))
        }
        let used = flags.intersection(constraints)
        switch used.rawValue.nonzeroBitCount {
        case 0:
            return .success(.none)
        case 1:
            switch used {
            case .userPresence: return .success(.biometryAnyOrPasscode)
            case .biometryAny: return .success(.biometryAny)
            case .biometryCurrentSet: return .success(.biometryCurrentSet)
            default: return .success(.passcode)
            }
        default:
            guard flags.contains(.or), !flags.contains(.and) else {
                return .failure(
                    Blocked(
                        "access control \(shown): an and-combination needs every constraint at once, which the package can't express"
                    ))
            }
            switch used {
            case [.biometryAny, .devicePasscode]: return .success(.biometryAnyOrPasscode)
            case [.biometryCurrentSet, .devicePasscode]: return .success(.biometryCurrentSetOrPasscode)
            default:
                return .failure(
                    Blocked("access control \(shown): this or-combination has no equivalent in the package"))
            }
        }
    }

    /// The flags' names, `a|b|c`, or `none`.
    package static func names(of flags: AccessControlFlags) -> String { flags.words }

    // MARK: Android

    /// How an Android entry's `requireAuthentication` reads.
    enum AndroidAuthentication: Equatable {
        /// `false`, or absent in a 12.5.0+ entry (expo reads it with `optBoolean(…, false)`).
        case none
        /// `true`, or the string `biometry`: strong biometrics on every use.
        case biometry
        /// The string `deviceCredentials`: strong biometrics or the device credential.
        case deviceCredentials
    }

    /// The note on the Android class of an entry without authentication.
    static let androidUnlockNote =
        "Android: the entry lives in credential-encrypted app storage (readable once the device was unlocked after boot) and its Keystore key never leaves the device: afterFirstUnlockThisDeviceOnly"

    /// The note on the Android class of an entry whose key needs authentication.
    static let androidAuthNote =
        "Android: a Keystore key that needs user authentication exists only while a secure lock screen is set and never leaves the device: whenPasscodeSetThisDeviceOnly"

    /// The target protection of an Android entry. `legacy` entries (no `usesKeystoreSuffix`, written before
    /// 12.5.0) take the stronger reading whatever their flag says.
    static func android(_ authentication: AndroidAuthentication, legacy: Bool, flagAsFound: String?) -> ExpoProtection {
        if legacy {
            let flag = flagAsFound.map { "its requireAuthentication \($0)" } ?? "the absence of requireAuthentication"
            return ExpoProtection(
                accessible: .whenPasscodeSetThisDeviceOnly, accessControl: .biometryCurrentSet,
                notes: [
                    "legacy entry (written before expo-secure-store 12.5.0, one Keystore key per service): \(flag) proves nothing, since the key requires authentication exactly when the first write that created it did; taken as the stronger reading, biometryCurrentSet (strong biometrics on every use, invalidated by a new enrollment). On the device, the key's KeyInfo tells; lower it by hand if the key needs no authentication",
                    androidAuthNote,
                ])
        }
        switch authentication {
        case .none:
            return ExpoProtection(
                accessible: .afterFirstUnlockThisDeviceOnly, accessControl: .none, notes: [androidUnlockNote])
        case .biometry:
            return ExpoProtection(
                accessible: .whenPasscodeSetThisDeviceOnly, accessControl: .biometryCurrentSet,
                notes: [
                    "requireAuthentication: strong biometrics only, on every use, key invalidated by a new enrollment → biometryCurrentSet",
                    androidAuthNote,
                ])
        case .deviceCredentials:
            return ExpoProtection(
                accessible: .whenPasscodeSetThisDeviceOnly, accessControl: .biometryCurrentSetOrPasscode,
                notes: [
                    "requireAuthentication 'deviceCredentials' (the device-fallback option of expo PR #41409, not known to be released): strong biometrics or the device PIN, pattern or password. Whether a new enrollment invalidated the key is unconfirmed, so the stronger biometryCurrentSetOrPasscode is used; biometryAnyOrPasscode may be what the app had",
                    androidAuthNote,
                ])
        }
    }
}

/// Why an item's protection has no equivalent in the package.
package struct Blocked: Error {
    package var reason: String
    package init(_ reason: String) { self.reason = reason }
}

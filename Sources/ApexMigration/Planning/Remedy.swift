import ApexKeychain

/// What to do about an item a migration leaves behind, as the last words of its reason: the code an app writes,
/// and the command-line tool's flag or command. The tool replaces ``removeHolder`` with the exact command for the
/// store it ran against.
package enum Remedy {
    /// After a conflict with an item of the package: how to let the migration write in its place.
    package static let removeHolder =
        "; to migrate this one in its place, remove that item first (Keychain.removeItem in the app, or "
        + "apex-keychain store remove for a store), then run again"
    /// After a conflict with another library's item.
    package static let anotherLibrary =
        "; on the device, a run with MigrationPolicy.removeSource moves the item's own source aside, or map the "
        + "service to another with ImportOptions.serviceMap (--service-map)"
    /// After a conflict between source items that map to one key.
    package static let sharedKey =
        "; keep one: map the others' services elsewhere (--service-map, ImportOptions.serviceMap)"
    /// After a key that changed between the plan and the write.
    package static let changed = "; run again: the next plan sees what is there now"
    /// After a write that read back different.
    package static let readBack = "; the source is kept: run again, and report it if it stays"

    /// After a keychain refusal: what lets a later run migrate the item, or nothing when no run can (a
    /// protection the device can't give is never weakened).
    package static func keychain(_ code: KeychainErrorCode) -> String {
        switch code {
        case .PASSCODE_NOT_SET: "; a later run migrates it once the device has a passcode"
        case .BIOMETRY_NOT_ENROLLED: "; a later run migrates it once biometrics are enrolled"
        case .INTERACTION_NOT_ALLOWED: "; a later run migrates it while the device is unlocked"
        case .USER_CANCELED, .USER_FALLBACK, .AUTHENTICATION_FAILED: "; a later run asks again"
        case .BIOMETRY_LOCKOUT: "; a later run migrates it once the passcode has unlocked biometrics"
        case .MISSING_ENTITLEMENT: "; add the access group to the app's keychain-access-groups entitlement"
        case .MISSING_USAGE_DESCRIPTION: "; add NSFaceIDUsageDescription to the app's Info.plist"
        case .INVALID_ARGUMENT, .KEY_INVALIDATED, .BIOMETRY_NOT_AVAILABLE, .UNSUPPORTED, .HARDWARE_UNAVAILABLE,
            .INTERNAL:
            ""
        }
    }
}

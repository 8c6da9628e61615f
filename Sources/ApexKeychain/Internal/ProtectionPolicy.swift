/// The write-time rule "never weaker": what a device can give for a protection, decided before anything is
/// written. The first rule that fails names the error.
enum ProtectionPolicy {
    struct Outcome {
        var failure: KeychainError?
        /// Where the item's key lives (Android), when the write would succeed.
        var securityLevel: HardwareSecurityLevel?
    }

    static func check(
        accessible: Accessible, accessControl: AccessControl, authValidity: Int, keyStorage: KeyStorage?,
        state: DeviceState
    ) -> Outcome {
        if case .android(let level) = state.platform, level < 30,
            accessControl.acceptsPasscode || (authValidity > 0 && accessControl != .none)
        {
            let what = authValidity > 0 ? "authValidity > 0" : "accessControl '\(accessControl.rawValue)'"
            return Outcome(
                failure: KeychainError(
                    .UNSUPPORTED, "\(what) needs Android API 30 or later; this device has API \(level)"))
        }
        if accessControl != .none || accessible == .whenPasscodeSetThisDeviceOnly, !state.passcodeSet {
            let what =
                accessControl != .none
                ? "accessControl '\(accessControl.rawValue)'" : "accessible '\(accessible.rawValue)'"
            return Outcome(
                failure: KeychainError(.PASSCODE_NOT_SET, "\(what) needs a device passcode, and none is set"))
        }
        if accessControl.usesBiometry, !accessControl.acceptsPasscode || accessControl.isBoundToCurrentSet {
            guard state.biometry != nil else {
                return Outcome(
                    failure: KeychainError(
                        .BIOMETRY_NOT_AVAILABLE,
                        "accessControl '\(accessControl.rawValue)' needs a biometric sensor, and the device has none"))
            }
            guard state.biometryEnrolled else {
                return Outcome(
                    failure: KeychainError(
                        .BIOMETRY_NOT_ENROLLED,
                        "accessControl '\(accessControl.rawValue)' needs enrolled biometrics, and none are enrolled"))
            }
        }
        if let failure = usageDescriptionFailure(accessControl, state) { return Outcome(failure: failure) }
        guard state.platform.isAndroid else { return Outcome() }
        if keyStorage == .strongboxRequired, !state.hasStrongBox {
            return Outcome(
                failure: KeychainError(
                    .HARDWARE_UNAVAILABLE, "keyStorage 'strongboxRequired' needs StrongBox, and the device has none"))
        }
        let strongbox = state.hasStrongBox && (keyStorage == .strongbox || keyStorage == .strongboxRequired)
        return Outcome(securityLevel: strongbox ? .strongbox : .tee)
    }

    /// On a device with Face ID, a write, a read or ``canUseAccessControl(_:device:)`` with biometrics needs
    /// `NSFaceIDUsageDescription` in the app's Info.plist.
    static func usageDescriptionFailure(_ accessControl: AccessControl, _ state: DeviceState) -> KeychainError? {
        guard state.platform.isIOS, accessControl.usesBiometry, state.biometry == .faceID,
            !state.hasFaceIDUsageDescription
        else { return nil }
        return KeychainError(
            .MISSING_USAGE_DESCRIPTION, "Face ID needs NSFaceIDUsageDescription in the app's Info.plist")
    }
}

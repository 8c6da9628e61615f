/// The biometric sensors a device can offer.
public enum BiometryType: String, Sendable, Codable, CaseIterable {
    /// iOS Touch ID.
    case touchID
    /// iOS Face ID.
    case faceID
    /// visionOS Optic ID.
    case opticID
    /// Android fingerprint.
    case fingerprint
    /// Android face.
    case face
    /// Android iris.
    case iris
}

/// Where a device keeps keys.
public enum HardwareSecurityLevel: String, Sendable, Codable, CaseIterable {
    /// In software only.
    case software
    /// In a trusted execution environment (Android TEE, Apple Secure Enclave).
    case tee
    /// In a separate secure element (Android StrongBox).
    case strongbox
}

/// Whether a write with an ``AccessControl`` would succeed on a device, and if not, why.
public struct AccessControlAvailability: Sendable, Equatable {
    /// Whether a write with the access control would succeed.
    public var available: Bool
    /// Why not, when it would not.
    public var reason: Reason?

    /// Why an access control is not available.
    public enum Reason: String, Sendable {
        /// The OS version can't give it (Android before API 30 and a passcode option).
        case unsupportedOS
        /// The device has no biometric sensor.
        case noHardware
        /// The device has no passcode.
        case passcodeNotSet
        /// Nothing is enrolled on the biometric sensor.
        case notEnrolled
    }

    /// Creates an answer.
    public init(available: Bool, reason: Reason? = nil) {
        self.available = available
        self.reason = reason
    }
}

/// Answers what a write with `accessControl` would get on `device`, without prompting.
///
/// A temporary biometric lockout does not make an option unavailable: the write would succeed.
/// - Throws: `MISSING_USAGE_DESCRIPTION` for a biometric option on a device with Face ID when the app doesn't
///   declare `NSFaceIDUsageDescription`: that is an error of the app, not a reason the device gives.
public func canUseAccessControl(
    _ accessControl: AccessControl, device: any Device
) async throws(KeychainError) -> AccessControlAvailability {
    let state = device.state()
    let check = ProtectionPolicy.check(
        accessible: Keychain.defaultAccessible, accessControl: accessControl, authValidity: 0, keyStorage: nil,
        state: state)
    guard let failure = check.failure else { return AccessControlAvailability(available: true) }
    let reason: AccessControlAvailability.Reason
    switch failure.code {
    case .UNSUPPORTED: reason = .unsupportedOS
    case .BIOMETRY_NOT_AVAILABLE: reason = .noHardware
    case .PASSCODE_NOT_SET: reason = .passcodeNotSet
    case .BIOMETRY_NOT_ENROLLED: reason = .notEnrolled
    default: throw failure
    }
    return AccessControlAvailability(available: false, reason: reason)
}

/// The biometric sensors the device has, whether or not anything is enrolled.
public func getBiometryTypes(device: any Device) async -> [BiometryType] {
    device.state().biometry.map { [$0] } ?? []
}

/// Where the device keeps keys: StrongBox when an Android device has it, the TEE or Secure Enclave on phones,
/// software elsewhere.
public func getHardwareSecurityLevel(device: any Device) async -> HardwareSecurityLevel {
    let state = device.state()
    switch state.platform {
    case .android: return state.hasStrongBox ? .strongbox : .tee
    case .iOS: return .tee
    case .linux: return .software
    }
}

import ApexKeychain

/// The device a store models, recorded in the store when it is created.
///
/// `linux` is the default: a real machine with no biometric hardware, whose passcode is the store's passphrase
/// (when it has one). The others are simulated phones for tests and dry runs; their prompts succeed.
public enum DeviceProfile: String, Sendable, CaseIterable, Codable {
    /// An iPhone with Face ID enrolled and a passcode, iOS 18.
    case ios
    /// An iPhone with a passcode and no biometric sensor.
    case iosNoBiometrics = "ios-no-biometrics"
    /// An iPhone without a passcode (so no biometrics either).
    case iosNoPasscode = "ios-no-passcode"
    /// An Android 14 phone (API 34) with an enrolled fingerprint, a PIN and StrongBox.
    case android
    /// An Android 10 phone (API 29) with an enrolled fingerprint and a PIN.
    case android10 = "android-10"
    /// This machine: no biometrics; a passcode only when the store has a passphrase.
    case linux
}

extension DeviceProfile {
    /// The profile's device as a `SimulatedDevice`: what a store of a phone profile runs on, and, for `linux`,
    /// a machine without passphrase (no passcode, no biometrics), for plans made without a store. A store models
    /// a device's keychain, not one app: its iOS devices may use every access group. Its clock is the system's,
    /// so items get real dates. Its app is `com.example.app`.
    public var simulatedDevice: SimulatedDevice { simulatedDevice(bundleIdentifier: nil) }

    /// The profile's device as a `SimulatedDevice` whose app is `bundleIdentifier` (its default service; on iOS,
    /// its default access group is `ABCDE12345.<bundleIdentifier>`), or `com.example.app` when nil.
    public func simulatedDevice(bundleIdentifier: String?) -> SimulatedDevice {
        let app = bundleIdentifier ?? Self.defaultBundleIdentifier
        return switch self {
        case .ios:
            SimulatedDevice(
                platform: .iOS(major: 18), biometry: .faceID, bundleIdentifier: app, now: nil, accessGroups: .any)
        case .iosNoBiometrics:
            SimulatedDevice(
                platform: .iOS(major: 18), biometry: nil, bundleIdentifier: app, now: nil, accessGroups: .any)
        case .iosNoPasscode:
            SimulatedDevice(
                platform: .iOS(major: 18), biometry: .faceID, passcodeSet: false, bundleIdentifier: app, now: nil,
                accessGroups: .any)
        case .android:
            SimulatedDevice(
                platform: .android(apiLevel: 34), biometry: .fingerprint, hasStrongBox: true, bundleIdentifier: app,
                now: nil)
        case .android10:
            SimulatedDevice(platform: .android(apiLevel: 29), biometry: .fingerprint, bundleIdentifier: app, now: nil)
        case .linux:
            SimulatedDevice(platform: .linux, biometry: nil, passcodeSet: false, bundleIdentifier: app, now: nil)
        }
    }

    /// The app of a phone profile's store created without a bundle identifier: its default service.
    public static let defaultBundleIdentifier = "com.example.app"
}

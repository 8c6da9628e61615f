/// When an item can be read: the keychain's `kSecAttrAccessible` classes that the package supports.
///
/// The raw values are the TypeScript API's strings. The `…ThisDeviceOnly` classes never leave the device
/// (no backup restore onto another device, no iCloud Keychain).
public enum Accessible: String, Sendable, Codable, CaseIterable {
    /// Readable once the device has been unlocked after a restart, until it restarts again.
    case afterFirstUnlock
    /// As ``afterFirstUnlock``, and never restored onto another device.
    case afterFirstUnlockThisDeviceOnly
    /// Readable only while the device is unlocked.
    case whenUnlocked
    /// As ``whenUnlocked``, and never restored onto another device.
    case whenUnlockedThisDeviceOnly
    /// Readable only while unlocked, only while a passcode is set; removed when the passcode is removed.
    case whenPasscodeSetThisDeviceOnly

    /// Whether the class keeps the item on this device only.
    public var isThisDeviceOnly: Bool {
        switch self {
        case .afterFirstUnlockThisDeviceOnly, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly: true
        case .afterFirstUnlock, .whenUnlocked: false
        }
    }

    /// Whether the item can be used only while the device is unlocked.
    public var requiresUnlockedDevice: Bool {
        switch self {
        case .whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly: true
        case .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly: false
        }
    }

    /// The keychain's protection-domain code (`pdmn`) for this class.
    public var protectionDomain: ProtectionDomain {
        switch self {
        case .whenUnlocked: .ak
        case .afterFirstUnlock: .ck
        case .whenUnlockedThisDeviceOnly: .aku
        case .afterFirstUnlockThisDeviceOnly: .cku
        case .whenPasscodeSetThisDeviceOnly: .akpu
        }
    }
}

/// Who must be present to read an item. Raw values are the TypeScript API's strings.
public enum AccessControl: String, Sendable, Codable, CaseIterable {
    /// No one: the item is protected by ``Accessible`` alone.
    case none
    /// Any enrolled biometric; survives enrolment changes.
    case biometryAny
    /// The biometrics enrolled when the item was written; a change of enrolment invalidates the item.
    case biometryCurrentSet
    /// Any enrolled biometric, or the device passcode.
    case biometryAnyOrPasscode
    /// The biometrics enrolled at write time, or the device passcode; a change of enrolment invalidates the item.
    case biometryCurrentSetOrPasscode
    /// The device passcode only.
    case passcode

    /// Whether a biometric sensor takes part in the check.
    public var usesBiometry: Bool { self != .none && self != .passcode }

    /// Whether the item is bound to the enrolled set of biometrics at write time.
    public var isBoundToCurrentSet: Bool { self == .biometryCurrentSet || self == .biometryCurrentSetOrPasscode }

    /// Whether the passcode alone can satisfy the check.
    public var acceptsPasscode: Bool {
        self == .biometryAnyOrPasscode || self == .biometryCurrentSetOrPasscode || self == .passcode
    }

    /// The keychain access-control flags (`SecAccessControlCreateFlags`) this value is written with.
    public var flags: AccessControlFlags {
        switch self {
        case .none: []
        case .biometryAny: [.biometryAny]
        case .biometryCurrentSet: [.biometryCurrentSet]
        case .biometryAnyOrPasscode: [.userPresence]
        case .biometryCurrentSetOrPasscode: [.biometryCurrentSet, .devicePasscode, .or]
        case .passcode: [.devicePasscode]
        }
    }
}

/// Where an Android key lives. Ignored on other platforms.
public enum KeyStorage: String, Sendable, Codable, CaseIterable {
    /// The trusted execution environment.
    case tee
    /// StrongBox when the device has it, else the TEE.
    case strongbox
    /// StrongBox only: a device without it refuses the write with `HARDWARE_UNAVAILABLE`.
    case strongboxRequired
}

/// The keychain's protection-domain codes (`pdmn`), including the deprecated "always" classes that other
/// libraries' items may carry. The package itself never writes `dk` or `dku`.
public enum ProtectionDomain: String, Sendable, Codable, CaseIterable {
    /// When unlocked.
    case ak
    /// After first unlock.
    case ck
    /// Always (deprecated by the platform).
    case dk
    /// When unlocked, this device only.
    case aku
    /// After first unlock, this device only.
    case cku
    /// Always, this device only (deprecated by the platform).
    case dku
    /// When a passcode is set, this device only.
    case akpu

    /// The package's class for this code, or nil for the deprecated `dk` / `dku`.
    public var accessible: Accessible? {
        switch self {
        case .ak: .whenUnlocked
        case .ck: .afterFirstUnlock
        case .aku: .whenUnlockedThisDeviceOnly
        case .cku: .afterFirstUnlockThisDeviceOnly
        case .akpu: .whenPasscodeSetThisDeviceOnly
        case .dk, .dku: nil
        }
    }
}

/// The keychain's access-control flags (`SecAccessControlCreateFlags`), with the platform's bit values.
public struct AccessControlFlags: OptionSet, Sendable, Hashable, Codable {
    /// The platform's bit values.
    public let rawValue: UInt32
    /// Creates flags from the platform's bit values.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Biometry or passcode (`kSecAccessControlUserPresence`).
    public static let userPresence = AccessControlFlags(rawValue: 1 << 0)
    /// Any enrolled biometric.
    public static let biometryAny = AccessControlFlags(rawValue: 1 << 1)
    /// The biometrics enrolled at write time.
    public static let biometryCurrentSet = AccessControlFlags(rawValue: 1 << 3)
    /// The device passcode.
    public static let devicePasscode = AccessControlFlags(rawValue: 1 << 4)
    /// A paired watch.
    public static let watch = AccessControlFlags(rawValue: 1 << 5)
    /// Any one of the constraints suffices.
    public static let or = AccessControlFlags(rawValue: 1 << 14)
    /// All of the constraints are needed.
    public static let and = AccessControlFlags(rawValue: 1 << 15)
    /// The key may only be used for private-key operations.
    public static let privateKeyUsage = AccessControlFlags(rawValue: 1 << 30)
    /// An application-supplied password.
    public static let applicationPassword = AccessControlFlags(rawValue: 1 << 31)

    /// The package's ``AccessControl`` with exactly these flags, or nil when there is none.
    public var accessControl: AccessControl? {
        AccessControl.allCases.first { $0.flags == self }
    }
}

extension AccessControlFlags {
    /// The flags' names joined with `|` (`biometryAny|devicePasscode|or`), bits no name covers in hex, `none`
    /// for no flag: how reports and reasons name an access control as found.
    package var words: String {
        let names: [(AccessControlFlags, String)] = [
            (.userPresence, "userPresence"), (.biometryAny, "biometryAny"), (.biometryCurrentSet, "biometryCurrentSet"),
            (.devicePasscode, "devicePasscode"), (.watch, "watch"), (.or, "or"), (.and, "and"),
            (.privateKeyUsage, "privateKeyUsage"), (.applicationPassword, "applicationPassword"),
        ]
        var words = names.filter { contains($0.0) }.map(\.1)
        let rest = names.reduce(self) { $0.subtracting($1.0) }
        if !rest.isEmpty { words.append("0x" + String(rest.rawValue, radix: 16)) }
        return words.isEmpty ? "none" : words.joined(separator: "|")
    }
}

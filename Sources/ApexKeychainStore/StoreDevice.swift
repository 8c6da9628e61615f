import ApexKeychain
import ApexSodium
import Foundation
import Synchronization

extension SQLiteKeychainDatabase {
    /// The device this store models: a `SimulatedDevice` for the phone profiles (whose prompts succeed), or a
    /// ``TerminalDevice`` for `linux`.
    /// - Parameter passcode: how the `linux` device asks for the passcode (the store's passphrase); by default it
    ///   asks on the terminal.
    public func makeDevice(passcode: PasscodeSource = .terminal) -> any Device {
        switch deviceProfile {
        case .ios, .iosNoBiometrics, .iosNoPasscode, .android, .android10:
            deviceProfile.simulatedDevice(bundleIdentifier: bundleIdentifier)
        case .linux: TerminalDevice(store: self, passcode: passcode)
        }
    }

    /// Why `device` is not this store's device, or nil when it is: a ``TerminalDevice`` of another store, or a device
    /// whose state differs from the one ``makeDevice(passcode:)`` models in what decides whether an item stays
    /// valid (the platform, the biometric sensor, the enrolled set and its state hash, the passcode). A device the
    /// store made, whose state a test has changed since (biometrics enrolled again, the passcode removed), is no
    /// longer the store's device either: the store's next device would invalidate what it writes.
    public func problem(with device: any Device) -> String? {
        if let terminal = device as? TerminalDevice {
            if terminal.store === self || terminal.store.url.standardizedFileURL == url.standardizedFileURL {
                return nil
            }
            return "the device is the store \(terminal.store.url.path)'s, not the store \(url.path)'s"
        }
        let own = makeDevice(passcode: .none).state()
        let given = device.state()
        var differences: [String] = []
        if given.platform != own.platform { differences.append("platform \(given.platform), not \(own.platform)") }
        if given.biometry != own.biometry {
            let name = { (type: BiometryType?) in type?.rawValue ?? "none" }
            differences.append("biometric sensor \(name(given.biometry)), not \(name(own.biometry))")
        }
        if given.passcodeSet != own.passcodeSet {
            differences.append(given.passcodeSet ? "a passcode, where the store's has none" : "no passcode")
        }
        if !ExactText.equal(given.enrolledSet, own.enrolledSet)
            || !ExactText.equal(given.biometryStateHash, own.biometryStateHash)
        {
            differences.append("another enrolled biometric set")
        }
        guard !differences.isEmpty else { return nil }
        return "the device is not the one the store \(url.path) models ('\(deviceProfile.rawValue)'): "
            + differences.joined(separator: ", ")
            + "; what it writes could be invalidated at the first read through the store's device (makeDevice)"
    }

    /// Whether `passphrase` opens this store (the `linux` device's passcode check).
    public func verifyPassphrase(_ passphrase: Data) -> Bool {
        guard usesPassphrase, !passphrase.isEmpty,
            let salt = try? read({ try metaValue("pwhash_salt") }),
            let ops = (try? read({ try metaValue("pwhash_ops") })).flatMap({ $0 })
                .flatMap({ String(data: $0, encoding: .utf8) }).flatMap(UInt64.init),
            let mem = (try? read({ try metaValue("pwhash_mem") })).flatMap({ $0 })
                .flatMap({ String(data: $0, encoding: .utf8) }).flatMap(Int.init),
            let wrapped = try? read({ try metaValue("wrapped_master") })
        else { return false }
        var bytes = Array(passphrase)
        defer { Sodium.wipe(&bytes) }
        guard
            let key = Sodium.keyFromPassphrase(
                bytes, salt: Array(salt), parameters: .init(opsLimit: ops, memLimit: mem)),
            var master = Sodium.open(wrapped, key: key, associatedData: Array("apxk-master-v1".utf8))
        else { return false }
        Sodium.wipe(&master)
        return true
    }
}

/// Where the `linux` device gets the passcode when an item asks for it.
public enum PasscodeSource: Sendable {
    /// Ask on the controlling terminal (`/dev/tty`), without echo. No terminal: the read fails with
    /// `INTERACTION_NOT_ALLOWED`.
    case terminal
    /// Use these bytes (read from a file the user named, or typed once to open the store); never prompts. Whether
    /// they open the store is checked once per device.
    case given(Data)
    /// Never prompt: reads that need the passcode fail with `INTERACTION_NOT_ALLOWED`.
    case none
}

/// This machine as a `Device`: no biometric hardware; a passcode exists when the store has a passphrase, and
/// a read that needs it asks for the passphrase.
public final class TerminalDevice: Device {
    let store: SQLiteKeychainDatabase
    private let passcode: PasscodeSource
    private let session = UUID().uuidString
    /// Whether the ``PasscodeSource/given(_:)`` passphrase opens the store, once checked: the check runs
    /// Argon2id, and a run may read many passcode-protected items.
    private let givenOpens = Mutex<Bool?>(nil)

    /// The default service of the `linux` device: the store's bundle identifier, else `apex-keychain`.
    public let defaultService: String
    /// The default access group of the `linux` device.
    public let defaultAccessGroup = "local"

    /// Creates the device of `store`.
    public init(store: SQLiteKeychainDatabase, passcode: PasscodeSource) {
        self.store = store
        self.passcode = passcode
        defaultService = store.bundleIdentifier ?? "apex-keychain"
    }

    /// The device as it is now.
    public func state() -> DeviceState {
        DeviceState(
            platform: .linux, biometry: nil, enrolledSet: nil, biometryLockedOut: false,
            passcodeSet: store.usesPassphrase, isLocked: false, unlockedSinceBoot: true, hasStrongBox: false,
            hasFaceIDUsageDescription: false, now: Date(), uptime: ProcessInfo.processInfo.systemUptime,
            session: session)
    }

    /// Shows a prompt and returns how it ended.
    public func authenticate(_ request: AuthenticationRequest) async -> AuthenticationResult {
        guard request.policy != .biometryOnly else { return .unavailable }
        guard store.usesPassphrase else { return .unavailable }
        switch passcode {
        case .none:
            return .notInteractive
        case .given(let data):
            let opens = givenOpens.withLock { known in
                if let known { return known }
                let opens = store.verifyPassphrase(data)
                known = opens
                return opens
            }
            return opens ? .success : .failed
        case .terminal:
            let title = request.prompt.title ?? "Passcode for '\(request.key)' in service '\(request.service)'"
            // The key, the service and an app's title are shown safely: a name must not drive the terminal.
            guard var answer = TerminalInput.readSecret(prompt: "\(DisplayText.escaped(title)): ") else {
                return .notInteractive
            }
            defer { answer.resetBytes(in: 0..<answer.count) }
            if answer.isEmpty { return .canceled }
            return store.verifyPassphrase(answer) ? .success : .failed
        }
    }

    /// Whether the app's install marker exists.
    /// - Throws: the store's error when it can't be read.
    public func hasInstallMarker() throws -> Bool { try store.hasInstallMarker() }

    /// Records the app's install marker.
    /// - Throws: the store's error when it can't be written.
    public func setInstallMarker() throws { try store.setInstallMarker() }
}

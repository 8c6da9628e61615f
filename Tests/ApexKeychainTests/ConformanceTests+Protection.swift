import ApexKeychain
import ApexTestSupport
import Foundation
import Testing

/// The rules of page 003 Protection that no feature's tests proved (see ``ConformanceTests``).
extension ConformanceTests {
    // MARK: 003 Protection

    /// 003: "The same pattern holds for what the package returns: BiometryType (getBiometryTypes),
    /// HardwareSecurityLevel (getHardwareSecurityLevel) and the codes of KeychainErrorCode." The strings are the
    /// TypeScript API's; 003 gives canUseAccessControl's reasons too.
    @Test(
        "003 what the package returns is the TypeScript strings: BiometryType, HardwareSecurityLevel, KeychainErrorCode"
    )
    func returnedValuesAreTheTypeScriptStrings() throws {
        #expect(
            BiometryType.allCases.map(\.rawValue) == ["touchID", "faceID", "opticID", "fingerprint", "face", "iris"])
        #expect(HardwareSecurityLevel.allCases.map(\.rawValue) == ["software", "tee", "strongbox"])
        #expect(
            KeychainErrorCode.allCases.map(\.rawValue) == [
                "INVALID_ARGUMENT", "USER_CANCELED", "USER_FALLBACK", "KEY_INVALIDATED", "INTERACTION_NOT_ALLOWED",
                "BIOMETRY_NOT_ENROLLED", "BIOMETRY_NOT_AVAILABLE", "BIOMETRY_LOCKOUT", "PASSCODE_NOT_SET",
                "AUTHENTICATION_FAILED", "UNSUPPORTED", "MISSING_USAGE_DESCRIPTION", "MISSING_ENTITLEMENT",
                "HARDWARE_UNAVAILABLE", "INTERNAL",
            ])
        let reasons: [AccessControlAvailability.Reason] = [.unsupportedOS, .noHardware, .passcodeNotSet, .notEnrolled]
        #expect(reasons.map(\.rawValue) == ["unsupportedOS", "noHardware", "passcodeNotSet", "notEnrolled"])
        // In JSON, where shared configuration and reports meet them, they are those strings.
        let json = try JSONEncoder().encode([BiometryType.faceID.rawValue, HardwareSecurityLevel.strongbox.rawValue])
        #expect(try JSONDecoder().decode([String].self, from: json) == ["faceID", "strongbox"])
        #expect(
            String(decoding: try JSONEncoder().encode(KeychainErrorCode.KEY_INVALIDATED), as: UTF8.self)
                == #""KEY_INVALIDATED""#)
        #expect(try JSONDecoder().decode(HardwareSecurityLevel.self, from: Data(#""tee""#.utf8)) == .tee)
        #expect(try JSONDecoder().decode(BiometryType.self, from: Data(#""fingerprint""#.utf8)) == .fingerprint)
    }

    /// 003, whenUnlocked on Android: "The package checks the lock itself, on every version; on Android 9 (API 28)
    /// and newer the key also has setUnlockedDeviceRequired(true)." The same for whenUnlockedThisDeviceOnly and,
    /// "The lock as with whenUnlocked", for whenPasscodeSetThisDeviceOnly.
    @Test(
        "003 Android: the package checks the lock for whenUnlocked classes on every API level",
        arguments: DatabaseKind.allCases, [24, 27, 28, 34])
    func androidChecksTheLockOnEveryVersion(kind: DatabaseKind, apiLevel: Int) async throws {
        let f = try Fixture(
            kind, device: SimulatedDevice(platform: .android(apiLevel: apiLevel), biometry: .fingerprint))
        let keychain = try f.keychain()
        let classes: [Accessible] = [.whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly]
        for accessible in classes {
            try await keychain.setItem(accessible.rawValue, "v", SetOptions(accessible: accessible))
        }
        try await keychain.setItem("background", "v")
        f.device.lock()
        for accessible in classes {
            #expect(await errorCode { _ = try await keychain.getItem(accessible.rawValue) } == .INTERACTION_NOT_ALLOWED)
            let options = SetOptions(accessible: accessible)
            #expect(
                await errorCode { try await keychain.setItem(accessible.rawValue, "new", options) }
                    == .INTERACTION_NOT_ALLOWED)
        }
        #expect(try await keychain.getItem("background") == "v")
        f.device.unlock()
        for accessible in classes { #expect(try await keychain.getItem(accessible.rawValue) == "v") }
    }

    /// 003: "ThisDeviceOnly changes nothing on Android: Keystore keys never leave the device."
    @Test(
        "003 Android: a …ThisDeviceOnly item behaves as its plain class, locked, before the first unlock and after",
        arguments: DatabaseKind.allCases,
        [
            (Accessible.afterFirstUnlock, Accessible.afterFirstUnlockThisDeviceOnly),
            (.whenUnlocked, .whenUnlockedThisDeviceOnly),
        ])
    func thisDeviceOnlyChangesNothingOnAndroid(kind: DatabaseKind, pair: (Accessible, Accessible)) async throws {
        let device = SimulatedDevice(platform: .android(apiLevel: 34), biometry: .fingerprint, hasStrongBox: true)
        let f = try Fixture(kind, device: device)
        let keychain = try f.keychain()

        /// What reading, then writing, `accessible`'s item gives now: the value or the error's code.
        func outcomes(_ accessible: Accessible) async -> [String] {
            let key = accessible.rawValue
            var seen: [String] = []
            do { seen.append(try await keychain.getItem(key) ?? "nil") } catch { seen.append("\(error.code)") }
            do {
                try await keychain.setItem(key, "v", SetOptions(accessible: accessible, label: "l"))
                seen.append("written")
            } catch { seen.append("\(error.code)") }
            return seen
        }

        for accessible in [pair.0, pair.1] {
            try await keychain.setItem(accessible.rawValue, "v", SetOptions(accessible: accessible, label: "l"))
        }
        var plain: [String] = []
        var thisDeviceOnly: [String] = []
        let changes: [() -> Void] = [{}, device.lock, device.reboot, device.unlock]
        for change in changes {
            change()
            plain += await outcomes(pair.0)
            thisDeviceOnly += await outcomes(pair.1)
        }
        #expect(plain == thisDeviceOnly)
        // Each pair meets the lock, before the first unlock at least.
        #expect(plain.contains("INTERACTION_NOT_ALLOWED"))

        let a = try #require(try await keychain.getItemInfo(pair.0.rawValue))
        let b = try #require(try await keychain.getItemInfo(pair.1.rawValue))
        #expect(a.label == b.label && a.accessControl == b.accessControl && a.synchronizable == b.synchronizable)
        #expect(a.android == b.android)
        #expect(b.accessible == pair.1)
    }

    /// 003: "It starts with a prompt of this app. The first read after the app starts always shows the prompt;
    /// unlocking the screen opens nothing." 004: "On Android the Keystore's own window is only an outer limit:
    /// unlocking the screen opens it, but not the package's."
    @Test(
        "003/004 unlocking the device opens no authValidity window, nor reopens a closed one",
        arguments: DatabaseKind.allCases,
        [
            (Platform.iOS(major: 18), BiometryType.faceID),
            (.android(apiLevel: 34), .fingerprint),
        ])
    func unlockingOpensNoWindow(kind: DatabaseKind, profile: (Platform, BiometryType)) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(platform: profile.0, biometry: profile.1))
        let keychain = try f.keychain(KeychainOptions(accessControl: .biometryAnyOrPasscode, authValidity: 30))
        try await keychain.setItem("a", "1")
        try await keychain.setItem("b", "2")
        f.device.lock()
        f.device.unlock()
        #expect(try await keychain.getItem("a") == "1")
        #expect(f.device.promptCount == 1)
        #expect(try await keychain.getItem("b") == "2")
        #expect(f.device.promptCount == 1)

        f.device.advanceClock(by: 31)
        f.device.lock()
        f.device.unlock()
        #expect(try await keychain.getItem("b") == "2")
        #expect(f.device.promptCount == 2)
    }

    /// 003 prompt, fallback: "localizedFallbackTitle, shown after a failed scan; '' hides the button".
    @Test(
        "003 a fallback of '' reaches the device as '', over the storage's own too; nil reaches it as nil",
        arguments: DatabaseKind.allCases)
    func emptyFallbackReachesTheDevice(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let plain = try f.keychain(KeychainOptions(service: "svc.plain", accessControl: .biometryAny))
        let titled = try f.keychain(
            KeychainOptions(
                service: "svc.titled", accessControl: .biometryAny, prompt: Prompt(fallback: "Use password")))
        let hidden = try f.keychain(
            KeychainOptions(service: "svc.hidden", accessControl: .biometryAny, prompt: Prompt(fallback: "")))
        for keychain in [plain, titled, hidden] { try await keychain.setItem("k", "v") }
        let empty = GetOptions(prompt: Prompt(fallback: ""))

        _ = try await plain.getItem("k")
        _ = try await plain.getItem("k", empty)
        _ = try await titled.getItem("k")
        _ = try await titled.getItem("k", empty)
        _ = try await hidden.getItem("k")
        _ = try await hidden.getItem("k", GetOptions(prompt: Prompt(fallback: "Enter PIN")))
        #expect(f.device.prompts.map(\.prompt.fallback) == [nil, "", "Use password", "", "", "Enter PIN"])
        #expect(try JSONDecoder().decode(Prompt.self, from: Data(#"{"fallback":""}"#.utf8)).fallback == "")
    }

    /// 003 Hardware on Android: "'tee' (default) The Trusted Execution Environment"; 004 android: "Default
    /// { keyStorage: 'tee' }".
    @Test(
        "003/004 Android: a write that names no keyStorage keeps its key in the TEE, on a device with StrongBox too",
        arguments: DatabaseKind.allCases)
    func keyStorageDefaultsToTheTEE(kind: DatabaseKind) async throws {
        let device = SimulatedDevice(platform: .android(apiLevel: 34), biometry: .fingerprint, hasStrongBox: true)
        let f = try Fixture(kind, device: device)
        #expect(await getHardwareSecurityLevel(device: device) == .strongbox)
        let keychain = try f.keychain()
        try await keychain.setItem("plain", "v")
        try await keychain.setItem("guarded", "v", SetOptions(accessControl: .biometryAny))
        try await keychain.setItem("empty-android", "v", SetOptions(android: AndroidOptions()))
        try await keychain.setCredentials(Credentials(username: "u", password: "p"))
        for key in ["plain", "guarded", "empty-android", "credentials"] {
            #expect(try await keychain.getItemInfo(key)?.android?.securityLevel == .tee, "\(key)")
        }
        // The storage's own keyStorage is the default of its writes.
        let strongbox = try f.keychain(
            KeychainOptions(service: "svc.sb", android: AndroidOptions(keyStorage: .strongbox)))
        try await strongbox.setItem("k", "v")
        #expect(try await strongbox.getItemInfo("k")?.android?.securityLevel == .strongbox)
    }
}

import ApexKeychain
import ApexTestSupport
import Foundation
import Testing

/// Rules of the package's documentation (pages 000 iOS, 001 Storage model, 003 Protection, 004 Options) that the
/// core once kept differently. Each test quotes the sentence it proves and names its page; docs/CONFORMANCE.md
/// maps every rule of those pages to its test.
@Suite("Seed rules")
struct SeedRuleTests {
    // MARK: clearOnReinstall (000)

    /// 000: "The marker is set without the key too, so an update that turns the key on deletes nothing on devices
    /// that already had the app."
    @Test(
        "000 clearOnReinstall: the marker is set without the setting, so an update that turns it on deletes nothing",
        arguments: DatabaseKind.allCases)
    func markerIsSetWithoutTheSetting(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(clearOnReinstall: false))
        let keychain = try f.keychain(KeychainOptions(service: "session"))
        try await keychain.setItem("refreshToken", "v")
        #expect(f.device.installMarkerExists)

        // The app is updated; the new version declares ApexKeychainClearOnReinstall = YES.
        f.device.setClearOnReinstall(true)
        f.device.relaunch()
        let updated = try f.keychain(KeychainOptions(service: "session"))
        #expect(try await updated.getItem("refreshToken") == "v")
        #expect(try f.allItems().count == 1)
    }

    /// 000: "With ApexKeychainClearOnReinstall = YES in Info.plist, the first Keychain call looks for an install
    /// marker" — a setting of the app's Info.plist, so 004's KeychainOptions have no such field.
    @Test("000/004 clearOnReinstall is a setting of the app, not a KeychainOptions field: JSON options refuse the name")
    func clearOnReinstallIsNotAKeychainOption() throws {
        let json = Data(#"{"service":"vault","clearOnReinstall":true}"#.utf8)
        do {
            _ = try JSONDecoder().decode(KeychainOptions.self, from: json)
            Issue.record("clearOnReinstall was accepted as an option")
        } catch let error as KeychainError {
            #expect(error.code == .INVALID_ARGUMENT)
            #expect(error.message.contains("clearOnReinstall"))
        }
        #expect(SimulatedDevice(clearOnReinstall: true).clearOnReinstall)
        #expect(!SimulatedDevice().clearOnReinstall)
    }

    /// The issue's rule, from 000's "no marker means a new install": a marker that can't be read is not "no
    /// marker". With the setting, the call fails (INTERNAL) and nothing is deleted, launch after launch.
    @Test(
        "000 clearOnReinstall: a marker that can't be read fails the call and deletes nothing",
        arguments: DatabaseKind.allCases)
    func unreadableMarkerDeletesNothing(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(clearOnReinstall: true))
        try await f.keychain().setItem("token", "v")
        f.device.failInstallMarker(.reading)
        for _ in 0..<3 {
            f.device.relaunch()
            let keychain = try f.keychain()
            #expect(await errorCode { _ = try await keychain.getItem("token") } == .INTERNAL)
            #expect(try f.allItems().count == 1)
        }
        f.device.failInstallMarker(nil)
        #expect(try await f.keychain().getItem("token") == "v")
    }

    /// As above, for a marker that can be read (there is none: a new install) but not written: the removal runs
    /// (the items are the previous install's), but the call fails, and so does every call until the marker is
    /// recorded, so none reaches an item, or writes one that the next removal would take.
    @Test(
        "000 clearOnReinstall: a marker that can't be written fails every call, and no call reaches an item",
        arguments: DatabaseKind.allCases)
    func unwritableMarkerFailsEveryCall(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(clearOnReinstall: true))
        try await f.keychain().setItem("token", "v")
        f.device.reinstallApp()
        f.device.failInstallMarker(.writing)
        let keychain = try f.keychain()
        #expect(await errorCode { _ = try await keychain.getItem("token") } == .INTERNAL)
        #expect(await errorCode { try await keychain.setItem("other", "v") } == .INTERNAL)
        #expect(try f.allItems().isEmpty)
        #expect(!f.device.installMarkerExists)

        // Without the setting nothing is removed and reads go on; a write still fails while the marker can't be
        // recorded (issue 28).
        f.device.setClearOnReinstall(false)
        #expect(try await keychain.getAllKeys() == [])
        #expect(await errorCode { try await keychain.setItem("other", "v") } == .INTERNAL)
        f.device.failInstallMarker(nil)
        try await keychain.setItem("other", "v")
        #expect(f.device.installMarkerExists)
    }

    /// 000: "the package removes the items it wrote, in every service of the app's default access group, before
    /// any call reaches one of them."
    @Test(
        "000 clearOnReinstall: the check is the app's, made once before any call of any keychain reaches an item",
        arguments: DatabaseKind.allCases)
    func checkRunsBeforeAnyCallOfAnyKeychain(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(clearOnReinstall: true))
        let vault = try f.keychain(KeychainOptions(service: "vault"))
        let cache = try f.keychain(KeychainOptions(service: "cache"))
        try await vault.setItem("a", "v")
        try await cache.setItem("b", "v")
        f.device.reinstallApp()

        // The keychains of the old launch are still open; the first call of either clears both services.
        try await cache.setItem("written-after-reinstall", "v")
        #expect(try await vault.getAllKeys() == [])
        #expect(try await cache.getAllKeys() == ["written-after-reinstall"])
        #expect(f.device.installMarkerExists)
    }

    // MARK: Defaults (003, 004)

    /// 004 accessible: "Default 'afterFirstUnlock'"; 003: "The default is afterFirstUnlock because tokens are often
    /// read by background work".
    @Test(
        "003/004 accessible defaults to afterFirstUnlock: a token written without options is read while locked",
        arguments: DatabaseKind.allCases)
    func defaultAccessibleIsAfterFirstUnlock(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain()
        try await keychain.setItem("token", "v")
        try await keychain.setCredentials(Credentials(username: "u", password: "p"))
        #expect(Keychain.defaultAccessible == .afterFirstUnlock)
        #expect(try await keychain.getItemInfo("token")?.accessible == .afterFirstUnlock)
        #expect(try await keychain.getItemInfo("credentials")?.accessible == .afterFirstUnlock)
        f.device.lock()
        #expect(try await keychain.getItem("token") == "v")
        try await keychain.setItem("written-while-locked", "v")
    }

    // MARK: authValidity (004)

    /// 004 authValidity: "With accessControl: 'none' the option has nothing to open, and is ignored."
    @Test(
        "004 authValidity with accessControl none is ignored, on Android 7–10 too",
        arguments: DatabaseKind.allCases)
    func authValidityWithoutAccessControlIsIgnored(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(platform: .android(apiLevel: 29), biometry: .fingerprint))
        let keychain = try f.keychain(KeychainOptions(authValidity: 30))
        try await keychain.setItem("plain", "v")
        #expect(try await keychain.getItem("plain") == "v")
        try await keychain.checkWrite("other", SetOptions(authValidity: 60))
        // With an access control it is still UNSUPPORTED there.
        #expect(
            await errorCode { try await keychain.setItem("guarded", "v", SetOptions(accessControl: .biometryAny)) }
                == .UNSUPPORTED)
    }

    // MARK: Changed biometrics (000, 003)

    /// 003: "With biometryCurrentSet*, a change of the enrolled biometrics … makes the item unreadable: the next
    /// read throws KEY_INVALIDATED and the item is removed." 000's "under the same major version of iOS only"
    /// limits the package's own hash comparison, not the platform's invalidation.
    @Test(
        "003 a new enrolment after an OS upgrade invalidates current-set items, on iOS and on Android",
        arguments: DatabaseKind.allCases, [AccessControl.biometryCurrentSet, .biometryCurrentSetOrPasscode])
    func newEnrolmentAfterOSUpgradeInvalidates(kind: DatabaseKind, accessControl: AccessControl) async throws {
        let devices: [(SimulatedDevice, Platform)] = [
            (SimulatedDevice(platform: .iOS(major: 17)), .iOS(major: 18)),
            (SimulatedDevice(platform: .android(apiLevel: 33), biometry: .fingerprint), .android(apiLevel: 34)),
        ]
        for (device, upgraded) in devices {
            // An Android device has no iOS Keychain (``DatabaseKind/android``).
            if case .android = upgraded, !kind.runsOnAndroid { continue }
            let f = try Fixture(kind, device: device)
            let keychain = try f.keychain()
            try await keychain.setItem("k", "v", SetOptions(accessControl: accessControl))
            device.upgradeOS(to: upgraded)
            device.enrollBiometrics()
            #expect(await errorCode { _ = try await keychain.getItem("k") } == .KEY_INVALIDATED, "\(upgraded)")
            #expect(try await keychain.hasItem("k") == false)
            #expect(device.promptCount == 0)
        }
    }

    /// 000: "A read compares it with the current state, under the same major version of iOS only: Apple's hash
    /// may change with a major update."
    @Test(
        "000 a biometric state hash that changed with a major iOS update alone invalidates nothing",
        arguments: DatabaseKind.allCases, [AccessControl.biometryCurrentSet, .biometryCurrentSetOrPasscode])
    func changedStateHashAloneAcrossOSUpgradeInvalidatesNothing(
        kind: DatabaseKind, accessControl: AccessControl
    ) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(platform: .iOS(major: 18)))
        let keychain = try f.keychain()
        try await keychain.setItem("k", "v", SetOptions(accessControl: accessControl))
        let before = f.device.state()
        f.device.upgradeOS(to: .iOS(major: 26))
        let after = f.device.state()
        #expect(after.enrolledSet == before.enrolledSet)
        #expect(after.biometryStateHash != before.biometryStateHash)
        #expect(try await keychain.getItem("k") == "v")
    }

    // MARK: Passcode removal (003)

    /// 003, whenPasscodeSetThisDeviceOnly on Android: "the write checks that the device is secure; a key with
    /// authentication is invalidated when the screen lock is removed" — only a key with authentication.
    @Test(
        "003 Android: a whenPasscodeSetThisDeviceOnly item without access control survives removing the screen lock",
        arguments: DatabaseKind.android)
    func androidPasscodeClassWithoutAuthenticationSurvivesLockRemoval(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(platform: .android(apiLevel: 34), biometry: .fingerprint))
        let keychain = try f.keychain()
        try await keychain.setItem("plain", "v", SetOptions(accessible: .whenPasscodeSetThisDeviceOnly))
        try await keychain.setItem(
            "guarded", "v", SetOptions(accessible: .whenPasscodeSetThisDeviceOnly, accessControl: .passcode))
        f.device.setPasscode(false)
        #expect(try await keychain.getItem("plain") == "v")
        #expect(await errorCode { _ = try await keychain.getItem("guarded") } == .KEY_INVALIDATED)
        #expect(try await keychain.getAllKeys() == ["plain"])
    }

    // MARK: Usage description (000)

    /// 000: "On a device with Face ID, the package checks NSFaceIDUsageDescription before a write, a read or
    /// canUseAccessControl with biometrics; without it they fail with MISSING_USAGE_DESCRIPTION".
    @Test(
        "000 a read of a biometric item on a Face ID device without NSFaceIDUsageDescription fails without a prompt",
        arguments: DatabaseKind.allCases,
        [
            AccessControl.biometryAny, .biometryCurrentSet, .biometryAnyOrPasscode,
            .biometryCurrentSetOrPasscode,
        ])
    func biometricReadNeedsUsageDescription(kind: DatabaseKind, accessControl: AccessControl) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain()
        try await keychain.setItem("k", "v", SetOptions(accessControl: accessControl))
        try await keychain.setItem("p", "v", SetOptions(accessControl: .passcode))
        f.device.setFaceIDUsageDescription(false)
        #expect(await errorCode { _ = try await keychain.getItem("k") } == .MISSING_USAGE_DESCRIPTION)
        #expect(f.device.promptCount == 0)
        #expect(try await keychain.hasItem("k"))
        // The passcode alone needs no usage description.
        #expect(try await keychain.getItem("p") == "v")
    }

    /// 000: as above, for canUseAccessControl; 003 gives its answer four reasons only: "'unsupportedOS' |
    /// 'noHardware' | 'passcodeNotSet' | 'notEnrolled'".
    @Test("000 canUseAccessControl throws MISSING_USAGE_DESCRIPTION rather than answer a fifth reason")
    func canUseAccessControlThrowsWithoutUsageDescription() async throws {
        let device = SimulatedDevice(hasFaceIDUsageDescription: false)
        for accessControl in AccessControl.allCases {
            let code = await errorCode { _ = try await canUseAccessControl(accessControl, device: device) }
            #expect(code == (accessControl.usesBiometry ? .MISSING_USAGE_DESCRIPTION : nil), "\(accessControl)")
        }
        let touchID = SimulatedDevice(biometry: .touchID, hasFaceIDUsageDescription: false)
        #expect(
            try await canUseAccessControl(.biometryAny, device: touchID) == AccessControlAvailability(available: true))
    }

    // MARK: authValidity windows (000, 003)

    /// 000: "With authValidity > 0, the LAContext that passed is kept per service and accessControl for that many
    /// seconds and handed to the next reads" — that many: the authValidity of the read that prompted.
    @Test(
        "000 the context that passed is kept for the authValidity of the read that prompted",
        arguments: DatabaseKind.allCases)
    func windowLastsTheValidityOfThePromptingRead(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain(KeychainOptions(accessControl: .biometryAny))
        try await keychain.setItem("short", "v", SetOptions(authValidity: 10))
        try await keychain.setItem("long", "v", SetOptions(authValidity: 60))
        _ = try await keychain.getItem("short")
        #expect(f.device.promptCount == 1)
        f.device.advanceClock(by: 5)
        _ = try await keychain.getItem("long")
        #expect(f.device.promptCount == 1)
        f.device.advanceClock(by: 25)
        // 30 s after the prompt: within "long"'s 60 s, but the context was kept for the prompting read's 10 s.
        _ = try await keychain.getItem("long")
        #expect(f.device.promptCount == 2)
        // That prompt keeps its context for 60 s; a read uses it for no longer than its own authValidity.
        f.device.advanceClock(by: 5)
        _ = try await keychain.getItem("short")
        #expect(f.device.promptCount == 2)
        f.device.advanceClock(by: 20)
        _ = try await keychain.getItem("long")
        #expect(f.device.promptCount == 2)
        _ = try await keychain.getItem("short")
        #expect(f.device.promptCount == 3)
    }

    /// Issue 28, from 003's "It closes after authValidity seconds, and at once when the app goes to the
    /// background": a prompt for a short-lived item of the same service and access control never shortens the
    /// window a long-lived item's prompt opened. Each read still uses a context that passed no longer ago than
    /// its own authValidity.
    @Test(
        "003 a prompt for a short-lived item never shortens the window a long-lived item opened",
        arguments: DatabaseKind.allCases)
    func shortPromptKeepsTheLongWindow(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain(KeychainOptions(accessControl: .biometryAny))
        try await keychain.setItem("long", "v", SetOptions(authValidity: 60))
        try await keychain.setItem("short", "v", SetOptions(authValidity: 5))
        _ = try await keychain.getItem("long")
        f.device.advanceClock(by: 10)
        // The context passed 10 s ago: too long ago for "short"'s 5 s.
        _ = try await keychain.getItem("short")
        #expect(f.device.promptCount == 2)
        f.device.advanceClock(by: 10)
        // 20 s after the first prompt: its 60 s window is still open.
        _ = try await keychain.getItem("long")
        #expect(f.device.promptCount == 2)
        _ = try await keychain.getItem("short")
        #expect(f.device.promptCount == 3)
        f.device.advanceClock(by: 3)
        _ = try await keychain.getItem("short")
        _ = try await keychain.getItem("long")
        #expect(f.device.promptCount == 3)
        // The window closes 60 s after the prompt that opened it, whatever prompted since.
        f.device.advanceClock(by: 38)
        _ = try await keychain.getItem("long")
        #expect(f.device.promptCount == 4)
        f.device.advanceClock(by: 1)
        _ = try await keychain.getItem("short")
        #expect(f.device.promptCount == 4)
        // And at once when the app goes to the background.
        f.device.goToBackground()
        _ = try await keychain.getItem("long")
        #expect(f.device.promptCount == 5)
    }

    /// 003: "By default (authValidity: 0) every read of a protected item shows the prompt" — so its prompt keeps
    /// no context for the reads after it.
    @Test("003 a prompt for an authValidity-0 read keeps no context", arguments: DatabaseKind.allCases)
    func zeroValidityPromptOpensNoWindow(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain(KeychainOptions(accessControl: .biometryAny))
        try await keychain.setItem("every-time", "v")
        try await keychain.setItem("windowed", "v", SetOptions(authValidity: 60))
        _ = try await keychain.getItem("every-time")
        _ = try await keychain.getItem("windowed")
        #expect(f.device.promptCount == 2)
        _ = try await keychain.getItem("windowed")
        #expect(f.device.promptCount == 2)
    }

    // MARK: Fallback (000, 003)

    /// 000: "The fallback button of a prompt for biometrics alone (biometryAny, biometryCurrentSet) ends the read
    /// with USER_FALLBACK; for the other values the fallback is the passcode."
    @Test(
        "000 the fallback ends a biometry-only read with USER_FALLBACK; for the other values it is the passcode",
        arguments: DatabaseKind.allCases)
    func fallbackOfPasscodeOptionsIsThePasscode(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain()
        for accessControl in AccessControl.allCases where accessControl != .none {
            try await keychain.setItem(accessControl.rawValue, "v", SetOptions(accessControl: accessControl))
            f.device.answerNextPrompts(.fallback)
            let code = await errorCode { _ = try await keychain.getItem(accessControl.rawValue) }
            let biometryOnly = accessControl == .biometryAny || accessControl == .biometryCurrentSet
            #expect(code == (biometryOnly ? .USER_FALLBACK : nil), "\(accessControl)")
        }
    }

    // MARK: Access groups (004)

    /// 004 accessGroup: "The app needs the group in its keychain-access-groups entitlement; without it a call
    /// fails with MISSING_ENTITLEMENT."
    @Test(
        "004 a keychain of an access group outside the app's entitlement fails every call with MISSING_ENTITLEMENT",
        arguments: DatabaseKind.allCases)
    func accessGroupOutsideEntitlementsIsMissingEntitlement(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(accessGroups: .listed(["ABCDE12345.com.example.shared"])))
        let entitled = try f.keychain(KeychainOptions(accessGroup: "ABCDE12345.com.example.shared"))
        try await entitled.setItem("k", "v")
        let other = try f.keychain(KeychainOptions(accessGroup: "ZZZZZ99999.com.other.shared"))
        #expect(await errorCode { try await other.setItem("k", "v") } == .MISSING_ENTITLEMENT)
        #expect(await errorCode { _ = try await other.getItem("k") } == .MISSING_ENTITLEMENT)
        #expect(await errorCode { _ = try await other.hasItem("k") } == .MISSING_ENTITLEMENT)
        #expect(await errorCode { _ = try await other.getAllKeys() } == .MISSING_ENTITLEMENT)
        #expect(await errorCode { try await other.clear() } == .MISSING_ENTITLEMENT)
        #expect(try f.allItems().count == 1)
        // Android ignores the option, and with it the entitlement.
        let android = SimulatedDevice(platform: .android(apiLevel: 34), biometry: .fingerprint)
        let ignored = try Keychain(
            KeychainOptions(accessGroup: "ZZZZZ99999.com.other.shared"), database: f.database, device: android)
        try await ignored.setItem("k", "v")
    }

    // MARK: synchronizable on Android (003, 004)

    /// 004 synchronizable: "Android has no such thing: it keeps the item on the device and, in development, warns
    /// once."
    @Test(
        "004 synchronizable on Android is ignored with one warning on the device's warning channel",
        arguments: DatabaseKind.allCases)
    func synchronizableOnAndroidWarnsOnce(kind: DatabaseKind) async throws {
        let device = SimulatedDevice(platform: .android(apiLevel: 34), biometry: .fingerprint)
        let f = try Fixture(kind, device: device)
        let keychain = try f.keychain()
        try await keychain.setItem("plain", "v")
        #expect(device.warnings.isEmpty)
        try await keychain.setItem("a", "v", SetOptions(synchronizable: true))
        try await keychain.setItem("b", "v", SetOptions(synchronizable: true))
        _ = try f.keychain(KeychainOptions(service: "settings", synchronizable: true))
        #expect(device.warnings.map(\.code) == [.synchronizableIgnored])
        #expect(try await keychain.getItemInfo("a")?.synchronizable == false)
        // iOS gives no warning: it keeps the option.
        let ios = SimulatedDevice()
        try await Keychain(database: InMemoryKeychainDatabase(), device: ios).setItem(
            "a", "v", SetOptions(synchronizable: true))
        #expect(ios.warnings.isEmpty)
    }

    // MARK: Prompt, credentials, access group (001, 003, 004)

    /// 003 prompt: "confirmationRequired — Whether a passive biometric (a face) needs a tap to confirm; true by
    /// default".
    @Test("003 confirmationRequired is true unless the prompt says otherwise", arguments: DatabaseKind.allCases)
    func confirmationRequiredDefaultsToTrue(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(platform: .android(apiLevel: 34), biometry: .face))
        let keychain = try f.keychain(KeychainOptions(accessControl: .biometryAny))
        try await keychain.setItem("k", "v")
        _ = try await keychain.getItem("k")
        #expect(f.device.prompts.last?.prompt.confirmationRequired == true)
        _ = try await keychain.getItem("k", GetOptions(prompt: Prompt(confirmationRequired: false)))
        #expect(f.device.prompts.last?.prompt.confirmationRequired == false)
    }

    /// 001: "A lone surrogate, half of a UTF-16 pair. It has no UTF-8 form, and it throws INVALID_ARGUMENT too" —
    /// for a username or a password that reaches the package as JSON.
    @Test("001 a lone surrogate in a JSON credentials username or password is INVALID_ARGUMENT")
    func loneSurrogateInCredentialsJSONIsInvalidArgument() throws {
        for json in [#"{"username":"\ud800","password":"p"}"#, #"{"username":"u","password":"x\udc00"}"#] {
            do {
                _ = try JSONDecoder().decode(Credentials.self, from: Data(json.utf8))
                Issue.record("accepted \(json)")
            } catch let error as KeychainError {
                #expect(error.code == .INVALID_ARGUMENT)
                #expect(error.message.contains("surrogate"))
            }
        }
        let pair = try JSONDecoder().decode(
            Credentials.self, from: Data(#"{"username":"\ud83d\ude00","password":""}"#.utf8))
        #expect(pair == Credentials(username: "😀", password: ""))
    }

    /// 004 "Combinations that throw" lists "An empty accessGroup" alone; the 256-character limit is the key's
    /// and the service's (001, 004 service), not the group's.
    @Test("004 an access group longer than 256 characters is accepted; only the empty group is invalid")
    func longAccessGroupIsAccepted() async throws {
        let group = "ABCDE12345." + String(repeating: "g", count: 300)
        let device = SimulatedDevice(accessGroups: .listed([group]))
        let keychain = try Keychain(
            KeychainOptions(accessGroup: group), database: InMemoryKeychainDatabase(), device: device)
        try await keychain.setItem("k", "v")
        #expect(try await keychain.getItem("k") == "v")
        #expect(throws: KeychainError.self) {
            try Keychain(KeychainOptions(accessGroup: ""), database: InMemoryKeychainDatabase(), device: device)
        }
    }
}

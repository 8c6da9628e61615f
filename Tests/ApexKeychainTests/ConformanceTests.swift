import ApexKeychain
import ApexTestSupport
import Foundation
import Synchronization
import Testing

/// A ``Device`` that forwards to a ``SimulatedDevice`` but keeps every prompt on screen, waiting for the user,
/// until ``release()``.
private final class WaitingUserDevice: Device {
    let inner: SimulatedDevice
    private let log = Mutex((held: true, started: 0))

    init(_ inner: SimulatedDevice) { self.inner = inner }

    var defaultService: String { inner.defaultService }
    var defaultAccessGroup: String { inner.defaultAccessGroup }
    /// How many prompts have come on screen.
    var started: Int { log.withLock { $0.started } }

    func state() -> DeviceState { inner.state() }

    func authenticate(_ request: AuthenticationRequest) async -> AuthenticationResult {
        await waitForTheUser()
        return await inner.authenticate(request)
    }

    /// As the inner device's, so the context its prompt leaves reaches the read, as a device's does.
    func evaluate(_ request: AuthenticationRequest) async -> Authentication {
        await waitForTheUser()
        return await inner.evaluate(request)
    }

    private func waitForTheUser() async {
        log.withLock { $0.started += 1 }
        while log.withLock({ $0.held }) { try? await Task.sleep(for: .milliseconds(1)) }
    }

    func release() { log.withLock { $0.held = false } }
    func hasInstallMarker() throws -> Bool { try inner.hasInstallMarker() }
    func setInstallMarker() throws { try inner.setInstallMarker() }
}

/// Set once a task has run to its end.
private final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

/// Expects `error` to have `code` and a message that names `fragment` (which tells apart failures that share a
/// code).
private func expectError(
    _ error: KeychainError?, _ code: KeychainErrorCode, naming fragment: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(error?.code == code, "\(String(describing: error))", sourceLocation: sourceLocation)
    #expect(error?.message.contains(fragment) == true, "\(String(describing: error))", sourceLocation: sourceLocation)
}

/// The rules of the package's documentation (pages 000 iOS, 001 Storage model, 003 Protection, 004 Options) that
/// no feature's tests proved, and the order of a write's errors (choice C1). Each test quotes its sentence and
/// names its page; docs/CONFORMANCE.md maps every rule to its test.
@Suite("Conformance")
struct ConformanceTests {
    // MARK: 000 iOS

    /// 000: "The same path takes over when the old item is locked away (errSecInteractionNotAllowed)." — the
    /// staged path of a write with access control, for a write without it. In-memory database only: no other
    /// database here locks an item away, and ``InMemoryKeychainDatabase/setLockedAway(_:_:)`` stands for it.
    @Test(
        "000 a write over a locked-away item takes the staged path: add under a temporary key, delete, add under the key, delete the temporary one"
    )
    func lockedAwayItemIsReplacedThroughStaging() async throws {
        let db = InMemoryKeychainDatabase()
        let device = SimulatedDevice()
        let keychain = try Keychain(KeychainOptions(service: "svc.locked"), database: db, device: device)
        try await keychain.setItem("k", "old", SetOptions(accessible: .whenUnlocked, label: "old"))
        let created = try #require(try await keychain.getItemInfo("k")).createdAt
        device.lock()
        db.setLockedAway(try #require(db.allItems().first).attributes.primaryKey)
        device.advanceClock(by: 60)

        let before = db.writeCount
        try await keychain.setItem("k", "new", SetOptions(accessible: .afterFirstUnlock, label: "new"))
        // The replace the database refused, then the staged path: add staged, delete the old item, add under the
        // key, delete staged.
        #expect(db.writeCount - before == 5)
        #expect(db.allItems().map(\.attributes.account) == ["k"])
        #expect(try await keychain.getItem("k") == "new")
        let info = try #require(try await keychain.getItemInfo("k"))
        #expect(info.label == "new")
        #expect(info.accessible == .afterFirstUnlock)
        #expect(info.createdAt == created)
        #expect(info.modifiedAt == created + 60_000)
        #expect(device.promptCount == 0)
    }

    /// 000: "A write is atomic: if the new value can't be stored, the old one stays" — on the path of 000's "The
    /// same path takes over when the old item is locked away", interrupted at each of its writes.
    @Test(
        "000 a locked-away item's staged replacement, interrupted at write N, leaves the old item and fails (N=1, 2) or leaves the new one and succeeds (N=3, 4)",
        arguments: 1...4)
    func lockedAwayStagedWriteIsAtomic(n: Int) async throws {
        // A device's keychain: its calls can't be grouped, so the staged path's own order is what keeps it atomic.
        let db = InMemoryKeychainDatabase(groupsWrites: false)
        let device = SimulatedDevice()
        let keychain = try Keychain(database: db, device: device)
        try await keychain.setItem("k", "old", SetOptions(accessible: .whenUnlocked))
        let old = try #require(db.allItems().first).attributes.primaryKey
        device.lock()
        db.setLockedAway(old)
        db.failWrite(number: n + 1)  // write 1 is the refused replace
        // Once the old item went (N=3, 4), the write has happened: the caller is told no failure.
        #expect(await errorCode { try await keychain.setItem("k", "new") } == (n <= 2 ? .INTERNAL : nil))
        #expect(try await keychain.getAllKeys() == ["k"])

        device.unlock()
        db.setLockedAway(old, false)
        #expect(try await keychain.getItem("k") == (n >= 3 ? "new" : "old"))
        #expect(db.allItems().filter { $0.attributes.account == "k" }.count == 1)
        try await keychain.setItem("k", "newer")
        #expect(db.allItems().map(\.attributes.account) == ["k"])
        #expect(try await keychain.getItem("k") == "newer")
    }

    /// 000: "Prompts come one at a time, in the order the reads asked, on a queue of their own: the module's queue
    /// never waits for a user."
    @Test("000 a prompt waiting for the user holds up no call that needs no prompt", arguments: DatabaseKind.allCases)
    func promptWaitingForTheUserBlocksNothingElse(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let device = WaitingUserDevice(f.device)
        let keychain = try Keychain(KeychainOptions(service: "svc.queue"), database: f.database, device: device)
        let other = try Keychain(KeychainOptions(service: "svc.other"), database: f.database, device: device)
        try await keychain.setItem("guarded", "secret", SetOptions(accessControl: .biometryAny, label: "g"))
        try await keychain.setItem("plain", "p")

        let read = Task { try await keychain.getItem("guarded") }
        #expect(await eventually { device.started == 1 }, "the read's prompt is on screen")

        let finished = Flag()
        let calls = Task {
            #expect(try await keychain.hasItem("guarded"))
            #expect(try await keychain.getItemInfo("guarded")?.label == "g")
            #expect(try await keychain.getItem("plain") == "p")
            try await keychain.setItem("written", "v")
            try await keychain.setItem("written-guarded", "v", SetOptions(accessControl: .passcode))
            try await other.setBytes("bytes", Data([1, 2]))
            #expect(try await keychain.getAllKeys() == ["guarded", "plain", "written", "written-guarded"])
            try await keychain.removeItem("written")
            #expect(try await canUseAccessControl(.biometryAny, device: device).available)
            finished.set()
        }
        #expect(await eventually { finished.isSet }, "the other calls finish while the prompt waits for the user")
        // The read is still waiting: its prompt has not reached the simulated user.
        #expect(f.device.promptCount == 0)

        device.release()
        try await calls.value
        #expect(try await read.value == "secret")
        #expect(f.device.promptCount == 1)
    }

    /// 000 (following from "the next call checks again" and "The marker is set without the key too"): without
    /// the setting, a marker that can't be read or written fails a write (issue 28: a later update that turns the
    /// setting on would take the item for a new install's) and lets a call that writes nothing go on; the next
    /// call checks again (C4).
    @Test(
        "000 without clearOnReinstall, a marker that can't be recorded fails writes only, and is tried again on the next call",
        arguments: DatabaseKind.allCases, [SimulatedDevice.InstallMarkerFailure.reading, .writing])
    func markerFailureWithoutTheSettingIsRetried(
        kind: DatabaseKind, failure: SimulatedDevice.InstallMarkerFailure
    ) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(clearOnReinstall: false))
        f.device.failInstallMarker(failure)
        let keychain = try f.keychain()
        expectError(await thrown { try await keychain.setItem("token", "v") }, .INTERNAL, naming: "install marker")
        #expect(try await keychain.getItem("token") == nil)
        #expect(!f.device.installMarkerExists)

        // The same session: no relaunch. The next call finds the marker store working and sets the marker.
        f.device.failInstallMarker(nil)
        #expect(try await keychain.hasItem("token") == false)
        #expect(f.device.installMarkerExists)
        try await keychain.setItem("token", "v")
        #expect(try f.allItems().count == 1)
    }

    // MARK: 001 Storage model

    /// 001: "These are ordinary keys of the storage: getAllKeys lists them, and a setItem('credentials', …) would
    /// replace the pair." A replaced pair has no label unless the setItem gives one, and "getCredentials on an
    /// item that wasn't written by setCredentials, so has no label, throws INVALID_ARGUMENT".
    @Test("001 setItem('credentials', …) replaces the credentials pair", arguments: DatabaseKind.allCases)
    func setItemReplacesTheCredentialsPair(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain()
        try await keychain.setCredentials(Credentials(username: "ivan@example.com", password: "pw"))
        try await keychain.setCredentials(
            Credentials(username: "ada@example.com", password: "pw2"), CredentialsOptions(server: "api.example.com"))

        try await keychain.setItem("credentials", "x")
        #expect(try await keychain.getAllKeys() == ["credentials", "credentials:api.example.com"])
        #expect(try f.allItems().count == 2)
        #expect(try await keychain.getItem("credentials") == "x")
        #expect(try await keychain.getItemInfo("credentials")?.label == nil)
        #expect(await errorCode { _ = try await keychain.getCredentials() } == .INVALID_ARGUMENT)

        try await keychain.setItem("credentials", "y", SetOptions(label: "grace@example.com"))
        #expect(try await keychain.getCredentials() == Credentials(username: "grace@example.com", password: "y"))

        try await keychain.setItem("credentials:api.example.com", "z")
        let server = CredentialsGetOptions(server: "api.example.com")
        #expect(await errorCode { _ = try await keychain.getCredentials(server) } == .INVALID_ARGUMENT)
        #expect(try await keychain.getItem("credentials:api.example.com") == "z")
        #expect(try f.allItems().count == 2)
    }

    /// 001: `const info = await vault.getItemInfo('credentials')` — "'Sign in as ivan@example.com': no prompt";
    /// `await vault.getCredentials()` — "The password: the prompt."
    @Test(
        "001 getItemInfo('credentials') of a biometryCurrentSet pair gives the username without a prompt; getCredentials prompts once",
        arguments: DatabaseKind.allCases)
    func credentialsUsernameWithoutPromptPasswordWithPrompt(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let vault = try f.keychain(KeychainOptions(service: "vault"))
        let pair = Credentials(username: "ivan@example.com", password: "pw")
        try await vault.setCredentials(pair, CredentialsOptions(accessControl: .biometryCurrentSet))

        let info = try #require(try await vault.getItemInfo("credentials"))
        #expect(info.label == "ivan@example.com")
        #expect(info.accessControl == .biometryCurrentSet)
        #expect(try await vault.hasItem("credentials"))
        #expect(f.device.promptCount == 0)

        #expect(try await vault.getCredentials() == pair)
        #expect(f.device.promptCount == 1)
        #expect(f.device.prompts.last?.key == "credentials")
        #expect(f.device.prompts.last?.service == "vault")
    }

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

    // MARK: 004 Options

    /// 004: "A write's SetOptions override the protection options for one item, a read's GetOptions the prompt for
    /// one read; service and accessGroup belong to the storage alone."
    @Test(
        "004 service and accessGroup belong to the storage alone: a write's or a read's JSON options refuse them",
        arguments: ["service", "accessGroup"])
    func serviceAndAccessGroupBelongToTheStorage(name: String) throws {
        let json = Data(#"{"\#(name)":"ABCDE12345.vault"}"#.utf8)
        let decoders: [(String, (Data) throws -> Void)] = [
            ("SetOptions", { _ = try JSONDecoder().decode(SetOptions.self, from: $0) }),
            ("GetOptions", { _ = try JSONDecoder().decode(GetOptions.self, from: $0) }),
            ("CredentialsOptions", { _ = try JSONDecoder().decode(CredentialsOptions.self, from: $0) }),
            ("CredentialsGetOptions", { _ = try JSONDecoder().decode(CredentialsGetOptions.self, from: $0) }),
        ]
        for (type, decode) in decoders {
            do {
                try decode(json)
                Issue.record("\(type) accepted \(name)")
            } catch let error as KeychainError {
                #expect(error.code == .INVALID_ARGUMENT, "\(type)")
                #expect(error.message.contains(name), "\(type)")
            }
        }
        let storage = try JSONDecoder().decode(KeychainOptions.self, from: json)
        #expect(name == "service" ? storage.service != nil : storage.accessGroup != nil)
    }

    /// 004 prompt: "Default the system's texts".
    @Test(
        "004 with no prompt options, a read's prompt has no texts: every field nil but confirmationRequired (true)",
        arguments: DatabaseKind.allCases)
    func noPromptOptionsLeavesTheSystemsTexts(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain(KeychainOptions(accessControl: .biometryAny))
        try await keychain.setItem("k", "v")
        try await keychain.setCredentials(Credentials(username: "u", password: "p"))
        _ = try await keychain.getItem("k")
        _ = try await keychain.getBytes("k", GetOptions())
        _ = try await keychain.getCredentials()
        #expect(f.device.prompts.map(\.prompt) == Array(repeating: Prompt(confirmationRequired: true), count: 3))
    }

    /// A forbidden protection whose halves are each allowed: one in the storage's options, one in the call's.
    struct Split: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let storage: KeychainOptions
        let call: SetOptions

        static let all = [
            Split(
                testDescription: "storage synchronizable, call whenUnlockedThisDeviceOnly",
                storage: KeychainOptions(synchronizable: true),
                call: SetOptions(accessible: .whenUnlockedThisDeviceOnly)),
            Split(
                testDescription: "storage afterFirstUnlockThisDeviceOnly, call synchronizable",
                storage: KeychainOptions(accessible: .afterFirstUnlockThisDeviceOnly),
                call: SetOptions(synchronizable: true)),
            Split(
                testDescription: "storage synchronizable, call passcode",
                storage: KeychainOptions(synchronizable: true), call: SetOptions(accessControl: .passcode)),
            Split(
                testDescription: "storage biometryCurrentSet, call authValidity 30",
                storage: KeychainOptions(accessControl: .biometryCurrentSet), call: SetOptions(authValidity: 30)),
            Split(
                testDescription: "storage biometryAny with authValidity 30, call biometryCurrentSetOrPasscode",
                storage: KeychainOptions(accessControl: .biometryAny, authValidity: 30),
                call: SetOptions(accessControl: .biometryCurrentSetOrPasscode)),
        ]
    }

    /// 004: "createKeychain checks its options as a write would, and a write checks the call's options over the
    /// storage's, the same way on both platforms".
    @Test(
        "004 a forbidden combination split between the storage's options and the call's is INVALID_ARGUMENT, on iOS and Android",
        arguments: DatabaseKind.allCases, Split.all)
    func splitCombinationIsRefused(kind: DatabaseKind, split: Split) async throws {
        let devices = [SimulatedDevice(), SimulatedDevice(platform: .android(apiLevel: 34), biometry: .fingerprint)]
        for device in devices {
            let f = try Fixture(kind, device: device)
            let keychain = try f.keychain(split.storage)
            let platform = device.state().platform
            #expect(
                await errorCode { try await keychain.setItem("k", "v", split.call) } == .INVALID_ARGUMENT, "\(platform)"
            )
            #expect(
                await errorCode { try await keychain.checkWrite("k", split.call) } == .INVALID_ARGUMENT, "\(platform)")
            let credentials = CredentialsOptions(
                accessible: split.call.accessible, accessControl: split.call.accessControl,
                authValidity: split.call.authValidity, synchronizable: split.call.synchronizable)
            #expect(
                await errorCode {
                    try await keychain.setCredentials(Credentials(username: "u", password: "p"), credentials)
                }
                    == .INVALID_ARGUMENT, "\(platform)")
            #expect(try f.allItems().isEmpty)
            // Each half alone is a protection an item can have.
            try await keychain.setItem("storage-alone", "v")
            try await f.keychain(KeychainOptions(service: "svc.call")).setItem("call-alone", "v", split.call)
            #expect(try f.allItems().count == 2)
        }
    }

    // MARK: C1, the order of a write's errors

    /// C1 (docs/CONFORMANCE.md; the pages list what makes a write fail, not which failure wins): every failure of
    /// the order holds at once, and each step removes the one that won, from the arguments down to a database
    /// fault. `checkWrite` answers the same at every step it can take (it has no value and writes nothing).
    @Test(
        "000/003/004 C1: a write reports the first failure in the documented order, step by step (iOS)",
        arguments: DatabaseKind.allCases)
    func writeErrorOrder(kind: DatabaseKind) async throws {
        let device = SimulatedDevice(
            biometry: .faceID, passcodeSet: false, hasFaceIDUsageDescription: false, clearOnReinstall: true)
        let outside = "ZZZZZ99999.com.other.shared"
        // The emulated keychain holds the other group too, so the item seeded there is taken (the device's
        // entitlement, which the write checks, still lacks it).
        let f = try Fixture(kind, device: device, accessGroups: [device.defaultAccessGroup, outside])
        // Seeded before the restart: a keychain refuses every add before the first unlock (§2.9).
        try f.seedForeign(service: "svc.order", account: "k")
        try f.seedForeign(service: "svc.order", account: "k", accessGroup: outside)
        device.reboot()
        device.failInstallMarker(.reading)
        var keychain = try f.keychain(KeychainOptions(service: "svc.order", accessGroup: outside))
        var (key, value, label) = ("", "v\u{0}", "l\u{0}")
        var options = SetOptions(accessible: .whenUnlocked, accessControl: .biometryAny, synchronizable: true)
        var items = 2

        func expectWinner(
            _ code: KeychainErrorCode, naming fragment: String, checkWrite: Bool = true,
            sourceLocation: SourceLocation = #_sourceLocation
        ) async throws {
            var write = options
            write.label = label
            expectError(
                await thrown { try await keychain.setItem(key, value, write) }, code, naming: fragment,
                sourceLocation: sourceLocation)
            if checkWrite {
                expectError(
                    await thrown { try await keychain.checkWrite(key, write) }, code, naming: fragment,
                    sourceLocation: sourceLocation)
            }
            #expect(try f.storedPlaces().count == items, sourceLocation: sourceLocation)
        }

        // 1. The arguments: the value, the key, the label, then the protection.
        try await expectWinner(.INVALID_ARGUMENT, naming: "value", checkWrite: false)
        value = "v"
        try await expectWinner(.INVALID_ARGUMENT, naming: "key")
        key = "k"
        try await expectWinner(.INVALID_ARGUMENT, naming: "label")
        label = "l"
        try await expectWinner(.INVALID_ARGUMENT, naming: "synchronizable")
        options.synchronizable = nil
        // 2. The entitlement.
        try await expectWinner(.MISSING_ENTITLEMENT, naming: "entitlement")
        keychain = try f.keychain(KeychainOptions(service: "svc.order"))
        // 3. The install check: before the first unlock, then a marker that can't be read.
        try await expectWinner(.INTERACTION_NOT_ALLOWED, naming: "clearOnReinstall")
        device.unlock()
        device.lock()
        try await expectWinner(.INTERNAL, naming: "install marker")
        device.failInstallMarker(nil)
        // 4. The device: the passcode, the enrolment, the usage description.
        try await expectWinner(.PASSCODE_NOT_SET, naming: "passcode")
        device.setPasscode(true)
        try await expectWinner(.BIOMETRY_NOT_ENROLLED, naming: "enrolled")
        device.enrollBiometrics()
        try await expectWinner(.MISSING_USAGE_DESCRIPTION, naming: "NSFaceIDUsageDescription")
        device.setFaceIDUsageDescription(true)
        // 5. The lock, from the class being written.
        try await expectWinner(.INTERACTION_NOT_ALLOWED, naming: "locked")
        device.unlock()
        // 6. Another library's item under the key.
        try await expectWinner(.INVALID_ARGUMENT, naming: "another library")
        let foreign = try #require(try f.allItems().first { $0.accessGroup == device.defaultAccessGroup })
        try f.database.delete(foreign.primaryKey)
        items = 1
        // 7. A database fault (the in-memory database can plant one).
        if let memory = f.database as? InMemoryKeychainDatabase {
            memory.failWrite(number: 1)
            try await expectWinner(.INTERNAL, naming: "database error", checkWrite: false)
        }
        try await keychain.setItem(
            key, value, SetOptions(accessible: .whenUnlocked, accessControl: .biometryAny, label: label))
        #expect(try await keychain.getItemInfo("k")?.accessControl == .biometryAny)
        #expect(device.promptCount == 0)
    }

    /// C1, step 4 on Android, where UNSUPPORTED and HARDWARE_UNAVAILABLE can hold, and on a device without a
    /// sensor, where BIOMETRY_NOT_AVAILABLE and BIOMETRY_NOT_ENROLLED hold together.
    @Test(
        "003 C1: the device's failures in order: UNSUPPORTED, PASSCODE_NOT_SET, BIOMETRY_NOT_AVAILABLE, BIOMETRY_NOT_ENROLLED, HARDWARE_UNAVAILABLE, then the lock",
        arguments: DatabaseKind.allCases)
    func deviceErrorOrder(kind: DatabaseKind) async throws {
        let device = SimulatedDevice(
            platform: .android(apiLevel: 29), biometry: .fingerprint, passcodeSet: false, hasStrongBox: false,
            locked: true)
        let f = try Fixture(kind, device: device)
        let keychain = try f.keychain()
        var options = SetOptions(
            accessible: .whenUnlocked, accessControl: .biometryAny, authValidity: 10,
            android: AndroidOptions(keyStorage: .strongboxRequired))
        func winner() async -> KeychainErrorCode? { await errorCode { try await keychain.setItem("k", "v", options) } }

        #expect(await winner() == .UNSUPPORTED)
        device.upgradeOS(to: .android(apiLevel: 30))
        #expect(await winner() == .PASSCODE_NOT_SET)
        device.setPasscode(true)
        #expect(await winner() == .BIOMETRY_NOT_ENROLLED)
        device.enrollBiometrics()
        #expect(await winner() == .HARDWARE_UNAVAILABLE)
        options.android = AndroidOptions(keyStorage: .strongbox)
        #expect(await winner() == .INTERACTION_NOT_ALLOWED)
        device.unlock()
        #expect(await winner() == nil)
        #expect(try await keychain.getItemInfo("k")?.android?.securityLevel == .tee)

        // No sensor: nothing is enrolled either, and the missing sensor is named; the passcode comes first.
        let bare = try Fixture(kind, device: SimulatedDevice(biometry: nil, passcodeSet: false))
        let noSensor = try bare.keychain()
        let biometric = SetOptions(accessControl: .biometryCurrentSet)
        #expect(await errorCode { try await noSensor.setItem("k", "v", biometric) } == .PASSCODE_NOT_SET)
        bare.device.setPasscode(true)
        #expect(!bare.device.state().biometryEnrolled)
        #expect(await errorCode { try await noSensor.setItem("k", "v", biometric) } == .BIOMETRY_NOT_AVAILABLE)
        #expect(try bare.allItems().isEmpty)
    }

    /// C1, step 1 for credentials: "The value (or the server, username and password of credentials), the key and
    /// the label, then the protection".
    @Test(
        "001 C1: a credentials write checks the server, the username, the password, then the protection",
        arguments: DatabaseKind.allCases)
    func credentialsArgumentOrder(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain()
        var pair = Credentials(username: "", password: "p\u{0}")
        var options = CredentialsOptions(server: "", accessControl: .passcode, synchronizable: true)
        func winner() async -> KeychainError? { await thrown { try await keychain.setCredentials(pair, options) } }

        expectError(await winner(), .INVALID_ARGUMENT, naming: "server")
        options.server = "api.example.com"
        expectError(await winner(), .INVALID_ARGUMENT, naming: "username must not be empty")
        pair.username = "u\u{0}"
        expectError(await winner(), .INVALID_ARGUMENT, naming: "username must not contain")
        pair.username = "u"
        expectError(await winner(), .INVALID_ARGUMENT, naming: "password")
        pair.password = "p"
        expectError(await winner(), .INVALID_ARGUMENT, naming: "synchronizable")
        options.synchronizable = nil
        #expect(await winner() == nil)
        #expect(try f.allItems().count == 1)
    }
}

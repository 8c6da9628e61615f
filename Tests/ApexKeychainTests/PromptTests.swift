import ApexTestSupport
import Foundation
import Synchronization
import Testing

@testable import ApexKeychain

/// A ``Device`` that forwards to a ``SimulatedDevice`` and records how prompts ran: how many were on screen at
/// once, how many started, and how often the device's state was asked for. It can hold prompts until released.
private final class PromptRecordingDevice: Device {
    struct Log {
        var onScreen = 0
        var mostOnScreen = 0
        var started = 0
        var stateCalls = 0
        var held = false
    }

    let inner: SimulatedDevice
    let log: Mutex<Log>
    let pause: Duration

    init(_ inner: SimulatedDevice, pause: Duration = .zero, held: Bool = false) {
        self.inner = inner
        self.pause = pause
        log = Mutex(Log(held: held))
    }

    var defaultService: String { inner.defaultService }
    var defaultAccessGroup: String { inner.defaultAccessGroup }
    var snapshot: Log { log.withLock { $0 } }

    func state() -> DeviceState {
        log.withLock { $0.stateCalls += 1 }
        return inner.state()
    }

    func authenticate(_ request: AuthenticationRequest) async -> AuthenticationResult {
        await onScreen { await inner.authenticate(request) }
    }

    /// As the inner device's, so the context its prompt leaves reaches the read, as a device's does (an emulated
    /// keychain reads with it; without it the read would be refused, as a real one's is).
    func evaluate(_ request: AuthenticationRequest) async -> Authentication {
        await onScreen { await inner.evaluate(request) }
    }

    /// Runs `prompt` as a prompt on screen: counted, held while ``release()`` hasn't come, paused.
    private func onScreen<T>(_ prompt: () async -> T) async -> T {
        log.withLock { log in
            log.started += 1
            log.onScreen += 1
            log.mostOnScreen = max(log.mostOnScreen, log.onScreen)
        }
        while log.withLock({ $0.held }) { try? await Task.sleep(for: .milliseconds(1)) }
        if pause > .zero { try? await Task.sleep(for: pause) }
        let result = await prompt()
        log.withLock { $0.onScreen -= 1 }
        return result
    }

    func release() { log.withLock { $0.held = false } }
    func hasInstallMarker() throws -> Bool { try inner.hasInstallMarker() }
    func setInstallMarker() throws { try inner.setInstallMarker() }
}

/// The accessible classes that need the device unlocked.
private let needsUnlocked: [Accessible] = [.whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly]
/// The accessible classes usable while locked, once unlocked since boot.
private let afterFirstUnlock: [Accessible] = [.afterFirstUnlock, .afterFirstUnlockThisDeviceOnly]

/// Read time: protected items prompt through the device, one prompt at a time in the order asked; the prompt's
/// outcome names the error; the lock state gates reads and writes; authValidity windows spare repeated prompts
/// within one session, service and access control.
@Suite("Prompts")
struct PromptTests {
    @Test(
        "reading a protected item prompts once, with the item's policy, service and key",
        arguments: DatabaseKind.allCases,
        [
            (AccessControl.biometryAny, AuthenticationRequest.Policy.biometryOnly),
            (.biometryCurrentSet, .biometryOnly), (.biometryAnyOrPasscode, .biometryOrPasscode),
            (.biometryCurrentSetOrPasscode, .biometryOrPasscode), (.passcode, .passcodeOnly),
        ])
    func protectedReadPrompts(
        kind: DatabaseKind, expected: (AccessControl, AuthenticationRequest.Policy)
    ) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain(KeychainOptions(service: "svc.prompt"))
        try await kc.setItem("token", "secret", SetOptions(accessControl: expected.0))
        #expect(f.device.promptCount == 0)
        #expect(try await kc.getItem("token") == "secret")
        #expect(f.device.promptCount == 1)
        let request = try #require(f.device.prompts.first)
        #expect(request.policy == expected.1)
        #expect(request.service == "svc.prompt")
        #expect(request.key == "token")
    }

    @Test("items without access control never prompt", arguments: DatabaseKind.allCases, Accessible.allCases)
    func unprotectedReadsNeverPrompt(kind: DatabaseKind, accessible: Accessible) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(accessible: accessible, accessControl: AccessControl.none))
        let credentials = Credentials(username: "u", password: "p")
        try await kc.setCredentials(credentials, CredentialsOptions(accessible: accessible))
        for _ in 0..<3 {
            #expect(try await kc.getItem("k") == "v")
            #expect(try await kc.getBytes("k") == Data("v".utf8))
            #expect(try await kc.getCredentials() == credentials)
        }
        #expect(f.device.promptCount == 0)
    }

    @Test(
        "the prompt's outcome names the error and keeps the item",
        arguments: DatabaseKind.allCases,
        [
            (AuthenticationResult.canceled, KeychainErrorCode.USER_CANCELED),
            (.fallback, .USER_FALLBACK), (.failed, .AUTHENTICATION_FAILED),
        ])
    func promptOutcomes(kind: DatabaseKind, outcome: (AuthenticationResult, KeychainErrorCode)) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(accessControl: .biometryAny))
        f.device.answerNextPrompts(outcome.0)
        #expect(await errorCode { _ = try await kc.getItem("k") } == outcome.1)
        #expect(f.device.promptCount == 1)
        #expect(try await kc.hasItem("k"))
        #expect(try await kc.getItem("k") == "v")
    }

    @Test(
        "biometry lockout fails a biometry-only read with BIOMETRY_LOCKOUT and shows no prompt",
        arguments: DatabaseKind.allCases, [AccessControl.biometryAny, .biometryCurrentSet])
    func lockoutBiometryOnly(kind: DatabaseKind, accessControl: AccessControl) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(accessControl: accessControl))
        f.device.setBiometryLockedOut(true)
        #expect(await errorCode { _ = try await kc.getItem("k") } == .BIOMETRY_LOCKOUT)
        #expect(f.device.promptCount == 0)
        #expect(try await kc.hasItem("k"))
    }

    @Test(
        "biometry lockout still lets the passcode open an …OrPasscode item",
        arguments: DatabaseKind.allCases, [AccessControl.biometryAnyOrPasscode, .biometryCurrentSetOrPasscode])
    func lockoutWithPasscode(kind: DatabaseKind, accessControl: AccessControl) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(accessControl: accessControl))
        f.device.setBiometryLockedOut(true)
        #expect(try await kc.getItem("k") == "v")
        #expect(f.device.prompts.map(\.policy) == [.biometryOrPasscode])
    }

    @Test("concurrent reads show their prompts one at a time", arguments: DatabaseKind.allCases)
    func promptsNeverOverlap(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let device = PromptRecordingDevice(f.device, pause: .milliseconds(5))
        let kc = try Keychain(KeychainOptions(service: "svc.overlap"), database: f.database, device: device)
        let keys = (0..<6).map { "k\($0)" }
        for key in keys { try await kc.setItem(key, key, SetOptions(accessControl: .biometryAny)) }
        let values = try await withThrowingTaskGroup(of: (String, String?).self) { group in
            for key in keys { group.addTask { (key, try await kc.getItem(key)) } }
            return try await group.reduce(into: [String: String?]()) { $0[$1.0] = $1.1 }
        }
        #expect(values == Dictionary(uniqueKeysWithValues: keys.map { ($0, Optional($0)) }))
        #expect(device.snapshot.started == keys.count)
        #expect(device.snapshot.mostOnScreen == 1)
        #expect(Set(f.device.prompts.map(\.key)) == Set(keys))
    }

    @Test("prompts are shown in the order the reads asked", arguments: DatabaseKind.allCases)
    func promptsInReadOrder(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let device = PromptRecordingDevice(f.device, held: true)
        let kc = try Keychain(KeychainOptions(service: "svc.order"), database: f.database, device: device)
        let keys = ["e", "b", "d", "a", "c"]
        for key in keys { try await kc.setItem(key, key, SetOptions(accessControl: .biometryAny)) }
        var reads: [Task<String?, any Error>] = []
        for (index, key) in keys.enumerated() {
            reads.append(Task { try await kc.getItem(key) })
            if index == 0 {
                // The first read holds the prompt; every later one must queue behind it.
                #expect(await eventually { device.snapshot.started == 1 }, "the first prompt is on screen")
            } else {
                // Let the read queue behind the prompt on screen before the next one is asked.
                #expect(
                    await eventually { await DeviceContext.of(device).prompts.waitingCount == index },
                    "read \(key) queues for the prompt")
            }
        }
        device.release()
        for (key, read) in zip(keys, reads) { #expect(try await read.value == key) }
        #expect(f.device.prompts.map(\.key) == keys)
        #expect(device.snapshot.mostOnScreen == 1)
    }

    @Test(
        "while the device is locked, whenUnlocked classes can't be read or written",
        arguments: DatabaseKind.allCases, needsUnlocked)
    func lockedNeedsUnlocked(kind: DatabaseKind, accessible: Accessible) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain()
        try await kc.setItem("k", "old", SetOptions(accessible: accessible))
        f.device.lock()
        #expect(await errorCode { _ = try await kc.getItem("k") } == .INTERACTION_NOT_ALLOWED)
        let options = SetOptions(accessible: accessible)
        #expect(await errorCode { try await kc.setItem("k", "new", options) } == .INTERACTION_NOT_ALLOWED)
        #expect(await errorCode { try await kc.setItem("other", "new", options) } == .INTERACTION_NOT_ALLOWED)
        f.device.unlock()
        #expect(try await kc.getItem("k") == "old")
        #expect(try await kc.hasItem("other") == false)
    }

    @Test(
        "while the device is locked, afterFirstUnlock classes are readable and writable",
        arguments: DatabaseKind.allCases, afterFirstUnlock)
    func lockedAfterFirstUnlock(kind: DatabaseKind, accessible: Accessible) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain()
        try await kc.setItem("k", "old", SetOptions(accessible: accessible))
        f.device.lock()
        #expect(try await kc.getItem("k") == "old")
        try await kc.setItem("k", "new", SetOptions(accessible: accessible))
        #expect(try await kc.getItem("k") == "new")
    }

    @Test(
        "before the first unlock after a reboot, even afterFirstUnlock classes can't be used",
        arguments: DatabaseKind.allCases, afterFirstUnlock)
    func rebootNeedsFirstUnlock(kind: DatabaseKind, accessible: Accessible) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain()
        try await kc.setItem("k", "old", SetOptions(accessible: accessible))
        f.device.reboot()
        let options = SetOptions(accessible: accessible)
        #expect(await errorCode { _ = try await kc.getItem("k") } == .INTERACTION_NOT_ALLOWED)
        #expect(await errorCode { try await kc.setItem("k", "new", options) } == .INTERACTION_NOT_ALLOWED)
        f.device.unlock()
        #expect(try await kc.getItem("k") == "old")
        f.device.lock()
        try await kc.setItem("k", "new", SetOptions(accessible: accessible))
        #expect(try await kc.getItem("k") == "new")
    }

    /// A keychain whose items are biometryAny with a 10-second window, holding "a" and "b".
    private func windowed(_ f: Fixture, service: String = "svc.window") async throws -> Keychain {
        let kc = try f.keychain(KeychainOptions(service: service, accessControl: .biometryAny, authValidity: 10))
        try await kc.setItem("a", "1")
        try await kc.setItem("b", "2")
        return kc
    }

    @Test("authValidity spares prompts for its seconds, then prompts again", arguments: DatabaseKind.allCases)
    func windowLasts(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try await windowed(f)
        #expect(try await kc.getItem("a") == "1")
        #expect(f.device.promptCount == 1)
        f.device.advanceClock(by: 5)
        #expect(try await kc.getItem("a") == "1")
        #expect(try await kc.getItem("b") == "2")
        #expect(f.device.promptCount == 1)
        f.device.advanceClock(by: 5.5)
        #expect(try await kc.getItem("a") == "1")
        #expect(f.device.promptCount == 2)
    }

    @Test("the first read after the app starts always prompts", arguments: DatabaseKind.allCases)
    func relaunchClosesWindow(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try await windowed(f)
        _ = try await kc.getItem("a")
        f.device.relaunch()
        _ = try await kc.getItem("a")
        #expect(f.device.promptCount == 2)
    }

    @Test("going to the background closes the window", arguments: DatabaseKind.allCases)
    func backgroundClosesWindow(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try await windowed(f)
        _ = try await kc.getItem("a")
        f.device.goToBackground()
        _ = try await kc.getItem("a")
        #expect(f.device.promptCount == 2)
    }

    @Test("a window opens for its own service and access control only", arguments: DatabaseKind.allCases)
    func windowScope(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try await windowed(f)
        let other = try await windowed(f, service: "svc.other")
        try await kc.setItem("c", "3", SetOptions(accessControl: .biometryAnyOrPasscode))
        _ = try await kc.getItem("a")
        _ = try await kc.getItem("b")
        #expect(f.device.prompts.map(\.key) == ["a"])
        #expect(try await other.getItem("a") == "1")
        #expect(try await kc.getItem("c") == "3")
        #expect(f.device.prompts.map { "\($0.service)/\($0.key)" } == ["svc.window/a", "svc.other/a", "svc.window/c"])
    }

    @Test("authValidity 0 prompts on every read", arguments: DatabaseKind.allCases)
    func noWindow(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(accessControl: .biometryAny, authValidity: 0))
        for _ in 0..<3 { #expect(try await kc.getItem("k") == "v") }
        #expect(f.device.promptCount == 3)
    }

    @Test("a canceled prompt opens no window", arguments: DatabaseKind.allCases)
    func canceledOpensNoWindow(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try await windowed(f)
        f.device.answerNextPrompts(.canceled)
        #expect(await errorCode { _ = try await kc.getItem("a") } == .USER_CANCELED)
        #expect(try await kc.getItem("a") == "1")
        #expect(f.device.promptCount == 2)
    }

    @Test("a prompt on another device leaves this device's window open", arguments: DatabaseKind.allCases)
    func windowsOfOtherDevices(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let g = try Fixture(kind, device: SimulatedDevice())
        let kc = try await windowed(f)
        let elsewhere = try await windowed(g)
        _ = try await kc.getItem("a")
        _ = try await elsewhere.getItem("a")
        #expect(g.device.promptCount == 1)
        _ = try await kc.getItem("a")
        #expect(f.device.promptCount == 1)
    }
}

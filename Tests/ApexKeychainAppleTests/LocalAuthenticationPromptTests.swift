import ApexKeychain
import ApexKeychainApple
import Foundation
import Testing

/// `LocalAuthenticationDevice.evaluate(_:)`: one prompt on one new context, with the `Prompt`'s texts, evaluating
/// the item's own access control, and the evaluated context handed back; then a core `Keychain` on the device.
@Suite("LocalAuthenticationDevice prompts")
struct LocalAuthenticationPromptTests {
    private func request(
        _ accessControl: AccessControl = .biometryCurrentSet, accessible: Accessible? = .whenUnlockedThisDeviceOnly,
        prompt: Prompt = Prompt(title: "Sign in", cancel: "Not now", fallback: "")
    ) -> AuthenticationRequest {
        AuthenticationRequest(
            policy: accessControl == .passcode ? .passcodeOnly : .biometryOnly, prompt: prompt, service: "svc",
            key: "token", accessControl: accessControl, accessible: accessible)
    }

    @Test("one prompt on one new context, evaluating the item's access control, the context handed back")
    func onePrompt() async throws {
        let platform = ScriptedPlatform()
        let device = try LocalAuthenticationDevice(platform: platform)
        let authentication = await device.evaluate(request())
        #expect(authentication.result == .success)
        #expect(platform.contextsMade == 1 && platform.prompts.count == 1)
        let spec = SecAccessControlSpec(protection: "aku", flags: [.biometryCurrentSet])
        #expect(platform.prompts[0].target == .accessControl(spec))
        let evaluation = try #require(authentication.context as? LocalAuthenticationDevice.Evaluation)
        #expect(evaluation.target == .accessControl(spec) && evaluation.request == request())
        #expect(evaluation.hasEvaluated(spec))
        #expect(evaluation.hasEvaluated(SecAccessControlSpec(protection: "ck", flags: [.biometryCurrentSet])))
        #expect(!evaluation.hasEvaluated(SecAccessControlSpec(protection: "aku", flags: [.userPresence])))
        // The very context the prompt evaluated, not another.
        let second = await device.evaluate(request())
        let other = try #require(second.context as? LocalAuthenticationDevice.Evaluation)
        #expect(other.context !== evaluation.context && platform.contextsMade == 2)
    }

    @Test("the Prompt's title, cancel and fallback reach the context; no title takes the default reason")
    func promptTexts() async throws {
        let platform = ScriptedPlatform()
        let device = try LocalAuthenticationDevice(platform: platform, defaultReason: "Unlock the app")
        _ = await device.evaluate(request())
        #expect(
            platform.prompts[0].text
                == LocalAuthenticationPromptText(
                    localizedReason: "Sign in", localizedCancelTitle: "Not now", localizedFallbackTitle: ""))
        _ = await device.evaluate(request(prompt: Prompt()))
        #expect(
            platform.prompts[1].text
                == LocalAuthenticationPromptText(
                    localizedReason: "Unlock the app", localizedCancelTitle: nil, localizedFallbackTitle: nil))
        _ = await device.evaluate(request(prompt: Prompt(title: "")))
        #expect(platform.prompts[2].text.localizedReason == "Unlock the app")
    }

    @Test("a request that doesn't name the item's access control and class evaluates the policy")
    func policyFallback() async throws {
        let platform = ScriptedPlatform()
        let device = try LocalAuthenticationDevice(platform: platform)
        _ = await device.evaluate(request(accessible: nil))
        _ = await device.evaluate(request(.none, accessible: nil))
        _ = await device.evaluate(request(.passcode, accessible: nil))
        #expect(
            platform.prompts.map(\.target) == [
                .policy(.deviceOwnerAuthenticationWithBiometrics), .policy(.deviceOwnerAuthenticationWithBiometrics),
                .policy(.deviceOwnerAuthentication),
            ])
    }

    @Test("a failed prompt leaves no context; authenticate answers as evaluate")
    func failures() async throws {
        let platform = ScriptedPlatform {
            $0.answers = [.userCancel, .userFallback, .biometryLockout, .notInteractive]
        }
        let device = try LocalAuthenticationDevice(platform: platform)
        let canceled = await device.evaluate(request())
        #expect(canceled.result == .canceled && canceled.context == nil)
        #expect(await device.authenticate(request()) == .fallback)
        #expect(await device.authenticate(request()) == .lockout)
        #expect(await device.evaluate(request()).result == .notInteractive)
        #expect(await device.authenticate(request()) == .success)
        #expect(platform.prompts.count == 5)
    }
}

/// A core `Keychain` over the in-memory database with `LocalAuthenticationDevice` on the scripted platform.
@Suite("LocalAuthenticationDevice under a Keychain")
struct LocalAuthenticationKeychainTests {
    @Test("a biometric write, then a read that prompts once")
    func biometricItem() async throws {
        let platform = ScriptedPlatform()
        let device = try LocalAuthenticationDevice(platform: platform)
        let keychain = try Keychain(database: InMemoryKeychainDatabase(), device: device)
        #expect(keychain.service == "com.example.app" && keychain.accessGroup == "ABCDE12345.com.example.app")
        try await keychain.setItem("token", "s3cret", SetOptions(accessControl: .biometryCurrentSet))
        #expect(platform.prompts.isEmpty)
        #expect(try await keychain.getItem("token", GetOptions(prompt: Prompt(title: "Read the token"))) == "s3cret")
        #expect(platform.prompts.count == 1)
        #expect(platform.prompts[0].text.localizedReason == "Read the token")
        #expect(platform.script.withLock { $0.defaults[LocalAuthenticationDevice.installMarkerKey] } == true)
    }

    @Test("a write the device can't protect fails; no usage description fails before a prompt")
    func refusals() async throws {
        let scripts: [(ScriptedPlatform, KeychainErrorCode)] = [
            (
                ScriptedPlatform { $0.canEvaluate[.deviceOwnerAuthenticationWithBiometrics] = .biometryNotEnrolled },
                .BIOMETRY_NOT_ENROLLED
            ),
            (ScriptedPlatform { $0.info = [:] }, .MISSING_USAGE_DESCRIPTION),
        ]
        for (platform, code) in scripts {
            let keychain = try Keychain(
                database: InMemoryKeychainDatabase(), device: LocalAuthenticationDevice(platform: platform))
            let error = await Self.failure { () throws(KeychainError) in
                try await keychain.setItem("token", "s3cret", SetOptions(accessControl: .biometryAny))
            }
            #expect(error?.code == code)
            #expect(platform.prompts.isEmpty)
        }
    }

    @Test(
        "on the emulated keychain, the LAContext an authValidity window keeps is released when the app goes to the background, before any read; the next read prompts"
    )
    func backgroundReleasesTheWindowContext() async throws {
        let platform = ScriptedPlatform()
        let device = try LocalAuthenticationDevice(platform: platform)
        let emulator = SecItemEmulator(device: device)
        let keychain = try Keychain(database: SecItemKeychainDatabase(calls: emulator), device: device)
        try await keychain.setItem("token", "s3cret", SetOptions(accessControl: .biometryAny, authValidity: 300))
        #expect(try await keychain.getItem("token") == "s3cret")
        #expect(try await keychain.getItem("token") == "s3cret")
        #expect(platform.prompts.count == 1)
        // The emulator's call log keeps the queries it was given, contexts and all; a phone's keychain keeps none.
        emulator.resetCalls()
        #expect(platform.liveContexts == 1, "the window keeps the evaluated context")
        platform.goToBackground()
        #expect(platform.liveContexts == 0, "no evaluated context outlives the session in memory")
        #expect(try await keychain.getItem("token") == "s3cret")
        #expect(platform.prompts.count == 2)
    }

    private static func failure(_ call: () async throws(KeychainError) -> Void) async -> KeychainError? {
        do {
            try await call()
            return nil
        } catch {
            return error
        }
    }

    @Test("biometrics locked out at a new launch: the read fails with the lockout, the item stays")
    func lockoutKeepsItem() async throws {
        let database = InMemoryKeychainDatabase()
        let platform = ScriptedPlatform()
        let first = try Keychain(database: database, device: LocalAuthenticationDevice(platform: platform))
        try await first.setItem("token", "s3cret", SetOptions(accessControl: .biometryCurrentSet))
        platform.change {
            $0.canEvaluate[.deviceOwnerAuthenticationWithBiometrics] = .biometryLockout
            $0.answers = [.biometryLockout]
        }
        // A new launch: the domain state can't be read while locked out, and none was read before.
        let relaunched = try Keychain(database: database, device: LocalAuthenticationDevice(platform: platform))
        let error = await Self.failure { () throws(KeychainError) in _ = try await relaunched.getItem("token") }
        #expect(error?.code == .BIOMETRY_LOCKOUT)
        #expect(try await relaunched.hasItem("token"))
    }
}

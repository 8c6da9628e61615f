import ApexKeychain
import ApexKeychainApple
import Foundation
import Testing

/// Items with a constrained access control (`apple-secitem.md` §2.7, §3): what a read, an update and a delete
/// need, the keychain's own prompt, and the invalidation of `biometryCurrentSet` items.
@Suite("Emulator: access control")
struct EmulatorAccessControlTests {
    private static let biometry = SecAccessControlSpec(protection: "ak", flags: .biometryCurrentSet)
    private static let passcode = SecAccessControlSpec(protection: "ak", flags: .devicePasscode)

    /// A keychain with react-native-keychain's item `protected` (biometryCurrentSet) and `plain` (ck).
    private func rnkItems() -> (SimulatedDevice, SecItemEmulator) {
        let (device, keychain) = makeEmulator()
        let protected = RNK.add(
            service: "protected", username: "alice", password: "p1", protection: .accessControl(Self.biometry))
        #expect(keychain.add(protected) == .success)
        #expect(keychain.add(RNK.add(service: "plain", username: "bob", password: "p2")) == .success)
        return (device, keychain)
    }

    /// An evaluation of a simulated device's prompt for an item with `accessControl`.
    private func evaluation(_ accessControl: AccessControl) -> SimulatedDevice.Evaluation {
        SimulatedDevice.Evaluation(
            AuthenticationRequest(
                policy: .biometryOnly, prompt: Prompt(title: "Unlock"), service: "protected", key: "alice",
                accessControl: accessControl))
    }

    @Test("attribute-only reads need nothing: react-native-keychain's has and listing")
    func attributeReadsNeedNothing() {
        let (_, keychain) = rnkItems()
        #expect(keychain.copyMatching(RNK.has(service: "protected")) == (.success, .none))
        let listed = keychain.copyMatching(RNK.allServices())
        #expect(listed.result.list?.map { $0.attributes?[.service] } == [.string("protected"), .string("plain")])
        #expect(keychain.promptsShown == 0)
    }

    @Test("a data read with a non-interactive context or u_AuthUIF is errSecInteractionNotAllowed")
    func noUI() {
        let (_, keychain) = rnkItems()
        var query = search(service: "protected", [.returnData: .bool(true)])
        query[.authenticationContext] = .authenticationContext(.nonInteractive)
        #expect(keychain.copyMatching(query) == (.interactionNotAllowed, .none))
        query[.authenticationContext] = nil
        query[.authenticationUI] = .string("u_AuthUIF")
        #expect(keychain.copyMatching(query).status == .interactionNotAllowed)
        var plain = search(service: "plain", [.returnData: .bool(true)])
        plain[.authenticationContext] = .authenticationContext(.nonInteractive)
        #expect(keychain.copyMatching(plain).result == .data(bytes("p2")))
        #expect(keychain.promptsShown == 0)
    }

    @Test("u_AuthUIS skips the items that need the user")
    func skip() {
        let (_, keychain) = rnkItems()
        let listing: SecItemDictionary = [
            .itemClass: .string("genp"), .matchLimit: .string("m_LimitAll"), .returnAttributes: .bool(true),
            .returnData: .bool(true), .authenticationUI: .string("u_AuthUIS"), .synchronizable: .string("syna"),
        ]
        let listed = keychain.copyMatching(listing)
        #expect(listed.result.list?.map { $0.attributes?[.service] } == [.string("plain")])
        var one = listing
        one[.service] = .string("protected")
        #expect(keychain.copyMatching(one).status == .itemNotFound)
        #expect(keychain.promptsShown == 0)
    }

    @Test("a context that evaluated the item's access control reads the data without a prompt")
    func evaluatedContext() {
        let (_, keychain) = rnkItems()
        var query = search(service: "protected", [.returnData: .bool(true)])
        query[.authenticationContext] = .authenticationContext(.evaluated(evaluation(.biometryCurrentSet)))
        #expect(keychain.copyMatching(query).result == .data(bytes("p1")))
        #expect(keychain.promptsShown == 0)
        // One that evaluated another access control doesn't: the keychain evaluates it again, with a prompt.
        query[.authenticationContext] = .authenticationContext(.evaluated(evaluation(.passcode)))
        #expect(keychain.copyMatching(query).result == .data(bytes("p1")))
        #expect(keychain.promptsShown == 1)
        // Even with u_AuthUIS, a satisfied context reads the item.
        query[.authenticationContext] = .authenticationContext(.evaluated(evaluation(.biometryCurrentSet)))
        query[.authenticationUI] = .string("u_AuthUIS")
        #expect(keychain.copyMatching(query).result == .data(bytes("p1")))
    }

    @Test("the simulated device's evaluation has evaluated exactly its request's access control")
    func evaluationConformance() {
        let context: any LocalAuthenticationContext = evaluation(.biometryCurrentSetOrPasscode)
        let rnkFlags: AccessControlFlags = [.biometryCurrentSet, .or, .devicePasscode]
        #expect(context.hasEvaluated(SecAccessControlSpec(protection: "ak", flags: rnkFlags)))
        #expect(context.hasEvaluated(SecAccessControlSpec(protection: "cku", flags: rnkFlags)))
        #expect(!context.hasEvaluated(Self.biometry))
        #expect(!context.hasEvaluated(Self.passcode))
    }

    @Test("without a context the keychain shows its prompt: react-native-keychain's get with u_OpPrompt")
    func keychainPrompt() {
        let (_, keychain) = rnkItems()
        let get = keychain.copyMatching(RNK.get(service: "protected"))
        #expect(get.result.attributes?[.valueData] == .data(bytes("p1")))
        #expect(get.result.attributes?[.account] == .string("alice"))
        #expect(keychain.promptsShown == 1)
        let outcomes: [(AuthenticationResult, SecItemStatus)] = [
            (.canceled, .userCanceled), (.failed, .authFailed), (.notInteractive, .interactionNotAllowed),
            (.lockout, .authFailed), (.fallback, .authFailed), (.unavailable, .authFailed),
        ]
        for (outcome, status) in outcomes {
            keychain.promptOutcome = outcome
            #expect(keychain.copyMatching(RNK.get(service: "protected")) == (status, .none), "\(outcome)")
        }
        #expect(SecItemStatus.userCanceled.rawValue == -128 && SecItemStatus.authFailed.rawValue == -25293)
        #expect(keychain.promptsShown == 1 + outcomes.count)
        // A read of an item without access control shows none.
        _ = keychain.copyMatching(RNK.get(service: "plain"))
        #expect(keychain.promptsShown == 1 + outcomes.count)
    }

    @Test("one prompt of a call opens every item with the same access control")
    func onePromptPerCall() {
        let (_, keychain) = makeEmulator()
        for user in ["a", "b", "c"] {
            #expect(
                keychain.add(genericPassword(account: user, [.accessControl: .accessControl(Self.passcode)]))
                    == .success)
        }
        let all = keychain.copyMatching(search([.matchLimit: .string("m_LimitAll"), .returnData: .bool(true)]))
        #expect(all.result.list?.count == 3)
        #expect(keychain.promptsShown == 1)
    }

    @Test("updating such an item needs a satisfied context; deleting it needs nothing")
    func updateAndDelete() {
        let (_, keychain) = rnkItems()
        let change: SecItemDictionary = [.valueData: .data(bytes("p3"))]
        #expect(keychain.update(search(service: "protected"), change) == .interactionNotAllowed)
        var prompted = search(service: "protected")
        prompted[.operationPrompt] = .string("Unlock")
        #expect(keychain.update(prompted, change) == .interactionNotAllowed)
        var nonInteractive = search(service: "protected")
        nonInteractive[.authenticationContext] = .authenticationContext(.nonInteractive)
        #expect(keychain.update(nonInteractive, change) == .interactionNotAllowed)
        #expect(keychain.items.first?.data == bytes("p1"))
        #expect(keychain.promptsShown == 0)
        var evaluated = search(service: "protected")
        evaluated[.authenticationContext] = .authenticationContext(.evaluated(evaluation(.biometryCurrentSet)))
        #expect(keychain.update(evaluated, change) == .success)
        #expect(keychain.items.first?.data == bytes("p3"))
        #expect(keychain.delete(RNK.reset(service: "protected")) == .success)
        #expect(keychain.items.count == 1)
        #expect(keychain.promptsShown == 0)
    }

    /// §2.7: the item is invalidated; its attributes aren't sealed by the Secure Enclave key, so they still list,
    /// and only its data is gone.
    @Test(
        "a biometryCurrentSet item's data can't be read once the enrolled set changes, its attributes still list and it can be deleted; a biometryAny item stays"
    )
    func currentSetInvalidation() {
        let (device, keychain) = rnkItems()
        let any = SecAccessControlSpec(protection: "ak", flags: .biometryAny)
        #expect(keychain.add(Expo.set(key: "bio", value: "v", requireAuthentication: true)) == .success)
        #expect(keychain.add(genericPassword(service: "any", [.accessControl: .accessControl(any)])) == .success)
        #expect(keychain.items.count == 4)
        device.enrollBiometrics()
        // Attributes only: found, without a prompt.
        #expect(keychain.copyMatching(RNK.has(service: "protected")).status == .success)
        // The data: nothing to decrypt, so nothing found, whatever the context.
        #expect(keychain.copyMatching(Expo.get(key: "bio", requireAuthentication: true)).status == .itemNotFound)
        var evaluated = search(service: "protected")
        evaluated[.returnData] = .bool(true)
        evaluated[.authenticationContext] = .authenticationContext(.evaluated(evaluation(.biometryCurrentSet)))
        #expect(keychain.copyMatching(evaluated).status == .itemNotFound)
        #expect(keychain.promptsShown == 0)
        #expect(keychain.items.count == 4)
        #expect(keychain.delete(RNK.reset(service: "protected")) == .success)
        #expect(
            keychain.items.map { $0.attributes[.service] } == [.string("plain"), .string("app:auth"), .string("any")])
    }
}

import ApexKeychain
import ApexTestSupport
import Foundation
import Testing

/// The rules of page 004 Options that no feature's tests proved (see ``ConformanceTests``).
extension ConformanceTests {
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
}

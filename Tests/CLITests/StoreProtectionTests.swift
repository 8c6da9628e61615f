import Foundation
import Testing

/// Writes the store's device can't protect as asked are refused with the keychain's code, never weakened.
@Suite("store set: protection")
struct StoreProtectionTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    @Test("biometryAny on a phone without biometrics: exit 1 with BIOMETRY_NOT_AVAILABLE; nothing written")
    func biometryNotAvailable() async throws {
        let store = try await sandbox.initStore(device: "ios-no-biometrics")
        let result = try await sandbox.run(
            ["store", "set", "--store", store, "--access-control", "biometryAny", "k"], stdin: Data("v".utf8))
        #expect(result.status == 1)
        #expect(result.out == "")
        #expect(
            result.err == """
                apex-keychain: \(store): BIOMETRY_NOT_AVAILABLE: accessControl 'biometryAny' needs a biometric \
                sensor, and the device has none

                """)
        let get = try await sandbox.run(["store", "get", "--store", store, "k"])
        #expect(get.status == 1)
    }

    @Test("a refused write leaves the old item as it was")
    func refusedWriteKeepsOldItem() async throws {
        let store = try await sandbox.initStore(device: "ios-no-biometrics")
        try await sandbox.set(store, "k", "old")
        let result = try await sandbox.run(
            ["store", "set", "--store", store, "--access-control", "biometryCurrentSet", "k"], stdin: Data("new".utf8))
        #expect(result.status == 1)
        let get = try await sandbox.run(["store", "get", "--store", store, "k"])
        #expect(get.out == "old")
    }

    @Test(
        "each device refusal exits 1 and names its code",
        arguments: [
            ("ios-no-passcode", ["--access-control", "passcode"], "PASSCODE_NOT_SET"),
            ("android-10", ["--access-control", "biometryAnyOrPasscode"], "UNSUPPORTED"),
            ("android-10", ["--key-storage", "strongboxRequired"], "HARDWARE_UNAVAILABLE"),
            ("ios-no-passcode", ["--accessible", "whenPasscodeSetThisDeviceOnly"], "PASSCODE_NOT_SET"),
            // A key-file store's linux device has no passcode; only a passphrase store's has one.
            ("linux", ["--access-control", "biometryAny"], "PASSCODE_NOT_SET"),
            ("linux", ["--access-control", "passcode"], "PASSCODE_NOT_SET"),
        ])
    func refusals(_ device: String, _ options: [String], _ code: String) async throws {
        let store = try await sandbox.initStore(device: device)
        let result = try await sandbox.run(["store", "set", "--store", store] + options + ["k"], stdin: Data("v".utf8))
        #expect(result.status == 1)
        #expect(result.err.hasPrefix("apex-keychain: \(store): \(code): "))
    }

    @Test("a protection the phone can give is written and read back (its prompts succeed)")
    func protectedItemOnPhone() async throws {
        let store = try await sandbox.initStore(device: "ios")
        try await sandbox.set(store, "k", "behind Face ID", ["--access-control", "biometryCurrentSet"])
        let get = try await sandbox.run(["store", "get", "--store", store, "k"])
        #expect(get.status == 0)
        #expect(get.out == "behind Face ID")
    }

    @Test("an impossible combination is the core's INVALID_ARGUMENT: a usage error (64)")
    func invalidCombination() async throws {
        let store = try await sandbox.initStore(device: "ios")
        let result = try await sandbox.run(
            ["store", "set", "--store", store, "--synchronizable", "--accessible", "whenUnlockedThisDeviceOnly", "k"],
            stdin: Data("v".utf8))
        #expect(result.status == 64)
        #expect(
            result.err == """
                apex-keychain: \(store): INVALID_ARGUMENT: synchronizable items can't be 'whenUnlockedThisDeviceOnly'
                Run 'apex-keychain store set --help' for usage.

                """)
    }

    @Test("--key-storage on a store that is not an Android profile is a usage error (64)")
    func keyStorageNeedsAndroid() async throws {
        let store = try await sandbox.initStore()
        let result = try await sandbox.run(
            ["store", "set", "--store", store, "--key-storage", "tee", "k"], stdin: Data("v".utf8))
        #expect(result.status == 64)
        #expect(
            result.err == """
                apex-keychain: '--key-storage' applies to the Android device profiles; \(store) models 'linux'
                Run 'apex-keychain store set --help' for usage.

                """)
    }

    @Test("--auth-validity must be a whole number (64)")
    func authValidityNumber() async throws {
        let store = try await sandbox.initStore()
        let result = try await sandbox.run(
            ["store", "set", "--store", store, "--auth-validity", "soon", "k"], stdin: Data("v".utf8))
        #expect(result.status == 64)
        #expect(
            result.err == """
                apex-keychain: invalid value 'soon' for '--auth-validity <seconds>'; expected a whole number
                Run 'apex-keychain store set --help' for usage.

                """)
    }
}

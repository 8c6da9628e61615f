import ApexKeychain
import ApexTestSupport
import Foundation
import Testing

/// Options: their JSON form, the combinations the storage model forbids, how a write's and a read's options
/// fall back on the keychain's defaults, and which protection a read uses.
@Suite("Options")
struct OptionsTests {
    /// JSON that one of the option types must refuse with `INVALID_ARGUMENT`.
    struct BadJSON: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let json: String
        let decode: @Sendable (Data) throws -> Void

        init<T: Decodable & Sendable>(_: T.Type, _ json: String) {
            testDescription = "\(T.self) \(json)"
            self.json = json
            decode = { _ = try JSONDecoder().decode(T.self, from: $0) }
        }
    }

    /// A protection the storage model forbids.
    struct Impossible: Sendable, CustomTestStringConvertible {
        let testDescription: String
        var accessible: Accessible?
        var accessControl: AccessControl?
        var authValidity: Int?
        var synchronizable: Bool?

        var keychainOptions: KeychainOptions {
            KeychainOptions(
                accessible: accessible, accessControl: accessControl, authValidity: authValidity,
                synchronizable: synchronizable)
        }

        var setOptions: SetOptions {
            SetOptions(
                accessible: accessible, accessControl: accessControl, authValidity: authValidity,
                synchronizable: synchronizable)
        }

        static let all: [Impossible] =
            [
                Impossible(
                    testDescription: "biometryCurrentSet, authValidity 1", accessControl: .biometryCurrentSet,
                    authValidity: 1),
                Impossible(
                    testDescription: "biometryCurrentSetOrPasscode, authValidity 30",
                    accessControl: .biometryCurrentSetOrPasscode, authValidity: 30),
                Impossible(testDescription: "authValidity -1", authValidity: -1),
                Impossible(testDescription: "authValidity 2147483648", authValidity: 2_147_483_648),
            ]
            + Accessible.allCases.filter(\.isThisDeviceOnly).map {
                Impossible(testDescription: "synchronizable, \($0.rawValue)", accessible: $0, synchronizable: true)
            }
            + AccessControl.allCases.filter { $0 != .none }.map {
                Impossible(testDescription: "synchronizable, \($0.rawValue)", accessControl: $0, synchronizable: true)
            }
    }

    // MARK: JSON

    private func decode<T: Decodable>(_: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    @Test("KeychainOptions decode from JSON")
    func keychainOptionsDecode() throws {
        let json = """
            {"service":"svc","accessible":"afterFirstUnlock","accessControl":"biometryAny","authValidity":30,
             "synchronizable":false,"accessGroup":"TEAM.group","prompt":{"title":"T"},
             "android":{"keyStorage":"strongbox"}}
            """
        let expected = KeychainOptions(
            service: "svc", accessible: .afterFirstUnlock, accessControl: .biometryAny, authValidity: 30,
            synchronizable: false, accessGroup: "TEAM.group", prompt: Prompt(title: "T"),
            android: AndroidOptions(keyStorage: .strongbox))
        #expect(try decode(KeychainOptions.self, json) == expected)
        #expect(try decode(KeychainOptions.self, "{}") == KeychainOptions())
        #expect(try decode(KeychainOptions.self, #"{"service":null}"#) == KeychainOptions())
    }

    @Test("SetOptions decode from JSON")
    func setOptionsDecode() throws {
        let json = """
            {"accessible":"whenPasscodeSetThisDeviceOnly","accessControl":"passcode","authValidity":2147483647,
             "synchronizable":false,"android":{"keyStorage":"tee"},"label":""}
            """
        let expected = SetOptions(
            accessible: .whenPasscodeSetThisDeviceOnly, accessControl: .passcode, authValidity: 2_147_483_647,
            synchronizable: false, android: AndroidOptions(keyStorage: .tee), label: "")
        #expect(try decode(SetOptions.self, json) == expected)
    }

    @Test("GetOptions decode from JSON")
    func getOptionsDecode() throws {
        #expect(try decode(GetOptions.self, #"{"prompt":{"cancel":"No"}}"#) == GetOptions(prompt: Prompt(cancel: "No")))
        #expect(try decode(GetOptions.self, "{}") == GetOptions())
    }

    @Test("CredentialsOptions decode from JSON")
    func credentialsOptionsDecode() throws {
        let json = """
            {"server":"api.example.com","accessible":"afterFirstUnlockThisDeviceOnly",
             "accessControl":"biometryAnyOrPasscode","authValidity":5,"synchronizable":false,
             "android":{"keyStorage":"strongboxRequired"}}
            """
        let expected = CredentialsOptions(
            server: "api.example.com", accessible: .afterFirstUnlockThisDeviceOnly,
            accessControl: .biometryAnyOrPasscode, authValidity: 5, synchronizable: false,
            android: AndroidOptions(keyStorage: .strongboxRequired))
        #expect(try decode(CredentialsOptions.self, json) == expected)
    }

    @Test("Prompt decodes from JSON")
    func promptDecode() throws {
        let json = """
            {"title":"T","subtitle":"S","description":"D","cancel":"C","fallback":"F","confirmationRequired":true}
            """
        let expected = Prompt(
            title: "T", subtitle: "S", description: "D", cancel: "C", fallback: "F", confirmationRequired: true)
        #expect(try decode(Prompt.self, json) == expected)
    }

    @Test("AndroidOptions decode from JSON")
    func androidOptionsDecode() throws {
        #expect(
            try decode(AndroidOptions.self, #"{"keyStorage":"strongboxRequired"}"#)
                == AndroidOptions(keyStorage: .strongboxRequired))
        #expect(try decode(AndroidOptions.self, "{}") == AndroidOptions())
    }

    static let unknownNames: [BadJSON] = [
        BadJSON(KeychainOptions.self, #"{"servce":"svc"}"#),
        BadJSON(KeychainOptions.self, #"{"prompt":{"titel":"T"}}"#),
        BadJSON(SetOptions.self, #"{"label":"l","server":"s"}"#),
        BadJSON(GetOptions.self, #"{"label":"l"}"#),
        BadJSON(CredentialsOptions.self, #"{"label":"l"}"#),
        BadJSON(Prompt.self, #"{"title":"T","body":"B"}"#),
        BadJSON(AndroidOptions.self, #"{"keystorage":"tee"}"#),
    ]

    @Test("an unknown option name is INVALID_ARGUMENT", arguments: unknownNames)
    func unknownNameRefused(_ bad: BadJSON) async {
        #expect(await errorCode { try bad.decode(Data(bad.json.utf8)) } == .INVALID_ARGUMENT)
    }

    static let unknownValues: [BadJSON] = [
        BadJSON(KeychainOptions.self, #"{"accessible":"always"}"#),
        BadJSON(KeychainOptions.self, #"{"accessControl":"faceID"}"#),
        BadJSON(SetOptions.self, #"{"accessible":"WhenUnlocked"}"#),
        BadJSON(SetOptions.self, #"{"android":{"keyStorage":"secureElement"}}"#),
        BadJSON(CredentialsOptions.self, #"{"accessControl":"devicePasscode"}"#),
        BadJSON(AndroidOptions.self, #"{"keyStorage":"software"}"#),
    ]

    @Test("an unknown enum value is INVALID_ARGUMENT", arguments: unknownValues)
    func unknownValueRefused(_ bad: BadJSON) async {
        #expect(await errorCode { try bad.decode(Data(bad.json.utf8)) } == .INVALID_ARGUMENT)
    }

    static let wrongTypes: [BadJSON] = [
        BadJSON(KeychainOptions.self, #"{"authValidity":"30"}"#),
        BadJSON(SetOptions.self, #"{"authValidity":"30"}"#),
        BadJSON(CredentialsOptions.self, #"{"authValidity":"30"}"#),
    ]

    @Test("a value of the wrong type is INVALID_ARGUMENT", arguments: wrongTypes)
    func wrongTypeRefused(_ bad: BadJSON) async {
        #expect(await errorCode { try bad.decode(Data(bad.json.utf8)) } == .INVALID_ARGUMENT)
    }

    // MARK: Impossible combinations

    @Test(
        "an impossible combination of defaults is refused by Keychain.init", arguments: DatabaseKind.allCases,
        Impossible.all)
    func impossibleDefaultsRefused(kind: DatabaseKind, combination: Impossible) async throws {
        let f = try Fixture(kind)
        #expect(await errorCode { _ = try f.keychain(combination.keychainOptions) } == .INVALID_ARGUMENT)
    }

    @Test(
        "an impossible combination in a write is refused and the store is unchanged", arguments: DatabaseKind.allCases,
        Impossible.all)
    func impossibleWriteRefused(kind: DatabaseKind, combination: Impossible) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setItem("k", "old", SetOptions(label: "old"))
        let before = try f.allItems()
        #expect(await errorCode { try await kc.setItem("k", "new", combination.setOptions) } == .INVALID_ARGUMENT)
        #expect(
            await errorCode { try await kc.setBytes("fresh", Data([1]), combination.setOptions) } == .INVALID_ARGUMENT)
        #expect(try f.allItems() == before)
        #expect(try await kc.getItem("k") == "old")
        #expect(try await kc.getItemInfo("k")?.label == "old")
    }

    @Test("an empty accessGroup is refused by Keychain.init", arguments: DatabaseKind.allCases)
    func emptyAccessGroupRefused(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        #expect(await errorCode { _ = try f.keychain(KeychainOptions(accessGroup: "")) } == .INVALID_ARGUMENT)
    }

    @Test("authValidity 2147483647 is accepted", arguments: DatabaseKind.allCases)
    func largestAuthValidityAccepted(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain(KeychainOptions(accessControl: .passcode, authValidity: 2_147_483_647))
        try await kc.setItem("default", "v")
        try await kc.setItem("explicit", "v", SetOptions(accessControl: .biometryAny, authValidity: 2_147_483_647))
        #expect(try await kc.getAllKeys() == ["default", "explicit"])
    }

    // MARK: Defaults

    @Test(
        "without options a write is afterFirstUnlock, without access control, not synchronizable",
        arguments: DatabaseKind.allCases)
    func builtInDefaults(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setItem("k", "v")
        let info = try #require(try await kc.getItemInfo("k"))
        #expect(info.accessible == .afterFirstUnlock)
        #expect(info.accessControl == .none)
        #expect(info.synchronizable == false)
    }

    @Test("SetOptions override the keychain's defaults field by field", arguments: DatabaseKind.allCases)
    func setOptionsOverrideFieldByField(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let protected = try f.keychain(KeychainOptions(accessible: .afterFirstUnlock, accessControl: .biometryAny))
        try await protected.setItem("a", "v", SetOptions(accessible: .whenUnlockedThisDeviceOnly))
        let a = try #require(try await protected.getItemInfo("a"))
        #expect(a.accessible == .whenUnlockedThisDeviceOnly)
        #expect(a.accessControl == .biometryAny)
        try await protected.setItem("b", "v", SetOptions(accessControl: .passcode))
        let b = try #require(try await protected.getItemInfo("b"))
        #expect(b.accessible == .afterFirstUnlock)
        #expect(b.accessControl == .passcode)

        let synced = try f.keychain(
            KeychainOptions(service: "synced", accessible: .afterFirstUnlock, synchronizable: true))
        try await synced.setItem("c", "v", SetOptions(synchronizable: false))
        let c = try #require(try await synced.getItemInfo("c"))
        #expect(c.synchronizable == false)
        #expect(c.accessible == .afterFirstUnlock)
        try await synced.setItem("d", "v", SetOptions(accessible: .whenUnlocked))
        let d = try #require(try await synced.getItemInfo("d"))
        #expect(d.synchronizable == true)
        #expect(d.accessible == .whenUnlocked)
    }

    @Test("a write's authValidity overrides the keychain's", arguments: DatabaseKind.allCases)
    func setOptionsOverrideAuthValidity(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain(KeychainOptions(accessControl: .passcode, authValidity: 300))
        try await kc.setItem("k", "v", SetOptions(authValidity: 0))
        _ = try await kc.getItem("k")
        _ = try await kc.getItem("k")
        #expect(f.device.promptCount == 2)
    }

    // MARK: Prompts

    @Test("a read's prompt is merged field by field over the keychain's", arguments: DatabaseKind.allCases)
    func promptsMerge(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain(KeychainOptions(accessControl: .passcode, prompt: Prompt(title: "A", cancel: "C")))
        try await kc.setItem("k", "v")
        #expect(try await kc.getItem("k", GetOptions(prompt: Prompt(title: "B"))) == "v")
        #expect(f.device.prompts.last?.prompt == Prompt(title: "B", cancel: "C", confirmationRequired: true))
        #expect(try await kc.getItem("k") == "v")
        #expect(f.device.prompts.last?.prompt == Prompt(title: "A", cancel: "C", confirmationRequired: true))
    }

    // MARK: The protection a read uses

    @Test(
        "a read prompts for an item written with access control, whatever the reader's defaults",
        arguments: DatabaseKind.allCases)
    func readUsesItemsProtection(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let writer = try f.keychain(KeychainOptions(service: "s", accessControl: .passcode))
        let reader = try f.keychain(KeychainOptions(service: "s", accessControl: AccessControl.none))
        try await writer.setItem("k", "v")
        #expect(try await reader.getItem("k") == "v")
        #expect(f.device.promptCount == 1)
        #expect(f.device.prompts.last?.policy == .passcodeOnly)
    }

    @Test(
        "a read does not prompt for an item written without access control, whatever the reader's defaults",
        arguments: DatabaseKind.allCases)
    func readIgnoresReadersDefaults(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let writer = try f.keychain(KeychainOptions(service: "s", accessControl: AccessControl.none))
        let reader = try f.keychain(KeychainOptions(service: "s", accessControl: .biometryAny))
        try await writer.setItem("k", "v")
        f.device.answerNextPrompts(.canceled)
        #expect(try await reader.getItem("k") == "v")
        #expect(try await reader.getBytes("k") == Data("v".utf8))
        #expect(f.device.promptCount == 0)
    }
}

import ApexKeychain
import ApexTestSupport
import Testing

/// The rules of page 001 Storage model that no feature's tests proved (see ``ConformanceTests``).
extension ConformanceTests {
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
}

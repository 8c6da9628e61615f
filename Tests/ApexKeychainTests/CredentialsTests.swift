import ApexKeychain
import ApexTestSupport
import Foundation
import Testing

/// Credentials: a password stored as the value of `credentials` or `credentials:<server>`, its username as the
/// item's label.
@Suite("Credentials")
struct CredentialsTests {
    @Test("credentials without a server are stored under the key credentials", arguments: DatabaseKind.allCases)
    func defaultKey(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setCredentials(Credentials(username: "ada", password: "s3cret"))
        #expect(try await kc.getAllKeys() == ["credentials"])
        let info = try #require(try await kc.getItemInfo("credentials"))
        #expect(info.label == "ada")
        #expect(try await kc.getItem("credentials") == "s3cret")
        #expect(try await kc.getCredentials() == Credentials(username: "ada", password: "s3cret"))
    }

    @Test("credentials of a server are stored under credentials:<server>", arguments: DatabaseKind.allCases)
    func serverKey(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setCredentials(
            Credentials(username: "grace", password: "pw"), CredentialsOptions(server: "api.example.com"))
        #expect(try await kc.getAllKeys() == ["credentials:api.example.com"])
        #expect(try await kc.getItemInfo("credentials:api.example.com")?.label == "grace")
        #expect(try await kc.getItem("credentials:api.example.com") == "pw")
        #expect(try await kc.getCredentials() == nil)
        #expect(
            try await kc.getCredentials(CredentialsGetOptions(server: "api.example.com"))
                == Credentials(username: "grace", password: "pw"))
    }

    @Test("an empty username is INVALID_ARGUMENT", arguments: DatabaseKind.allCases)
    func emptyUsernameRefused(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        #expect(
            await errorCode { try await kc.setCredentials(Credentials(username: "", password: "pw")) }
                == .INVALID_ARGUMENT)
        #expect(try f.allItems().isEmpty)
    }

    @Test("an empty password is a password", arguments: DatabaseKind.allCases)
    func emptyPasswordAllowed(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setCredentials(Credentials(username: "ada", password: ""))
        #expect(try await kc.getCredentials() == Credentials(username: "ada", password: ""))
    }

    @Test("U+0000 in the username or the password is INVALID_ARGUMENT", arguments: DatabaseKind.allCases)
    func nulRefused(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setCredentials(Credentials(username: "old", password: "old"))
        let before = try f.allItems()
        #expect(
            await errorCode { try await kc.setCredentials(Credentials(username: "a\u{0}b", password: "pw")) }
                == .INVALID_ARGUMENT)
        #expect(
            await errorCode { try await kc.setCredentials(Credentials(username: "ada", password: "p\u{0}w")) }
                == .INVALID_ARGUMENT)
        #expect(try f.allItems() == before)
        #expect(try await kc.getCredentials() == Credentials(username: "old", password: "old"))
    }

    @Test("an empty server is INVALID_ARGUMENT", arguments: DatabaseKind.allCases)
    func emptyServerRefused(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        let credentials = Credentials(username: "ada", password: "pw")
        #expect(
            await errorCode { try await kc.setCredentials(credentials, CredentialsOptions(server: "")) }
                == .INVALID_ARGUMENT)
        #expect(
            await errorCode { _ = try await kc.getCredentials(CredentialsGetOptions(server: "")) }
                == .INVALID_ARGUMENT)
        #expect(
            await errorCode { try await kc.removeCredentials(CredentialsGetOptions(server: "")) } == .INVALID_ARGUMENT)
        #expect(try f.allItems().isEmpty)
    }

    @Test(
        "getCredentials of an item without a label is INVALID_ARGUMENT, without a prompt",
        arguments: DatabaseKind.allCases)
    func unlabelledItemRefused(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setItem("credentials", "pw", SetOptions(accessControl: .biometryAny))
        #expect(await errorCode { _ = try await kc.getCredentials() } == .INVALID_ARGUMENT)
        #expect(f.device.promptCount == 0)
        #expect(try await kc.getItem("credentials") == "pw")
        #expect(f.device.promptCount == 1)
    }

    @Test("getCredentials with no item returns nil", arguments: DatabaseKind.allCases)
    func missingIsNil(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setCredentials(
            Credentials(username: "ada", password: "pw"), CredentialsOptions(server: "a.example"))
        #expect(try await kc.getCredentials() == nil)
        #expect(try await kc.getCredentials(CredentialsGetOptions(server: "b.example")) == nil)
    }

    @Test("removeCredentials removes only that server's item", arguments: DatabaseKind.allCases)
    func removeOnlyThatServer(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        let credentials = Credentials(username: "ada", password: "pw")
        try await kc.setCredentials(credentials)
        try await kc.setCredentials(credentials, CredentialsOptions(server: "a.example"))
        try await kc.setCredentials(credentials, CredentialsOptions(server: "b.example"))
        try await kc.setItem("other", "v")
        try await kc.removeCredentials(CredentialsGetOptions(server: "a.example"))
        #expect(try await kc.getAllKeys() == ["credentials", "credentials:b.example", "other"])
        try await kc.removeCredentials()
        #expect(try await kc.getAllKeys() == ["credentials:b.example", "other"])
        try await kc.removeCredentials(CredentialsGetOptions(server: "missing.example"))
        #expect(try await kc.getAllKeys() == ["credentials:b.example", "other"])
    }
}

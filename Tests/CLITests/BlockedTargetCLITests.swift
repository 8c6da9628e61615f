import ApexMigration
import Foundation
import Testing

/// Issue 14, item 2: a `blocked` item shows the target it was meant for, so the user knows which key the app will
/// be missing; when its protection has no equivalent, the target says so instead of pretending one.
@Suite("migrate: blocked items show their intended target")
struct BlockedTargetCLITests {
    /// An objection item of react-native-keychain's, protected by an and-combination (biometry and passcode),
    /// which the package can't give.
    static let objection = """
        [
          {
            "access_control": "kSecAccessControlBiometryAny kSecAccessControlDevicePasscode And",
            "accessible_attribute": "kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly",
            "account": "sample-user",
            "data": "sample-password-0001",
            "dataHex": "73616d706c652d70617373776f72642d30303031",
            "entitlement_group": "A1B2C3D4E5.com.example.app",
            "item_class": "kSecClassGenericPassword",
            "service": "vault"
          }
        ]
        """

    @Test("migrate --format json: the item's target names service, key and kind, with null protection")
    func jsonTargetWithNullProtection() async throws {
        let sandbox = try Sandbox()
        let dump = try sandbox.write("keychain.json", Self.objection)
        let result = try await sandbox.run(["migrate", dump, "--bundle-id", "com.example.app", "--format", "json"])
        #expect(result.status == 0, "\(result.err)")
        let object = try #require(JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        let item = try #require((object["items"] as? [[String: Any]])?.first)
        #expect(item["action"] as? String == "blocked")
        #expect(item["reasonCode"] as? String == "noEquivalent")
        let target = try #require(item["target"] as? [String: Any], "\(item)")
        #expect(target["service"] as? String == "vault")
        #expect(target["key"] as? String == "credentials")
        #expect(target["kind"] as? String == "credentials")
        #expect(target["accessGroup"] is NSNull)
        #expect(
            target["accessible"] is NSNull && target["accessControl"] is NSNull && target["synchronizable"] is NSNull)
        // The bytes are what JSONEncoder writes for the same report.
        let report = try JSONDecoder().decode(MigrationReport.self, from: result.stdout)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        #expect(result.stdout == (try encoder.encode(report)) + Data("\n".utf8))
        #expect(!String(decoding: result.stdout, as: UTF8.self).contains("sample-password-0001"))
    }

    @Test("migrate text: the target cell says the protection has no equivalent")
    func textTarget() async throws {
        let sandbox = try Sandbox()
        let dump = try sandbox.write("keychain.json", Self.objection)
        let result = try await sandbox.run(
            ["migrate", dump, "--bundle-id", "com.example.app"], environment: ["COLUMNS": "200"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("vault/credentials [credentials, no equivalent protection]"), "\(result.out)")
        #expect(result.out.contains("blocked"))
    }
}

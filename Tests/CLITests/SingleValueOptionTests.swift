import Foundation
import Testing

/// Review: a single-value option given twice (`--store a --store b`, `--format json --format text`) was silently
/// last-wins, so a script that builds its command line from parts could act on the wrong store or print the
/// wrong format. It is a usage error now; repeatable options (`--service-map`) still repeat.
private let plist = sample("react-native-keychain/ios/keychain.plist")

@Suite("single-value options given twice")
struct SingleValueOptionTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    @Test(
        "a single-value option given twice is a usage error naming it, never repeating its values",
        arguments: [
            (["store", "list", "--store", "a.db", "--store", "b.db"], "store", "apex-keychain store list"),
            (["migrate", plist, "--format", "json", "--format", "text"], "format", "apex-keychain migrate"),
            (
                ["migrate", plist, "--bundle-id=one.secret", "--bundle-id", "two.secret"], "bundle-id",
                "apex-keychain migrate"
            ),
            (["inspect", plist, "--format", "json", "--format=json"], "format", "apex-keychain inspect"),
        ])
    func givenTwice(arguments: [String], option: String, command: String) async throws {
        let result = try await sandbox.run(arguments)
        #expect(result.status == 64)
        #expect(result.out == "")
        #expect(
            result.err == """
                apex-keychain: '--\(option)' was given more than once; it takes one value
                Run '\(command) --help' for usage.

                """)
        #expect(!result.err.contains("secret"))
    }

    @Test("repeatable options and repeated flags are still accepted")
    func repeatableStillRepeat() async throws {
        let result = try await sandbox.run([
            "migrate", plist, "--bundle-id", "com.example.sampleapp", "--service-map", "auth=login",
            "--service-map", "vault=safe", "--quiet", "--quiet", "--format", "json",
        ])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("\"service\" : \"safe\""))
    }
}

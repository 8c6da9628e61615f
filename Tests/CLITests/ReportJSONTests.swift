import ApexMigration
import Foundation
import Testing

/// The binary writes its JSON reports itself, without `JSONEncoder`; for every bundled sample and real-world dump
/// the bytes must be those `JSONEncoder` gives for the same report.
@Suite("migrate and inspect: JSON bytes")
struct ReportJSONTests {
    static let realWorld = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ApexDumpsTests/Fixtures/real-world")

    /// Every dump in `samples/` (the data folders as the CLI is given them) and the real-world fixtures the
    /// readers take; `conceal` is the real-world FacebookConceal pair, named as on the device.
    static let inputs = [
        "react-native-keychain/ios", "react-native-keychain/android", "expo-secure-store/ios",
        "expo-secure-store/android", "react-native-sensitive-info/ios", "react-native-sensitive-info/android",
        "expo-securestore-metocare-SecureStore.xml",
        "objection-ios-keychain-dump-ipewpew.json", "conceal",
    ]

    /// The path to give the CLI for an input.
    static func path(_ input: String, in sandbox: Sandbox) throws -> String {
        if input == "conceal" {
            let prefs = sandbox.url.appendingPathComponent("conceal/shared_prefs")
            try FileManager.default.createDirectory(at: prefs, withIntermediateDirectories: true)
            for name in ["RN_KEYCHAIN.xml", "crypto.KEY_256.xml"] {
                try FileManager.default.copyItem(
                    at: realWorld.appendingPathComponent("rnkeychain-conceal-eclipse7-\(name)"),
                    to: prefs.appendingPathComponent(name))
            }
            return sandbox.path("conceal")
        }
        if input.contains("/") { return sample(input) }
        return realWorld.appendingPathComponent(input).path
    }

    @Test("migrate --dry-run and inspect --format json write what JSONEncoder writes", arguments: inputs)
    func matchesJSONEncoder(input: String) async throws {
        let sandbox = try Sandbox()
        let path = try Self.path(input, in: sandbox)
        #expect(FileManager.default.fileExists(atPath: path), "\(path) is missing")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        for arguments in [
            ["migrate", path, "--dry-run", "--format", "json", "--include-labels"],
            ["migrate", path, "--dry-run", "--format", "json"], ["inspect", path, "--format", "json"],
        ] {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 0 || result.status == 1, "\(arguments): \(result.err)")
            let report = try JSONDecoder().decode(MigrationReport.self, from: result.stdout)
            #expect(!report.items.isEmpty, "\(arguments)")
            var expected = try encoder.encode(report)
            expected.append(UInt8(ascii: "\n"))
            #expect(result.stdout == expected, "\(arguments)")
        }
    }
}

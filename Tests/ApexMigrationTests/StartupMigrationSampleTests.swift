import Foundation
import Testing

/// `samples/StartupMigration`, built with the tests, run as an app would run it: the first launch migrates, the
/// next costs one marker lookup.
@Suite("Start-up migration sample")
struct StartupMigrationSampleTests {
    /// The built sample, in the products folder beside the test bundle.
    static func binary() -> URL? {
        for start in [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])] {
            var folder = start.resolvingSymlinksInPath()
            for _ in 0..<6 {
                let candidate = folder.appendingPathComponent("StartupMigration")
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
                folder = folder.deletingLastPathComponent()
            }
        }
        return nil
    }

    /// The package's root, from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test(
        "the first launch migrates the sample's expo items and the next retries only the pending one, in memory and in the emulated iPhone keychain"
    )
    func firstThenNext() throws {
        let binary = try #require(Self.binary(), "the StartupMigration sample is built with the tests")
        let process = Process()
        process.executableURL = binary
        process.arguments = [Self.root.appendingPathComponent("samples/expo-secure-store/ios/keychain.plist").path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        #expect(process.terminationStatus == 0)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines.first?.hasPrefix("first launch: migrated: ") == true)
        #expect(lines.first?.contains(" 0 failed") == true)
        #expect(lines.first?.contains("migrated: 0 verified") == false, "the sample holds expo items to migrate")
        // The sample's biometric item (expo's `:auth` service) needs a prompt, which a launch never shows: it
        // stays pending, and the next launch tries it again (MigrationPolicy.protectedSourceItems).
        #expect(lines.dropFirst().first == "next launch: migrated: 0 verified, 0 failed, 0 conflicts, 1 blocked")
        // The same items in the emulated iPhone keychain, through MigrateOnIOS.swift's Migration.onDevice: the same
        // four migrated, the same biometric item pending.
        #expect(lines.dropFirst(2).first == "on an iPhone: migrated: 4 verified, 1 blocked")
        #expect(lines.last == "next launch on an iPhone: migrated: 0 verified, 1 blocked")
    }
}

import Foundation
import Testing

/// A migration killed at any point loses nothing, and the next run completes it: after a `migrate` into a store
/// is SIGKILLed at a seed-chosen moment, a second run finishes, and a third finds every item in place.
@Suite("migrate: killed and resumed", .serialized)
struct MigrateCrashTests {
    static let plist = sample("react-native-keychain/ios/keychain.plist")

    /// Starts `apex-keychain migrate` into `store` and kills it after `delay`.
    static func killedRun(store: String, in sandbox: Sandbox, after delay: Duration) async throws {
        let binary = try #require(CLIBinary.url)
        let process = Process()
        process.executableURL = binary
        process.arguments = ["migrate", plist, "--bundle-id", "com.example.sampleapp", "--store", store, "--quiet", "--format", "json"]
        process.currentDirectoryURL = sandbox.url
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try await Task.sleep(for: delay)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    static func report(_ result: CLIResult) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
    }

    @Test("a migrate killed at a seed-chosen point is completed by the next run, and a third run finds all in place",
          arguments: 1...8)
    func killedThenResumed(seed: Int) async throws {
        let sandbox = try Sandbox()
        let store = try await sandbox.initStore(device: "ios")
        // Deterministic delays from 2 to 58 ms: before, during and after the writes of a run of a few ms.
        try await Self.killedRun(store: store, in: sandbox, after: .milliseconds(2 + (seed * 37) % 57))

        let resumed = try await sandbox.run(
            ["migrate", Self.plist, "--bundle-id", "com.example.sampleapp", "--store", store, "--format", "json"])
        #expect(resumed.status == 0, "\(resumed.err)")
        let summary = try #require(try Self.report(resumed)["summary"] as? [String: Int])
        #expect(summary["failed"] == 0)
        #expect(summary["conflict"] == 0, "a half-finished run must not leave items that conflict with their own source")

        let third = try await sandbox.run(
            ["migrate", Self.plist, "--bundle-id", "com.example.sampleapp", "--store", store, "--format", "json"])
        #expect(third.status == 0)
        let after = try #require(try Self.report(third)["summary"] as? [String: Int])
        #expect(after["create"] == 0)
        #expect(after["exists"] == (summary["create"] ?? 0) + (summary["exists"] ?? 0))
        #expect(after["written"] == 0)
    }
}

import Foundation
import Testing

/// `migrate --store` without `--bundle-id` takes the app's bundle id from the store (`store init --bundle-id`),
/// as the store's own default service does, instead of inferring it from the dump's access groups.
@Suite("migrate: the store's bundle id")
struct StoreBundleIDTests {
    /// The notes of every item of a dry run of react-native-keychain's iOS sample into a new `ios` store.
    func notes(storeBundleID: String?, _ extra: [String] = []) async throws -> [String] {
        let sandbox = try Sandbox()
        let store = sandbox.path("store.db")
        let initialised = try await sandbox.run(
            ["store", "init", "--store", store, "--device", "ios"]
                + (storeBundleID.map { ["--bundle-id", $0] } ?? []))
        try #require(initialised.status == 0, "\(initialised.err)")
        let result = try await sandbox.run(
            [
                "migrate", sample("react-native-keychain/ios/keychain.plist"), "--store", store, "--dry-run",
                "--format",
                "json",
            ] + extra)
        try #require(result.status == 0 || result.status == 1, "\(result.err)")
        let report = try #require(
            JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any])
        let items = try #require(report["items"] as? [[String: Any]])
        return items.flatMap { ($0["notes"] as? [String]) ?? [] }
    }

    @Test("a store made with --bundle-id gives the app's bundle id; nothing is inferred from access groups")
    func storeBundleIDIsTheDefault() async throws {
        let other = try await notes(storeBundleID: "com.other.app")
        #expect(!other.contains { $0.contains("inferred from access group") }, "\(other)")
        #expect(other.contains { $0.contains("which is not the app's default group") }, "\(other)")
        // The store's bundle id is the one the sample's access group names: the items need no note about it.
        let matching = try await notes(storeBundleID: "com.example.sampleapp")
        #expect(!matching.contains { $0.contains("inferred from access group") || $0.contains("default group") })
    }

    @Test("--bundle-id wins over the store's; a store without one leaves the bundle id inferred, with a note")
    func optionAndInference() async throws {
        let given = try await notes(storeBundleID: "com.other.app", ["--bundle-id", "com.example.sampleapp"])
        #expect(!given.contains { $0.contains("default group") || $0.contains("inferred") }, "\(given)")
        let inferred = try await notes(storeBundleID: nil)
        #expect(inferred.contains { $0.contains("inferred from access group") }, "\(inferred)")
    }

    @Test(
        "a --bundle-id other than the one the store was made with is used, with a warning naming both and where its items go"
    )
    func mismatchWarns() async throws {
        let sandbox = try Sandbox()
        let store = sandbox.path("store.db")
        let initialised = try await sandbox.run(
            ["store", "init", "--store", store, "--device", "ios", "--bundle-id", "com.example.app"])
        try #require(initialised.status == 0)
        let migrate = ["migrate", sample("react-native-keychain/ios/keychain.plist"), "--store", store, "--dry-run"]
        let other = try await sandbox.run(migrate + ["--bundle-id", "com.example.sampleapp"])
        #expect(other.status == 0)
        #expect(
            other.messages
                == "warning: --bundle-id 'com.example.sampleapp' is not the bundle id of \(store) ('com.example.app'): "
                + "the app's default-service items go to service 'com.example.sampleapp', where 'store list' looks only "
                + "with --service\n")
        let same = try await sandbox.run(migrate + ["--bundle-id", "com.example.app"])
        #expect(same.messages == "", "the store's own bundle id: no warning")
        let quiet = try await sandbox.run(migrate + ["--bundle-id", "com.example.sampleapp", "--quiet"])
        #expect(quiet.messages == "")
        // A store made without --bundle-id has no bundle id of its own to differ from.
        let plain = try await sandbox.initStore("plain.db", device: "ios")
        let unset = try await sandbox.run(
            ["migrate", sample("react-native-keychain/ios/keychain.plist"), "--store", plain, "--dry-run"]
                + ["--bundle-id", "com.example.sampleapp"])
        #expect(unset.messages == "")
    }
}

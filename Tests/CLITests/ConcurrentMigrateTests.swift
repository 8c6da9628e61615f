import Foundation
import Testing

/// Review, "Concurrent migrations overwrite each other and both say verified": two `migrate` runs with different
/// dumps into one store both reported `create (verified)` for the same keys, and the store held a mix. One
/// migration of a store runs at a time now (the second waits, then plans against what the first wrote), and a
/// write happens only if its key still holds what the plan saw.
@Suite("migrate: concurrent runs", .serialized)
struct ConcurrentMigrateTests {
    /// A react-native-keychain dump of `count` services, each with one generic password whose value names `run`.
    static func dump(run: String, count: Int, in sandbox: Sandbox) throws -> String {
        let genp: [[String: Any]] = (0..<count).map { index in
            [
                "acct": "user", "agrp": "A1B2C3D4E5.com.example.app", "pdmn": "ck", "svce": "svc-\(index)",
                "v_Data": Data("\(run)-secret-\(index)".utf8),
            ]
        }
        let data = try PropertyListSerialization.data(fromPropertyList: ["genp": genp], format: .binary, options: 0)
        return try sandbox.write("\(run).plist", data)
    }

    @Test(
        "two concurrent migrations of different dumps: every item ends as one run's value, and that run alone says verified",
        arguments: 1...3)
    func twoRuns(round: Int) async throws {
        let sandbox = try Sandbox()
        let store = try await sandbox.initStore(device: "ios")
        let count = 40
        let runs = ["alpha", "beta"]
        let dumps = try runs.map { try Self.dump(run: $0, count: count, in: sandbox) }
        let results = try await withThrowingTaskGroup(of: (Int, CLIResult).self) { group in
            for (index, dump) in dumps.enumerated() {
                group.addTask {
                    (index, try await sandbox.run(["migrate", dump, "--store", store, "--format", "json", "--quiet"]))
                }
            }
            var results: [Int: CLIResult] = [:]
            for try await (index, result) in group { results[index] = result }
            return results
        }
        var verifiedBy: [String: [String]] = [:]
        for (index, run) in runs.enumerated() {
            let result = try #require(results[index])
            try #require(result.status == 0 || result.status == 1, "\(run) exited \(result.status): \(result.err)")
            let items = try #require(try jsonObject(result)["items"] as? [[String: Any]])
            #expect(items.count == count)
            for item in items {
                let service = try #require((item["target"] as? [String: Any])?["service"] as? String)
                switch (item["action"] as? String, item["result"] as? String) {
                case ("create", "verified"): verifiedBy[service, default: []].append(run)
                case ("conflict", nil): break
                case let other: Issue.record("\(run) \(service): \(other)")
                }
            }
        }
        for index in 0..<count {
            let service = "svc-\(index)"
            let winners = verifiedBy[service] ?? []
            #expect(winners.count == 1, "\(service): verified by \(winners)")
            let value = try await sandbox.run(["store", "get", "--store", store, "--service", service, "credentials"])
            #expect(value.status == 0)
            if let winner = winners.first { #expect(value.out == "\(winner)-secret-\(index)", "\(service)") }
        }
    }
}

import Foundation
import Testing

/// `store info`: the item's attributes as aligned text or JSON, never its value.
@Suite("store info")
struct StoreInfoTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// The output's lines, with the `created` and `modified` values checked for shape and replaced by `<date>`.
    func normalized(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            for name in ["created:       ", "modified:      "] where line.hasPrefix(name) {
                let value = line.dropFirst(name.count).drop { $0 == " " }
                return isISO8601(value) ? name + " <date>" : String(line)
            }
            return String(line)
        }.joined(separator: "\n")
    }

    @Test("text: aligned name: value lines, '(none)' for no label, ISO 8601 UTC dates")
    func text() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "api-token", canary)
        let result = try await sandbox.run(["store", "info", "--store", store, "api-token"])
        #expect(result.status == 0)
        #expect(result.err == "")
        #expect(
            normalized(result.out) == """
                key:            api-token
                label:          (none)
                accessible:     afterFirstUnlock
                accessControl:  none
                synchronizable: false
                created:        <date>
                modified:       <date>

                """)
        #expect(!result.out.contains(canary))
    }

    @Test("text: the label and the protection asked for are shown")
    func labelAndProtection() async throws {
        let store = try await sandbox.initStore(device: "ios")
        try await sandbox.set(
            store, "k", "v",
            ["--label", "Work account", "--accessible", "afterFirstUnlock", "--synchronizable"])
        let result = try await sandbox.run(["store", "info", "--store", store, "k"])
        #expect(result.status == 0)
        #expect(
            normalized(result.out) == """
                key:            k
                label:          Work account
                accessible:     afterFirstUnlock
                accessControl:  none
                synchronizable: true
                created:        <date>
                modified:       <date>

                """)
        try await sandbox.set(store, "empty-label", "v", ["--label", ""])
        let empty = try await sandbox.run(["store", "info", "--store", store, "empty-label"])
        #expect(empty.out.contains("\nlabel:          \"\"\n"))
    }

    @Test("text: Android profiles show the security level")
    func androidSecurityLevel() async throws {
        let store = try await sandbox.initStore(device: "android")
        try await sandbox.set(store, "k", "v", ["--key-storage", "strongbox", "--access-control", "biometryAny"])
        let result = try await sandbox.run(["store", "info", "--store", store, "k"])
        #expect(result.status == 0)
        #expect(
            normalized(result.out) == """
                key:            k
                label:          (none)
                accessible:     afterFirstUnlock
                accessControl:  biometryAny
                synchronizable: false
                created:        <date>
                modified:       <date>
                securityLevel:  strongbox

                """)
    }

    @Test("--format json: the ItemInfo with sorted keys, dates in milliseconds matching the text")
    func json() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "k", canary, ["--label", "me", "--accessible", "afterFirstUnlockThisDeviceOnly"])
        let result = try await sandbox.run(["store", "info", "--store", store, "k", "--format", "json"])
        #expect(result.status == 0)
        #expect(result.err == "")
        let lines = result.out.split(separator: "\n", omittingEmptySubsequences: false)
        let dateLines = lines.filter { $0.hasPrefix("  \"createdAt\" : ") || $0.hasPrefix("  \"modifiedAt\" : ") }
        #expect(dateLines.count == 2)
        #expect(dateLines.allSatisfy { $0.wholeMatch(of: #/  "(created|modified)At" : \d{13},/#) != nil })
        let golden = """
            {
              "accessControl" : "none",
              "accessible" : "afterFirstUnlockThisDeviceOnly",
              "key" : "k",
              "label" : "me",
              "synchronizable" : false
            }

            """
        #expect(lines.filter { !dateLines.contains($0) }.joined(separator: "\n") == golden)

        let object = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        let created = try #require(object["createdAt"] as? Int)
        let now = Int(Date().timeIntervalSince1970 * 1000)
        #expect(abs(now - created) < 120_000)
        let text = try await sandbox.run(["store", "info", "--store", store, "k"])
        let iso = Date(timeIntervalSince1970: Double(created) / 1000)
            .formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
        #expect(text.out.contains("\ncreated:        \(iso)\n"))
        #expect(!result.out.contains(canary))
    }

    @Test("info of a missing key exits 1 with the same message as get")
    func missing() async throws {
        let store = try await sandbox.initStore()
        let result = try await sandbox.run(["store", "info", "--store", store, "nope", "--format", "json"])
        #expect(result.status == 1)
        #expect(result.out == "")
        #expect(result.err == "apex-keychain: no item 'nope' in service 'apex-keychain' of \(store)\n")
    }
}

/// Stores of the phone profiles stamped every item with 2026-01-01T00:00:00Z and never moved `modified`; their
/// device follows the system clock now (tests that need fixed dates give `SimulatedDevice` a `now`).
@Suite("store info: real dates")
struct StoreRealDatesTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    @Test(
        "an item of an ios or android store is dated now, and a rewrite moves its modified date",
        arguments: ["ios", "android"])
    func realDates(device: String) async throws {
        let store = try await sandbox.initStore(device: device)
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        try await sandbox.set(store, "k", "v")
        func info() async throws -> [String: Any] {
            let result = try await sandbox.run(["store", "info", "--store", store, "--format", "json", "k"])
            return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        }
        let first = try await info()
        let created = try #require(first["createdAt"] as? Int64)
        #expect(created >= before - 1000 && created <= Int64(Date().timeIntervalSince1970 * 1000) + 1000)
        try await Task.sleep(for: .milliseconds(20))
        try await sandbox.set(store, "k", "w")
        let second = try await info()
        #expect(second["createdAt"] as? Int64 == created)
        #expect((second["modifiedAt"] as? Int64 ?? 0) > created)
    }
}

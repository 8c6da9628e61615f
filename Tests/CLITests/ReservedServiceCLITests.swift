import Foundation
import Testing

/// Issue 28: the migration's own service (`apex-keychain.migration`, its ledger) could be written from outside. A
/// `--service-map` or `--bundle-id` sent items there, and `store set` wrote there: one such item made every later
/// migration of the store fail, another (`done:default`) marked an app's start-up migration complete before it
/// ever ran; `store list --all-services` hid them all. The flags refuse it (64, naming the flag); `store set` and
/// `store remove` refuse it without `--force`; `--all-services` lists its items, marked as the migration's records.
@Suite("the migration's reserved service")
struct ReservedServiceCLITests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let ledger = "apex-keychain.migration"
    static let plist = sample("react-native-keychain/ios/keychain.plist")

    /// A phone store into which the sample was migrated.
    func migratedStore() async throws -> String {
        let store = try await sandbox.initStore(device: "ios")
        let migrated = try await sandbox.run(
            ["migrate", Self.plist, "--store", store, "--bundle-id", "com.example.sampleapp", "--quiet"])
        try #require(migrated.status == 0, "\(migrated.err)")
        return store
    }

    @Test(
        "migrate refuses a --service-map into the reserved service (64), naming the flag, with or without a store",
        arguments: ["auth=apex-keychain.migration", "=apex-keychain.migration"])
    func serviceMapRefused(_ mapping: String) async throws {
        let store = try await sandbox.initStore(device: "ios")
        for extra in [[], ["--store", store], ["--store", store, "--dry-run"]] {
            let result = try await sandbox.run(["migrate", Self.plist, "--service-map", mapping] + extra)
            #expect(result.status == 64, "\(extra): \(result.err)")
            #expect(result.out == "")
            #expect(
                result.err.hasPrefix(
                    "apex-keychain: '--service-map \(mapping)': the service '\(Self.ledger)' holds the migration's "
                        + "records; map to another service"), "\(result.err)")
        }
        #expect(try await sandbox.run(["store", "list", "--store", store, "--all-services"]).out == "")
    }

    @Test("migrate refuses --bundle-id equal to the reserved service (64), naming the flag")
    func bundleIDRefused() async throws {
        let store = try await sandbox.initStore(device: "ios")
        for extra in [[], ["--store", store]] {
            let result = try await sandbox.run(["migrate", Self.plist, "--bundle-id", Self.ledger] + extra)
            #expect(result.status == 64, "\(extra): \(result.err)")
            #expect(result.out == "")
            #expect(
                result.err.hasPrefix(
                    "apex-keychain: '--bundle-id' can't be '\(Self.ledger)': that service holds the migration's "
                        + "records"), "\(result.err)")
        }
        #expect(try await sandbox.run(["store", "list", "--store", store, "--all-services"]).out == "")
    }

    @Test("store set refuses the reserved service without --force (64) and writes nothing; --force writes")
    func setNeedsForce() async throws {
        // Before, `done:default` written there marked the store's migration complete before it ever ran.
        let store = try await sandbox.initStore(device: "ios")
        let ledger = ["--service", Self.ledger]
        let refused = try await sandbox.run(
            ["store", "set", "--store", store] + ledger + ["done:default"], stdin: Data("1".utf8))
        #expect(refused.status == 64)
        #expect(refused.out == "")
        #expect(
            refused.err == """
                apex-keychain: the service '\(Self.ledger)' holds the migration's records: an item written there \
                can stop later migrations of the store or mark one complete that never ran; pass --force to write \
                it anyway
                Run 'apex-keychain store set --help' for usage.

                """)
        #expect(try await sandbox.run(["store", "list", "--store", store] + ledger).out == "")
        // The migration still runs: nothing was marked.
        let migrated = try await sandbox.run(
            ["migrate", Self.plist, "--store", store, "--bundle-id", "com.example.sampleapp", "--format", "json"])
        #expect(migrated.status == 0, "\(migrated.err)")
        #expect((try jsonObject(migrated)["summary"] as? [String: Int])?["verified"] == 10)
        let forced = try await sandbox.run(
            ["store", "set", "--store", store, "--force"] + ledger + ["planted"], stdin: Data("1".utf8))
        #expect(forced.status == 0, "\(forced.err)")
        #expect(
            try await sandbox.run(["store", "list", "--store", store] + ledger).out.split(separator: "\n")
                .contains("planted"))
    }

    @Test("store set refuses the reserved service by its exact name: a service that only starts like it is written")
    func setOnlyTheReservedName() async throws {
        let store = try await sandbox.initStore(device: "ios")
        let refused = try await sandbox.run(
            ["store", "set", "--store", store, "--service", "apex-keychain.migration", "k"], stdin: Data("v".utf8))
        #expect(refused.status == 64)
        let other = try await sandbox.run(
            ["store", "set", "--store", store, "--service", "apex-keychain.migration2", "k"], stdin: Data("v".utf8))
        #expect(other.status == 0, "\(other.err)")
    }

    @Test("store remove refuses the reserved service without --force (64) and removes nothing; --force removes")
    func removeNeedsForce() async throws {
        let store = try await migratedStore()
        let ledger = ["--service", Self.ledger]
        let before = try await sandbox.run(["store", "list", "--store", store] + ledger)
        #expect(before.out.split(separator: "\n").contains("key:default"))
        let refused = try await sandbox.run(["store", "remove", "--store", store] + ledger + ["key:default"])
        #expect(refused.status == 64)
        #expect(refused.out == "")
        #expect(
            refused.err.hasPrefix(
                "apex-keychain: the service '\(Self.ledger)' holds the migration's records: without them a later "
                    + "migration can't tell the items it wrote from other items; pass --force to remove it anyway"),
            "\(refused.err)")
        #expect(try await sandbox.run(["store", "list", "--store", store] + ledger).out == before.out)
        let forced = try await sandbox.run(["store", "remove", "--store", store, "--force"] + ledger + ["key:default"])
        #expect(forced.status == 0, "\(forced.err)")
        #expect(
            !(try await sandbox.run(["store", "list", "--store", store] + ledger).out.split(separator: "\n")
                .contains("key:default")))
    }

    @Test("list --all-services shows the reserved service's items, and stderr marks them as the migration's records")
    func allServicesShowsTheLedger() async throws {
        let store = try await migratedStore()
        // An item put there from outside (as a dump or an old version of the tool could): it must be seen.
        try #require(
            try await sandbox.run(
                ["store", "set", "--store", store, "--force", "--service", Self.ledger, "planted"],
                stdin: Data("x".utf8)
            ).status == 0)
        let ledgerKeys = try await sandbox.run(["store", "list", "--store", store, "--service", Self.ledger])
        let keys = ledgerKeys.out.split(separator: "\n")
        #expect(keys.contains("planted"))
        let all = try await sandbox.run(["store", "list", "--store", store, "--all-services"])
        #expect(all.status == 0)
        let lines = all.out.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        for key in keys { #expect(lines.contains("\(Self.ledger)\t\(key)"), "\(key)") }
        #expect(lines.contains("auth\tcredentials"))
        #expect(lines.count == keys.count + 10)
        #expect(
            all.err
                == "note: service '\(Self.ledger)' holds the migration's records (\(keys.count) items; only 'migrate' "
                + "and an app's start-up migration write there)\n")
    }
}

import Foundation
import Testing

/// Issue 14, item 15: after a migration, `store list` says where the items are; `store init --bundle-id` makes the
/// app's service the default; the migration's ledger is listed by `list --all-services` and kept from `clear`;
/// `clear` says how many items it removed.
@Suite("store list and clear after a migration")
struct StoreListClearTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let plist = sample("react-native-keychain/ios/keychain.plist")

    /// The services and keys the react-native-keychain iOS sample migrates to, as `list --all-services` prints them.
    static let migrated = """
        auth\tcredentials
        cloud\tcredentials
        com.example.sampleapp\tcredentials
        com.example.sampleapp\tcredentials:https://api.example.com:8443
        com.example.sampleapp\tcredentials:https://example.com
        legacy\tcredentials
        passcode-only\tcredentials
        pin\tcredentials
        session:v2\tcredentials
        vault\tcredentials

        """

    /// A phone store into which the sample was migrated.
    func migratedStore(_ initOptions: [String] = []) async throws -> String {
        let store = sandbox.path("store.db")
        let created = try await sandbox.run(["store", "init", "--store", store, "--device", "ios"] + initOptions)
        try #require(created.status == 0, "\(created.err)")
        let migrated = try await sandbox.run(["migrate", Self.plist, "--store", store, "--quiet"])
        try #require(migrated.status == 0, "\(migrated.err)")
        return store
    }

    @Test("list of an empty default service says on stderr how many items the other services hold; stdout stays empty")
    func listSaysWhereItemsAre() async throws {
        let store = try await migratedStore()
        let list = try await sandbox.run(["store", "list", "--store", store])
        #expect(list.status == 0)
        #expect(list.out == "")
        #expect(
            list.err
                == "no items in service 'com.example.app'; 10 items in 8 other services: list them with --all-services\n"
        )
        let one = try await sandbox.run(["store", "list", "--store", store, "--service", "nothing-here"])
        #expect(
            one.err
                == "no items in service 'nothing-here'; 10 items in 8 other services: list them with --all-services\n")
        let auth = try await sandbox.run(["store", "list", "--store", store, "--service", "auth"])
        #expect(auth.out == "credentials\n")
        #expect(auth.err == "")
    }

    @Test("list in a store with no item at all says so")
    func listOfAnEmptyStore() async throws {
        let store = try await sandbox.initStore()
        let list = try await sandbox.run(["store", "list", "--store", store])
        #expect(list.out == "")
        #expect(list.err == "no items in service 'apex-keychain'\n")
        let all = try await sandbox.run(["store", "list", "--store", store, "--all-services"])
        #expect(all.out == "")
        #expect(all.err == "no items in \(store)\n")
        try await sandbox.set(store, "k", "v", ["--service", "other"])
        let one = try await sandbox.run(["store", "list", "--store", store])
        #expect(
            one.err == "no items in service 'apex-keychain'; 1 item in 1 other service: list it with --all-services\n")
    }

    @Test("list --all-services lists the migration's records in their place among the services (issue 28)")
    func ledgerListed() async throws {
        let store = try await migratedStore()
        let ledger = try await sandbox.run(["store", "list", "--store", store, "--service", "apex-keychain.migration"])
        let keys = ledger.out.split(separator: "\n")
        #expect(keys.contains("key:default"))
        let all = try await sandbox.run(["store", "list", "--store", store, "--all-services"])
        #expect(all.status == 0)
        // Sorted by service: 'apex-keychain.migration' comes before 'auth'.
        #expect(all.out == keys.map { "apex-keychain.migration\t\($0)\n" }.joined() + Self.migrated)
    }

    @Test("init --bundle-id makes the app's service the default: list shows the migrated items, set and get use it")
    func bundleIDIsTheDefaultService() async throws {
        let store = try await migratedStore(["--bundle-id", "com.example.sampleapp"])
        let list = try await sandbox.run(["store", "list", "--store", store])
        #expect(list.out == "credentials\ncredentials:https://api.example.com:8443\ncredentials:https://example.com\n")
        #expect(list.err == "")
        try await sandbox.set(store, "api-token", "t")
        let all = try await sandbox.run(["store", "list", "--store", store, "--all-services"])
        #expect(all.out.contains("com.example.sampleapp\tapi-token\n"))
        #expect(try await sandbox.run(["store", "get", "--store", store, "api-token"]).out == "t")
    }

    @Test(
        "init --bundle-id prints the default service, on every profile, and keeps it in the store",
        arguments: ["linux", "android", "ios-no-passcode"])
    func bundleIDKept(_ device: String) async throws {
        let store = sandbox.path("\(device).db")
        let created = try await sandbox.run(
            ["store", "init", "--store", store, "--device", device, "--bundle-id", "com.acme.shop"])
        #expect(created.status == 0)
        #expect(
            created.out == "store:    \(store)\ndevice:   \(device)\nservice:  com.acme.shop\nkey file: \(store).key\n")
        try await sandbox.set(store, "k", "v")
        #expect(
            try await sandbox.run(["store", "list", "--store", store, "--all-services"]).out == "com.acme.shop\tk\n")
    }

    @Test(
        "init refuses an empty --bundle-id, or the migration's own service (64), and creates nothing",
        arguments: ["", "apex-keychain.migration"])
    func badBundleID(_ id: String) async throws {
        let store = sandbox.path("store.db")
        let result = try await sandbox.run(["store", "init", "--store", store, "--bundle-id=\(id)"])
        #expect(result.status == 64)
        #expect(result.err.hasPrefix("apex-keychain: '--bundle-id' "))
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test("clear refuses the migration's records without --force (64), and clears them with it")
    func ledgerClearNeedsForce() async throws {
        let store = try await migratedStore()
        let ledger = ["--service", "apex-keychain.migration"]
        let before = try await sandbox.run(["store", "list", "--store", store] + ledger)
        let refused = try await sandbox.run(["store", "clear", "--store", store, "--yes"] + ledger)
        #expect(refused.status == 64)
        #expect(refused.out == "")
        #expect(
            refused.err == """
                apex-keychain: the service 'apex-keychain.migration' holds the migration's records: without them a \
                later migration can't tell the items it wrote from other items; pass --force to clear it anyway
                Run 'apex-keychain store clear --help' for usage.

                """)
        #expect(try await sandbox.run(["store", "list", "--store", store] + ledger).out == before.out)
        let count = before.out.split(separator: "\n").count
        let forced = try await sandbox.run(["store", "clear", "--store", store, "--yes", "--force"] + ledger)
        #expect(forced.status == 0)
        #expect(forced.out == "removed \(count) items from service 'apex-keychain.migration'\n")
        #expect(try await sandbox.run(["store", "list", "--store", store] + ledger).out == "")
        #expect(try await sandbox.run(["store", "list", "--store", store, "--all-services"]).out == Self.migrated)
    }
}

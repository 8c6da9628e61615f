import Foundation
import Testing

/// A migration keeps each item's access group, which may not be the store's default (the store's bundle id names
/// another app than the dump's groups do): `store list --all-services` shows those items with their group, and
/// `--access-group` reaches them with every item command. Before, they were in the store and no command showed
/// them ("no items in …").
@Suite("store commands and access groups")
struct StoreAccessGroupTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// The access group of the expo-secure-store iOS sample's items.
    static let group = "A1B2C3D4E5.com.example.expoapp"

    /// A phone store whose bundle id is not the sample's, into which the expo-secure-store iOS sample was migrated.
    func migratedStore() async throws -> String {
        let store = sandbox.path("store.db")
        let created = try await sandbox.run(
            ["store", "init", "--store", store, "--device", "ios", "--bundle-id", "com.example.expo"])
        try #require(created.status == 0, "\(created.err)")
        let migrated = try await sandbox.run(
            ["migrate", sample("expo-secure-store/ios/keychain.plist"), "--store", store, "--quiet"])
        try #require(migrated.status == 0, "\(migrated.err)")
        return store
    }

    @Test("list --all-services shows the items of another access group, with the group as a third column")
    func listShowsOtherGroups() async throws {
        let store = try await migratedStore()
        let list = try await sandbox.run(["store", "list", "--store", store, "--all-services"])
        #expect(list.status == 0)
        // The migration's records are listed too (issue 28), in the store's default group, and named on stderr.
        let ledger = try await sandbox.run(["store", "list", "--store", store, "--service", "apex-keychain.migration"])
        let records = ledger.out.split(separator: "\n")
        #expect(
            list.out == records.map { "apex-keychain.migration\t\($0)\n" }.joined() + """
                app\t@sample-owner/sample-app-legacyKey\t\(Self.group)
                app\tauthToken\t\(Self.group)
                app\tbiometricSecret\t\(Self.group)
                app\tdeviceSecret\t\(Self.group)
                secrets\tapi-key\t\(Self.group)

                """)
        #expect(
            list.err
                == "note: service 'apex-keychain.migration' holds the migration's records (\(records.count) items; only "
                + "'migrate' and an app's start-up migration write there)\n")
        let service = try await sandbox.run(["store", "list", "--store", store, "--service", "app"])
        #expect(service.out == "")
        #expect(
            service.err
                == "no items in service 'app'; 5 items in 2 other services or access groups: list them with --all-services\n"
        )
    }

    @Test("--access-group reaches the group's items: list, info, set and remove")
    func accessGroupOption() async throws {
        let store = try await migratedStore()
        let place = ["--store", store, "--service", "app", "--access-group", Self.group]
        let list = try await sandbox.run(["store", "list"] + place)
        #expect(list.out == "@sample-owner/sample-app-legacyKey\nauthToken\nbiometricSecret\ndeviceSecret\n")
        let info = try await sandbox.run(["store", "info"] + place + ["authToken"])
        #expect(info.status == 0, "\(info.err)")
        #expect(info.out.contains("key:            authToken"))
        let missing = try await sandbox.run(["store", "info", "--store", store, "--service", "app", "authToken"])
        #expect(missing.status == 1)
        #expect(missing.err.contains("no item 'authToken' in service 'app' of "), "\(missing.err)")
        let gone = try await sandbox.run(["store", "info"] + place + ["nothing"])
        #expect(gone.status == 1)
        #expect(
            gone.err.contains("no item 'nothing' in service 'app' of access group '\(Self.group)' of "), "\(gone.err)")
        let set = try await sandbox.run(["store", "set"] + place + ["added"], stdin: Data("new value".utf8))
        #expect(set.status == 0, "\(set.err)")
        let get = try await sandbox.run(["store", "get"] + place + ["added"])
        #expect(get.out == "new value")
        let removed = try await sandbox.run(["store", "remove"] + place + ["added"])
        #expect(removed.status == 0, "\(removed.err)")
        let after = try await sandbox.run(["store", "get"] + place + ["added"])
        #expect(after.status == 1)
    }

    @Test("store clear --access-group names the group it empties, and leaves the default group's items")
    func clearNamesTheGroup() async throws {
        let store = try await migratedStore()
        let set = try await sandbox.run(
            ["store", "set", "--store", store, "--service", "app", "kept"], stdin: Data("default group".utf8))
        try #require(set.status == 0, "\(set.err)")
        let refused = try await sandbox.run(
            ["store", "clear", "--store", store, "--service", "app", "--access-group", Self.group])
        #expect(refused.status == 64)
        #expect(
            refused.err.contains(
                "'store clear' would remove 4 items from service 'app' of access group '\(Self.group)', and there is no"
            ),
            "\(refused.err)")
        let cleared = try await sandbox.run(
            ["store", "clear", "--store", store, "--service", "app", "--access-group", Self.group, "--yes"])
        #expect(cleared.status == 0, "\(cleared.err)")
        #expect(cleared.out == "removed 4 items from service 'app' of access group '\(Self.group)'\n")
        let left = try await sandbox.run(["store", "list", "--store", store, "--service", "app"])
        #expect(left.out == "kept\n")
    }

    @Test("--access-group on an Android store is a usage error: Android has no access groups")
    func androidRefusesAccessGroups() async throws {
        let store = sandbox.path("android.db")
        let created = try await sandbox.run(["store", "init", "--store", store, "--device", "android"])
        try #require(created.status == 0, "\(created.err)")
        let result = try await sandbox.run(
            ["store", "set", "--store", store, "--access-group", "other", "k"], stdin: Data("v".utf8))
        #expect(result.status == 64)
        #expect(
            result.err.contains(
                "'--access-group' has no meaning on the Android device profiles (Android has no access groups)"),
            "\(result.err)")
        let list = try await sandbox.run(["store", "list", "--store", store])
        #expect(list.out == "", "nothing was written")
    }

    @Test("--access-group with --all-services, or empty, is a usage error")
    func usage() async throws {
        let store = try await migratedStore()
        let both = try await sandbox.run(["store", "list", "--store", store, "--all-services", "--access-group", "x"])
        #expect(both.status == 64)
        #expect(both.err.contains("'--all-services' and '--access-group' can't be used together"))
        let empty = try await sandbox.run(["store", "list", "--store", store, "--access-group", ""])
        #expect(empty.status == 64)
        #expect(empty.err.contains("'--access-group' must not be empty"))
    }
}

import Foundation
import Testing

/// An app folder whose DataStore file was cut short (an interrupted `adb pull`): the run stops with 65, naming
/// the file, and the stale SharedPreferences copy of the same entries is not migrated in its place (issue 28).
@Suite("damaged DataStore")
struct DamagedDataStoreTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// The react-native-keychain Android sample, copied, with its DataStore file one byte short.
    func cutAppFolder() throws -> String {
        let app = sandbox.path("app")
        try FileManager.default.copyItem(atPath: sample("react-native-keychain/android"), toPath: app)
        let file = app + "/files/datastore/RN_KEYCHAIN.preferences_pb"
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        try data.dropLast().write(to: URL(fileURLWithPath: file))
        return app
    }

    @Test("migrate and inspect refuse the folder (65), naming the DataStore file; nothing is written")
    func damagedDataStoreStopsTheRun() async throws {
        let app = try cutAppFolder()
        let store = try await sandbox.initStore(device: "android")
        let migrate = try await sandbox.run([
            "migrate", "app", "--store", store, "--bundle-id", "com.example.sampleapp",
        ])
        #expect(migrate.status == 65, "\(migrate.err)")
        #expect(
            migrate.err.contains("app/files/datastore/RN_KEYCHAIN.preferences_pb: not a valid DataStore PreferenceMap"),
            "\(migrate.err)")
        let listed = try await sandbox.run(["store", "list", "--store", store, "--all-services"])
        #expect(listed.status == 0)
        #expect(listed.out.isEmpty, "\(listed.out)")
        let inspect = try await sandbox.run(["inspect", app])
        #expect(inspect.status == 65, "\(inspect.err)")
        #expect(inspect.err.contains("RN_KEYCHAIN.preferences_pb"), "\(inspect.err)")
    }
}

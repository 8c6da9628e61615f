import Foundation
import Testing

/// Review (a new user's first runs): what the tool says must be something the user can act on and read. A note
/// names the command that takes the option it suggests; text output quotes names the one way; the messages on
/// stderr count in plain English and keep the action words as the report spells them.
@Suite("notes and messages read right")
struct MessageWordingTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// The options `inspect` accepts.
    static let inspectOptions: Set<String> = ["--format", "--include-labels", "--strict", "--help"]

    /// Every `--option` a line of `text` suggests that `inspect` does not take, unless the line says which
    /// command takes it (`… to migrate`, `migrate --…`).
    static func foreignOptions(in text: String) -> [String] {
        var found: [String] = []
        for line in text.split(separator: "\n") {
            let words = line.split(whereSeparator: { " ,;:()'".contains($0) })
            for word in words where word.hasPrefix("--") && !inspectOptions.contains(String(word)) {
                if !line.contains("\(word) to migrate") && !line.contains("migrate \(word)") {
                    found.append(String(line))
                }
            }
        }
        return found
    }

    @Test("inspect's notes name migrate as the command that takes --bundle-id and --android-biometry-accepts-passcode")
    func inspectNotesNameMigrate() async throws {
        let ios = try await sandbox.run(["inspect", sample("react-native-keychain/ios/keychain.plist")])
        #expect(ios.status == 0)
        #expect(
            ios.out.contains(
                "note: the app's default service 'com.example.sampleapp' is the bundle id inferred from access group "
                    + "'A1B2C3D4E5.com.example.sampleapp'; to set it yourself, pass --bundle-id to migrate\n"))
        let android = try await sandbox.run(["inspect", sample("react-native-keychain/android")])
        #expect(android.status == 0)
        #expect(
            android.out.contains(
                "if the app used version 10, pass --android-biometry-accepts-passcode to migrate, which maps it to "
                    + "'biometryAnyOrPasscode'\n"))
        // No sample's notes suggest an option inspect would refuse without naming migrate.
        let folders = try FileManager.default.contentsOfDirectory(atPath: samplesFolder.path).sorted()
        for library in folders where library.hasPrefix("react-native-") || library.hasPrefix("expo-") {
            for dump in try FileManager.default.contentsOfDirectory(atPath: sample(library)).sorted() {
                let result = try await sandbox.run(["inspect", sample("\(library)/\(dump)")])
                #expect(result.status == 0, "\(library)/\(dump): \(result.err)")
                #expect(Self.foreignOptions(in: result.out) == [], "\(library)/\(dump)")
            }
        }
        // The same notes in migrate's report still read right there.
        let plan = try await sandbox.run(["migrate", sample("react-native-keychain/android")])
        #expect(plan.out.contains("pass --android-biometry-accepts-passcode to migrate, which maps it to"))
    }

    @Test("text output quotes names in notes and reasons with single quotes, never Markdown backticks")
    func noBackticksInText() async throws {
        let expo = try await sandbox.run(
            ["migrate", sample("expo-secure-store/ios/keychain.plist"), "--bundle-id", "com.example.expo"])
        #expect(expo.status == 0)
        #expect(
            expo.out.contains(
                "access group 'A1B2C3D4E5.com.example.expoapp' is not the app's default ('<team>.com.example.expo'): kept"
            ), "\(expo.out)")
        #expect(expo.out.contains("expo-secure-store reads 'app:no-auth', then 'app:auth', then 'app'"))
        let folders = try FileManager.default.contentsOfDirectory(atPath: samplesFolder.path).sorted()
        for library in folders where library.hasPrefix("react-native-") || library.hasPrefix("expo-") {
            for dump in try FileManager.default.contentsOfDirectory(atPath: sample(library)).sorted() {
                let path = sample("\(library)/\(dump)")
                let plan = try await sandbox.run(["migrate", path, "--from", library, "--bundle-id", "com.example.app"])
                #expect(plan.status == 0, "\(library)/\(dump): \(plan.err)")
                #expect(!plan.out.contains("`"), "\(library)/\(dump): \(plan.out)")
                let inspect = try await sandbox.run(["inspect", path])
                #expect(!inspect.out.contains("`"), "\(library)/\(dump): \(inspect.out)")
            }
        }
    }

    @Test("the messages on stderr count conflicts and items in plain English; --fail-on's words stay as spelt")
    func countsReadWell() async throws {
        let plist = sample("react-native-keychain/ios/keychain.plist")
        let store = try await sandbox.initStore(device: "ios")
        for service in ["auth", "session:v2"] {
            try await sandbox.set(store, "credentials", "another-password", ["--service", service, "--username", "x"])
        }
        let migrate = ["migrate", plist, "--bundle-id", "com.example.sampleapp", "--store", store]
        let plan = try await sandbox.run(migrate + ["--dry-run", "--on-conflict", "fail"])
        #expect(plan.status == 1)
        #expect(
            plan.messages
                == "apex-keychain: \(store): the plan: 2 conflicts: with --on-conflict fail the run would stop\n")
        let gated = try await sandbox.run(migrate + ["--dry-run", "--fail-on", "conflict"])
        #expect(gated.status == 1)
        #expect(gated.messages == "apex-keychain: \(store): the plan: 2 items end as conflict (--fail-on)\n")
        let run = try await sandbox.run(migrate)
        #expect(run.status == 1)
        #expect(
            run.messages == "apex-keychain: \(store): 8 items migrated; not migrated: 2 conflicts\n")
        // A second run finds the 8 in place: the summary says so, not only that nothing was migrated.
        let again = try await sandbox.run(migrate)
        #expect(again.status == 1)
        #expect(
            again.messages
                == "apex-keychain: \(store): 0 items migrated (8 already there); not migrated: 2 conflicts\n")
        let sealed = try await sandbox.run(["migrate", sample("react-native-keychain/android"), "--fail-on", "sealed"])
        #expect(sealed.status == 1)
        #expect(
            sealed.messages.hasSuffix("apex-keychain: the plan: 4 items end as sealed (--fail-on)\n"), "\(sealed.err)")
    }
}

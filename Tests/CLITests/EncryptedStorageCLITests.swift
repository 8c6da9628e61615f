import Foundation
import SampleDumps
import Testing

/// `inspect` and `migrate` on react-native-encrypted-storage's samples: every version family, the iOS weak
/// evidence and `--from`, folders, a damaged file, and no value in any output.
@Suite("react-native-encrypted-storage from the command line")
struct EncryptedStorageCLITests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let bundleID = ["--bundle-id", "com.example.rnesapp"]

    func json(_ result: CLIResult) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.err)")
    }

    /// The items of a JSON report: library, key (target), action.
    func rows(_ report: [String: Any]) -> [(library: String, key: String?, action: String)] {
        (report["items"] as? [[String: Any]] ?? []).map { item in
            let source = item["source"] as? [String: Any] ?? [:]
            let target = item["target"] as? [String: Any]
            return (source["library"] as? String ?? "", target?["key"] as? String, item["action"] as? String ?? "")
        }
    }

    @Test("iOS: the empty-service items are created under the bundle id; react-native-keychain keeps its item")
    func ios() async throws {
        let result = try await sandbox.run(
            ["migrate", sample("react-native-encrypted-storage/ios/keychain.plist"), "--format", "json"])
        #expect(result.status == 0, "\(result.err)")
        let rows = rows(try json(result))
        let mine = rows.filter { $0.library == "react-native-encrypted-storage" }
        #expect(mine.map(\.key) == ["user_session", "pinCode", "persist:root"])
        #expect(mine.allSatisfy { $0.action == "create" })
        #expect(rows.filter { $0.library == "react-native-keychain" }.count == 1)
        #expect(result.out.contains("\"service\" : \"com.example.rnesapp\""))
    }

    @Test("iOS: another SDK's empty-service item leaves the others skipped, until --from names the library")
    func anotherSDK() async throws {
        let path = sample("react-native-encrypted-storage/ios/keychain-with-another-sdk.plist")
        let plain = try await sandbox.run(["migrate", path, "--format", "json"] + Self.bundleID)
        #expect(
            rows(try json(plain)).filter { $0.library == "react-native-encrypted-storage" }.allSatisfy {
                $0.action == "skipped"
            })
        #expect(plain.out.contains("pass --from react-native-encrypted-storage"))
        let named = try await sandbox.run(
            ["migrate", path, "--from", "react-native-encrypted-storage", "--format", "json"] + Self.bundleID)
        let mine = rows(try json(named)).filter { $0.library == "react-native-encrypted-storage" }
        #expect(mine.map(\.action) == ["create", "create", "create", "skipped"])
        #expect(
            named.err.contains(
                "--from react-native-encrypted-storage: 1 react-native-keychain item(s) found and skipped"))
    }

    @Test("Android: every version family's file, as a folder: plain-text entries created, encrypted ones sealed")
    func android() async throws {
        let result = try await sandbox.run(
            ["migrate", sample("react-native-encrypted-storage"), "--device", "android", "--format", "json"]
                + Self.bundleID)
        #expect(result.status == 0, "\(result.err)")
        let report = try json(result)
        let sources = report["sources"] as? [[String: Any]] ?? []
        let android = sources.filter { $0["platform"] as? String == "android" }
        #expect(android.count == 5)
        #expect(android.allSatisfy { $0["library"] as? String == "react-native-encrypted-storage" })
        let rows = rows(report).filter { $0.library == "react-native-encrypted-storage" }
        #expect(rows.filter { $0.action == "sealed" }.count == 7)
        #expect(result.err.isEmpty, "no file of the folder is skipped: \(result.err)")
        let plain = try await sandbox.run(
            ["inspect", sample("react-native-encrypted-storage/android-1.0.0"), "--format", "json"])
        #expect(plain.status == 0)
        #expect(plain.out.contains("\"user_session\""))
    }

    @Test("the library's file name is what is recognised: the same entries under another name are skipped")
    func recognisedByName() async throws {
        let folder = sandbox.url.appendingPathComponent("backup")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: sample(
                "react-native-encrypted-storage/android-1.0.0/shared_prefs/RN_ENCRYPTED_STORAGE_SHARED_PREF.xml"),
            toPath: folder.appendingPathComponent("prefs.xml").path)
        let result = try await sandbox.run(["inspect", "backup"])
        #expect(result.status == 66)
        #expect(result.err.contains("skipped backup/prefs.xml: not a keychain dump"))
        // On stdin the file has no name, so it can't be told from an app's own preferences either.
        let data = try Data(contentsOf: folder.appendingPathComponent("prefs.xml"))
        let piped = try await sandbox.run(["inspect", "-"], stdin: data)
        #expect(piped.status == 65)
        #expect(piped.err.contains("(stdin): not a keychain dump"))
    }

    @Test("a keyset that is not a Tink keyset is an error (65) naming the file")
    func damagedKeyset() async throws {
        let name = "shared_prefs/RN_ENCRYPTED_STORAGE_SHARED_PREF.xml"
        try FileManager.default.createDirectory(
            at: sandbox.url.appendingPathComponent("shared_prefs"), withIntermediateDirectories: true)
        _ = try sandbox.write(
            name,
            """
            <?xml version='1.0' encoding='utf-8' standalone='yes' ?>
            <map>
                <string name="__androidx_security_crypto_encrypted_prefs_key_keyset__">not hex</string>
                <string name="k">sample-damaged-0001</string>
            </map>
            """)
        for command in ["inspect", "migrate"] {
            let result = try await sandbox.run([command, name])
            #expect(result.status == 65)
            #expect(result.err.contains(name) && result.err.contains("not a Tink keyset"))
            #expect(!result.err.contains("sample-damaged-0001") && !result.out.contains("sample-damaged-0001"))
        }
    }

    @Test("no value of the samples shows in inspect or migrate output, in any format")
    func secrecy() async throws {
        let store = try await sandbox.initStore(device: "ios")
        let runs: [[String]] = [
            ["inspect", sample("react-native-encrypted-storage"), "--include-labels"],
            ["inspect", sample("react-native-encrypted-storage"), "--format", "json", "--include-labels"],
            ["migrate", sample("react-native-encrypted-storage/ios"), "--include-labels"] + Self.bundleID,
            ["migrate", sample("react-native-encrypted-storage/ios"), "--format", "markdown"] + Self.bundleID,
            [
                "migrate", sample("react-native-encrypted-storage/ios/keychain.plist"), "--from",
                "react-native-encrypted-storage",
                "--store", store, "--format", "json",
            ] + Self.bundleID,
            [
                "migrate", sample("react-native-encrypted-storage"), "--device", "android", "--format", "json",
                "--include-labels",
            ] + Self.bundleID,
        ]
        for arguments in runs {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 0 || result.status == 1, "\(arguments): \(result.err)")
            for secret in ReactNativeEncryptedStorageSamples.secrets {
                #expect(!result.out.contains(secret) && !result.err.contains(secret), "\(arguments)")
            }
        }
        let get = try await sandbox.run([
            "store", "get", "--store", store, "--service", "com.example.rnesapp", "pinCode",
        ])
        #expect(get.out == "sample-pin-0302", "the migrated value is in the store: \(get.err)")
    }
}

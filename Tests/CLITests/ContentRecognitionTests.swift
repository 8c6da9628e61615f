import Foundation
import SampleDumps
import Testing

/// Issue 31: a dump is recognised by its content whatever its name. Every bundled sample gives the built binary
/// the same items read from stdin (`-`) and under a neutral name as under its own name.
@Suite("dumps are recognised by content: stdin and neutral names")
struct ContentRecognitionTests {
    /// The plain-text files that carry no library's mark: under another name only `--from` says whose they are.
    static let unmarked: [String: String] = [
        "react-native-encrypted-storage/android-1.0.0/shared_prefs/RN_ENCRYPTED_STORAGE_SHARED_PREF.xml":
            "react-native-encrypted-storage",
        "react-native-encrypted-storage/android-2.3-api22/shared_prefs/RN_ENCRYPTED_STORAGE_SHARED_PREF.xml":
            "react-native-encrypted-storage",
        "react-native-sensitive-info/android/shared_prefs/app.xml": "react-native-sensitive-info",
    ]

    /// Every sample dump file (the apps' own preferences, which are no dumps, left out).
    static let samples: [String] = {
        let root = URL(fileURLWithPath: sample(""))
        let walker = FileManager.default.enumerator(atPath: root.path)
        var found: [String] = []
        while let path = walker?.nextObject() as? String {
            let name = (path as NSString).lastPathComponent
            guard path.contains("/ios/") || path.contains("/shared_prefs/") || path.contains("/datastore/") else {
                continue
            }
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(
                atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory)
            if !exists || isDirectory.boolValue
                || name.hasSuffix("_preferences.xml") && name != "shared_preferences.xml"
            {
                continue
            }
            found.append(path)
        }
        return found.sorted()
    }()

    /// The source library and the action of each item of a JSON report, in order.
    static func items(_ result: CLIResult) throws -> [String] {
        let object = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        let items = try #require(object["items"] as? [[String: Any]])
        return items.map { item in
            let source = item["source"] as? [String: Any]
            return "\(source?["library"] as? String ?? "-") \(item["action"] as? String ?? "-")"
        }
    }

    @Test("each sample read from stdin and under a neutral name gives the items it gives under its own name")
    func stdinAndNeutralName() async throws {
        #expect(Self.samples.count >= 25, "\(Self.samples)")
        let sandbox = try Sandbox()
        for path in Self.samples {
            var arguments = ["--dry-run", "--format", "json", "--bundle-id", "com.example.app"]
            if let library = Self.unmarked[path] { arguments += ["--from", library] }
            let own = try await sandbox.run(["migrate", sample(path)] + arguments)
            #expect(own.status == 0 || own.status == 1, "\(path): \(own.err)")
            // A 6.x react-native-sensitive-info file's service is only in its name (a hash): without the name, its
            // items are the library's still, but blocked for want of a service.
            let nameHoldsData = (path as NSString).lastPathComponent.hasPrefix("sensitive_info_")
            func seen(_ result: CLIResult) throws -> [String] {
                let items = try Self.items(result)
                return nameHoldsData ? items.map { String($0.split(separator: " ")[0]) } : items
            }
            let expected = try seen(own)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: sample(path)))
            let piped = try await sandbox.run(["migrate", "-"] + arguments, stdin: bytes)
            #expect(piped.status == own.status, "\(path) on stdin: \(piped.err)")
            #expect(try seen(piped) == expected, "\(path) on stdin")
            let neutral = try sandbox.write("input", bytes)
            let renamed = try await sandbox.run(["migrate", neutral] + arguments)
            #expect(renamed.status == own.status, "\(path) as 'input': \(renamed.err)")
            #expect(try seen(renamed) == expected, "\(path) as 'input'")
        }
    }

    @Test(
        "a file with no library's mark, on stdin without --from, is refused with its name, why, and the libraries",
        arguments: Array(unmarked.keys).sorted())
    func unmarkedNamesTheLibraries(_ path: String) async throws {
        let sandbox = try Sandbox()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: sample(path)))
        let result = try await sandbox.run(["migrate", "-", "--dry-run"], stdin: bytes)
        #expect(result.status == 65)
        #expect(result.err.hasPrefix("apex-keychain: (stdin): not a keychain dump"), "\(result.err)")
        #expect(result.err.contains("its entries are all plain-text strings"), "\(result.err)")
        #expect(result.err.contains("migrate --from react-native-encrypted-storage"), "\(result.err)")
        #expect(result.err.contains("migrate --from react-native-sensitive-info"), "\(result.err)")
    }

    @Test("react-native-encrypted-storage's encrypted file on stdin, with or without its --from, is its own")
    func encryptedStorageOnStdin() async throws {
        let sandbox = try Sandbox()
        let bytes = try Data(
            contentsOf: URL(
                fileURLWithPath: sample(
                    "react-native-encrypted-storage/android/shared_prefs/RN_ENCRYPTED_STORAGE_SHARED_PREF.xml")))
        for from in [[], ["--from", "react-native-encrypted-storage"]] {
            let result = try await sandbox.run(["migrate", "-", "--dry-run", "--format", "json"] + from, stdin: bytes)
            #expect(result.status == 0, "\(from): \(result.err)")
            #expect(try Self.items(result) == Array(repeating: "react-native-encrypted-storage sealed", count: 3))
        }
    }

    @Test("an EncryptedSharedPreferences file of booleans and numbers: every entry sealed, none migrated as text")
    func booleansAndNumbers() async throws {
        let sandbox = try Sandbox()
        let file = ReactNativeEncryptedStorageSamples.encryptedPreferencesFile(
            [("onboarded", .boolean), ("launches", .int), ("lastSync", .long), ("ratio", .float)],
            seed: 0x524E_4553_0033)
        let path = try sandbox.write("RN_ENCRYPTED_STORAGE_SHARED_PREF.xml", file)
        let result = try await sandbox.run(
            ["migrate", path, "--dry-run", "--format", "json", "--bundle-id", "com.example.app"])
        #expect(result.status == 0, "\(result.err)")
        #expect(try Self.items(result) == Array(repeating: "react-native-encrypted-storage sealed", count: 4))
    }
}

import Foundation
import Testing

/// Where `inspect` and `migrate` take their dumps from, on the built binary: what objection's JSON holds of an
/// internet password.
///
/// Dump paths are relative to the sandbox (the tool's working folder), so reports and stderr are the same on
/// every machine.
@Suite("dump sources")
struct DumpSourcesTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// Copies a bundled sample into the sandbox under `name` and returns `name`.
    @discardableResult
    func copySample(_ path: String, as name: String) throws -> String {
        let url = sandbox.url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: sample(path), toPath: url.path)
        return name
    }

    /// The items of a JSON report.
    func items(_ result: CLIResult) throws -> [[String: Any]] {
        try #require(try jsonObject(result)["items"] as? [[String: Any]])
    }

    /// The target keys of a report's internet passwords, by server as found.
    func internetKeys(_ result: CLIResult) throws -> [String] {
        try items(result).filter { ($0["source"] as? [String: Any])?["class"] as? String == "inet" }
            .compactMap { ($0["target"] as? [String: Any])?["key"] as? String }
    }

    static let bundleID = ["--bundle-id", "com.example.sampleapp"]

    // MARK: 1. objection's internet passwords

    @Test("objection's JSON has no server: its internet passwords are blocked with that reason, never a conflict")
    func objectionWithoutServer() async throws {
        let dump = try copySample("react-native-keychain/ios/objection-dump.json", as: "objection-dump.json")
        let text = try await sandbox.run(["migrate", dump] + Self.bundleID)
        #expect(text.status == 0)
        #expect(text.messages == "")
        try expectGolden(text.out, "migrate-objection.txt")

        let result = try await sandbox.run(["migrate", dump, "--format", "json"] + Self.bundleID)
        let internet = try items(result).filter { ($0["source"] as? [String: Any])?["class"] as? String == "inet" }
        #expect(internet.count == 2)
        for item in internet {
            #expect(item["action"] as? String == "blocked")
            #expect(
                (item["reason"] as? String)?.hasPrefix(
                    "the server, which names the target key (credentials:<server>), is unknown: objection's JSON has no server field"
                ) == true)
        }
        let summary = try #require(try jsonObject(result)["summary"] as? [String: Int])
        #expect(summary["conflict"] == 0 && summary["blocked"] == 2)
    }

    @Test("an objection JSON that holds the server maps its internet passwords as the plist and SQLite exports do")
    func objectionWithServer() async throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: sample("react-native-keychain/ios/objection-dump.json")))
        var items = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: String]])
        let internet = items.indices.filter { items[$0]["item_class"] == "kSecClassInternetPassword" }
        try #require(internet.count == 2)
        for (index, server) in zip(internet, ["https://example.com", "https://api.example.com:8443"]) {
            items[index]["server"] = server
            items[index]["port"] = "0"
        }
        try sandbox.write(
            "objection-server.json", try JSONSerialization.data(withJSONObject: items, options: .prettyPrinted))
        let objection = try await sandbox.run(["migrate", "objection-server.json", "--format", "json"] + Self.bundleID)
        #expect(objection.status == 0)
        let expected = ["credentials:https://example.com", "credentials:https://api.example.com:8443"]
        #expect(try internetKeys(objection) == expected)
        for export in ["keychain.plist", "keychain-export.sqlite"] {
            let result = try await sandbox.run(
                ["migrate", sample("react-native-keychain/ios/" + export), "--format", "json"] + Self.bundleID)
            #expect(try internetKeys(result) == expected, "\(export)")
        }
        let actions = try self.items(objection).compactMap { $0["action"] as? String }
        #expect(!actions.contains("conflict") && !actions.contains("blocked"))
    }
}

/// Files of libraries' data under other names (issue 14, item 3).
extension DumpSourcesTests {
    @Test("a react-native-keychain RN_KEYCHAIN.xml saved under another name is recognised by its entries, with a note")
    func renamedReactNativeKeychainFile() async throws {
        let original = try await sandbox.run(
            ["inspect", sample("react-native-keychain/android/shared_prefs/RN_KEYCHAIN.xml"), "--format", "json"])
        let expected = try items(original).count
        try #require(expected > 0)
        for name in ["backup-RN_KEYCHAIN.xml", "device1.xml"] {
            try copySample("react-native-keychain/android/shared_prefs/RN_KEYCHAIN.xml", as: name)
            let result = try await sandbox.run(["inspect", name, "--format", "json"])
            #expect(result.status == 0, "\(name): \(result.err)")
            #expect(result.messages == "")
            let sources = try #require(try jsonObject(result)["sources"] as? [[String: Any]])
            #expect(sources.first?["library"] as? String == "react-native-keychain", "\(name)")
            let found = try items(result)
            #expect(found.count == expected, "\(name)")
            let note =
                "the file is named '\(name)', not RN_KEYCHAIN.xml: recognised as react-native-keychain's by its <service>:u, :p and :c entries"
            #expect(found.allSatisfy { ($0["notes"] as? [String])?.contains(note) == true }, "\(name)")
        }
        let text = try await sandbox.run(["inspect", "device1.xml"])
        #expect(text.status == 0)
        try expectGolden(text.out, "inspect-renamed.txt")
    }

    @Test("a renamed Conceal key file still decrypts a renamed RN_KEYCHAIN file's FacebookConceal entries")
    func renamedConcealKeyFile() async throws {
        try copySample("react-native-keychain/android/shared_prefs/RN_KEYCHAIN.xml", as: "backup/device1.xml")
        try copySample("react-native-keychain/android/shared_prefs/crypto.KEY_256.xml", as: "backup/key.xml")
        let result = try await sandbox.run(["migrate", "backup", "--format", "json"] + Self.bundleID)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.messages == "", "neither file is skipped")
        func conceal(_ result: CLIResult) throws -> [String] {
            try items(result).filter {
                (($0["source"] as? [String: Any])?["protection"] as? [String: String])?["cipher"] == "FacebookConceal"
            }.compactMap { $0["action"] as? String }
        }
        #expect(try conceal(result) == ["create", "create"])
        // Without the key file, the same entries can't be read: they wait for it.
        let without = try await sandbox.run(["migrate", "backup/device1.xml", "--format", "json"] + Self.bundleID)
        #expect(try conceal(without) == ["blocked", "blocked"])
    }

    @Test("an expo-secure-store SecureStore.xml saved under another name is recognised by its JSON entries")
    func renamedExpoFile() async throws {
        try copySample("expo-secure-store/android/shared_prefs/SecureStore.xml", as: "backup/expo-backup.xml")
        let result = try await sandbox.run(["inspect", "backup", "--format", "json"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.messages == "")
        let sources = try #require(try jsonObject(result)["sources"] as? [[String: Any]])
        #expect(sources.map { $0["library"] as? String } == ["expo-secure-store"])
        #expect(try items(result).count > 0)
    }

    @Test("a file of string entries only that no library claims names both libraries that write such, and --from")
    func plainStringsHint() async throws {
        let plain = try sandbox.write(
            "app.xml",
            Data(
                "<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map>\n<string name=\"token\">t-1</string>\n</map>\n"
                    .utf8))
        let named = try await sandbox.run(["inspect", plain])
        #expect(named.status == 65)
        // inspect takes no --from: the hint names the command that does.
        let both = "migrate --from react-native-encrypted-storage or migrate --from react-native-sensitive-info"
        #expect(named.messages.hasPrefix("apex-keychain: \(plain): not a keychain dump") && named.err.contains(both))
        #expect(!named.err.contains("t-1"))
        let taken = try await sandbox.run(["migrate", plain, "--from", "react-native-sensitive-info"])
        #expect(taken.status == 0, "\(taken.err)")
        #expect(taken.out.contains("app/token"), "\(taken.out)")
    }

    @Test("a preferences file without any library's data, named, is not a dump (65); in a folder it is skipped")
    func preferencesWithoutLibraryData() async throws {
        let decoy = "react-native-keychain/android/shared_prefs/com.example.sampleapp_preferences.xml"
        try copySample(decoy, as: "prefs.xml")
        let named = try await sandbox.run(["inspect", "prefs.xml"])
        #expect(named.status == 65)
        #expect(named.out == "")
        #expect(
            named.messages
                == "apex-keychain: prefs.xml: not a keychain dump: an Android SharedPreferences file with no "
                + "react-native-keychain, expo-secure-store or react-native-sensitive-info entries, no FacebookConceal key, "
                + "no EncryptedSharedPreferences keysets (react-native-encrypted-storage's), and not named as one of "
                + "their files\n"
        )
        // The sample's app data folder: its own preferences are skipped, with a line; its dumps are read.
        let folder = try await sandbox.run(["inspect", sample("react-native-keychain/android"), "--format", "json"])
        #expect(folder.status == 0)
        #expect(folder.messages == "skipped \(sample(decoy)): not a keychain dump\n")
    }
}

/// A folder's files that are not keychain dumps (issue 14, item 5).
extension DumpSourcesTests {
    /// An iOS app folder as a backup holds it: one keychain dump among files that are none.
    func appFolder() throws {
        try FileManager.default.createDirectory(
            atPath: sandbox.path("app/Frameworks"), withIntermediateDirectories: true)
        try copySample("react-native-keychain/ios/keychain.plist", as: "app/keychain.plist")
        try sandbox.write(
            "app/Info.plist",
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict><key>CFBundleIdentifier</key><string>com.example.sampleapp</string></dict>
            </plist>

            """)
        try sandbox.write("app/package.json", "{\n  \"name\": \"sampleapp\",\n  \"version\": \"1.0.0\"\n}\n")
        var generator = SystemRandomNumberGenerator()
        try sandbox.write(
            "app/random.plist", Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        try sandbox.write("app/Frameworks/notes.txt", "notes\n")
        try sandbox.write("app/.DS_Store", Data([0, 0, 0, 1]))
    }

    static let skippedLines = """
        skipped app/Frameworks/notes.txt: not a keychain dump
        skipped app/Info.plist: not a keychain dump
        skipped app/package.json: not a keychain dump
        skipped app/random.plist: not a keychain dump

        """

    @Test(
        "in a folder, every file that is not a keychain dump is skipped with one line on stderr",
        arguments: ["inspect", "migrate"])
    func folderSkips(command: String) async throws {
        try appFolder()
        let result = try await sandbox.run(
            [command, "app", "--format", "json"] + (command == "migrate" ? Self.bundleID : []))
        #expect(result.status == 0)
        #expect(result.messages == Self.skippedLines)
        let sources = try #require(try jsonObject(result)["sources"] as? [[String: Any]])
        #expect(sources.compactMap { $0["path"] as? String } == ["app/keychain.plist"])
        #expect(try items(result).count == 11)
    }

    @Test("migrate --quiet skips the same files without a word")
    func folderSkipsQuietly() async throws {
        try appFolder()
        let result = try await sandbox.run(["migrate", "app", "--quiet", "--format", "json"] + Self.bundleID)
        #expect(result.status == 0)
        #expect(result.messages == "")
    }

    @Test("--strict makes the first file that is not a keychain dump an error (65)", arguments: ["inspect", "migrate"])
    func strict(command: String) async throws {
        try appFolder()
        let result = try await sandbox.run([command, "app", "--strict"])
        #expect(result.status == 65)
        #expect(result.out == "")
        #expect(
            result.err
                == "apex-keychain: app/Frameworks/notes.txt: unknown format: not an iOS keychain plist, a keychain "
                + "SQLite export, objection JSON, an Android SharedPreferences XML file or a DataStore preferences_pb "
                + "file (--strict makes a file that is not a keychain dump an error)\n")
        // A folder of dumps only passes.
        let dumps = try await sandbox.run([
            command, sample("react-native-keychain/ios"), "--strict", "--format", "json",
        ])
        #expect(dumps.status == 0)
        #expect(dumps.messages == "")
    }

    @Test(
        "a file named on the command line that is not a dump is an error (65), named",
        arguments: [
            (
                "Info.plist",
                "not a keychain dump: the top-level dictionary has none of the class arrays genp, inet, cert, keys, idnt"
            ),
            (
                "package.json",
                "not a keychain dump: the top level is a dictionary, expected an array of objection's items"
            ),
            ("random.plist", "unknown format: "),
        ])
    func namedFileNotADump(name: String, message: String) async throws {
        try appFolder()
        for command in ["inspect", "migrate"] {
            let result = try await sandbox.run([command, "app/keychain.plist", "app/" + name])
            #expect(result.status == 65, "\(command) \(name)")
            #expect(result.out == "")
            #expect(result.messages.hasPrefix("apex-keychain: app/\(name): \(message)"), "\(result.err)")
        }
    }

    @Test("a folder with no keychain dump at all exits 66, counting what it skipped")
    func folderWithoutDumps() async throws {
        try appFolder()
        try FileManager.default.removeItem(atPath: sandbox.path("app/keychain.plist"))
        let result = try await sandbox.run(["inspect", "app"])
        #expect(result.status == 66)
        #expect(result.out == "")
        #expect(
            result.messages == Self.skippedLines
                + "apex-keychain: no keychain dump found in app (4 file(s) skipped: not keychain dumps)\n")
        try FileManager.default.createDirectory(atPath: sandbox.path("empty"), withIntermediateDirectories: true)
        let empty = try await sandbox.run(["migrate", "empty"])
        #expect(empty.status == 66)
        #expect(empty.messages == "apex-keychain: no keychain dump found in empty\n")
    }

    @Test("a damaged keychain dump in a folder stays an error (65): it is a dump")
    func damagedDumpInFolder() async throws {
        try appFolder()
        let data = try Data(contentsOf: URL(fileURLWithPath: sandbox.path("app/keychain.plist")))
        try sandbox.write("app/keychain.plist", data.prefix(data.count / 2))
        let result = try await sandbox.run(["inspect", "app"])
        #expect(result.status == 65)
        #expect(
            result.messages == "apex-keychain: app/keychain.plist: the file is an XML property list that is malformed, "
                + "truncated or nested too deeply (line 113: the document ends inside an element (truncated?) "
                + "(libxml2 error 77))\n")
    }
}

/// A dump on stdin (issue 14, item 7).
extension DumpSourcesTests {
    @Test(
        "'-' reads a dump from stdin, detected by its content",
        arguments: [
            ("react-native-keychain/android/shared_prefs/RN_KEYCHAIN.xml", "android-shared-preferences"),
            ("react-native-keychain/android/files/datastore/RN_KEYCHAIN.preferences_pb", "android-datastore"),
            ("react-native-keychain/ios/keychain-binary.plist", "ios-plist"),
            ("react-native-keychain/ios/keychain-export.sqlite", "keychain-sqlite"),
            ("react-native-keychain/ios/objection-dump.json", "objection-json"),
            ("expo-secure-store/android/shared_prefs/SecureStore.xml", "android-shared-preferences"),
            ("react-native-encrypted-storage/ios/objection-dump.json", "objection-json"),
        ])
    func standardInput(path: String, format: String) async throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: sample(path)))
        let fromFile = try await sandbox.run(["inspect", sample(path), "--format", "json"])
        let result = try await sandbox.run(["inspect", "-", "--format", "json"], stdin: data)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.messages == "")
        let sources = try #require(try jsonObject(result)["sources"] as? [[String: Any]])
        #expect(sources.first?["path"] as? String == "(stdin)")
        #expect(sources.first?["format"] as? String == format)
        // The same items as the file gives, but for where they were found.
        func described(_ result: CLIResult) throws -> [String] {
            try items(result).map { item in
                var source = try #require(item["source"] as? [String: Any])
                source["path"] = nil
                return String(
                    decoding: try JSONSerialization.data(withJSONObject: source, options: .sortedKeys), as: UTF8.self)
            }
        }
        #expect(try described(result) == described(fromFile))
    }

    @Test("'-' with the files of a folder, and migrate from stdin")
    func standardInputWithOthers() async throws {
        let plist = try Data(contentsOf: URL(fileURLWithPath: sample("react-native-keychain/ios/keychain.plist")))
        let result = try await sandbox.run(
            ["migrate", sample("expo-secure-store/ios"), "-", "--format", "json"] + Self.bundleID, stdin: plist)
        #expect(result.status == 0, "\(result.err)")
        let sources = try #require(try jsonObject(result)["sources"] as? [[String: Any]])
        #expect(
            sources.compactMap { $0["path"] as? String } == [sample("expo-secure-store/ios/keychain.plist"), "(stdin)"])
    }

    @Test("stdin that is empty, or not a dump, is an error (65); '-' twice is a usage error")
    func standardInputErrors() async throws {
        let empty = try await sandbox.run(["inspect", "-"])
        #expect(empty.status == 65)
        #expect(empty.messages == "apex-keychain: (stdin): empty: nothing was read\n")
        let info = try await sandbox.run(["inspect", "-"], stdin: Data("{\"name\": \"app\"}".utf8))
        #expect(info.status == 65)
        #expect(
            info.err
                == "apex-keychain: (stdin): not a keychain dump: the top level is a dictionary, expected an array of objection's items\n"
        )
        let prefs = try await sandbox.run(
            ["inspect", "-"], stdin: Data("<map><string name=\"theme\">dark</string></map>".utf8))
        #expect(prefs.status == 65)
        #expect(
            prefs.messages.hasPrefix("apex-keychain: (stdin): not a keychain dump: an Android SharedPreferences file"))
        let twice = try await sandbox.run(["inspect", "-", "-"], stdin: Data("[]".utf8))
        #expect(twice.status == 64)
        #expect(twice.messages.hasPrefix("apex-keychain: '-' (a dump on stdin) can be given once\n"))
    }

    @Test("stdin is held to the 512 MiB limit of a dump file: an endless stream is refused", .timeLimit(.minutes(2)))
    func standardInputLimit() async throws {
        let result = try await sandbox.run(["inspect", "-"], stdinFile: "/dev/zero")
        #expect(result.status == 65)
        #expect(result.messages == "apex-keychain: (stdin): larger than the 512 MiB limit for a dump file\n")
    }

    @Test("'-' with stdin a terminal is a usage error, not a wait")
    func standardInputTerminal() async throws {
        let terminal = try PseudoTerminal()
        let result = try await sandbox.run(["inspect", "-"], stdinFile: terminal.terminalPath)
        #expect(result.status == 64)
        #expect(
            result.messages.hasPrefix("apex-keychain: '-' reads a dump from stdin, which is a terminal: pipe a dump in")
        )
    }

    // MARK: One keychain read twice

    @Test(
        "a folder of one keychain's plist, binary plist and SQLite export: each item is migrated once, its copies shadowed"
    )
    func oneKeychainInThreeForms() async throws {
        for name in ["keychain.plist", "keychain-binary.plist", "keychain-export.sqlite"] {
            try copySample("react-native-keychain/ios/\(name)", as: "export/\(name)")
        }
        let store = try await sandbox.initStore(device: "ios")
        let result = try await sandbox.run(["migrate", "export", "--store", store, "--format", "json"] + Self.bundleID)
        #expect(result.status == 0, "\(result.err)")
        let summary = try #require(try jsonObject(result)["summary"] as? [String: Int])
        #expect(summary["conflict"] == 0)
        #expect(summary["create"] == 10 && summary["verified"] == 10 && summary["shadowed"] == 20)
        let shadowed = try items(result).filter { $0["action"] as? String == "shadowed" }
        #expect(
            shadowed.allSatisfy {
                ($0["reason"] as? String)?.hasPrefix("the same item as export/keychain-binary.plist item ") == true
            })
        let listed = try await sandbox.run(["store", "list", "--store", store, "--all-services"])
        #expect(listed.status == 0)
        #expect(listed.out.split(separator: "\n").filter { !$0.hasPrefix("apex-keychain.migration\t") }.count == 10)
    }

    @Test(
        "objection's JSON beside a fuller export of the same keychain: its items are shadowed by the fuller copies, none blocked or conflicting"
    )
    func objectionBesideAFullerExport() async throws {
        for name in ["keychain.plist", "keychain-binary.plist", "keychain-export.sqlite", "objection-dump.json"] {
            try copySample("react-native-keychain/ios/\(name)", as: "export/\(name)")
        }
        let store = try await sandbox.initStore(device: "ios")
        let result = try await sandbox.run(["migrate", "export", "--store", store, "--format", "json"] + Self.bundleID)
        #expect(result.status == 0, "\(result.err)")
        let summary = try #require(try jsonObject(result)["summary"] as? [String: Int])
        #expect(summary["conflict"] == 0 && summary["blocked"] == 0)
        #expect(summary["create"] == 10 && summary["verified"] == 10)
        let objection = try items(result).filter {
            (($0["source"] as? [String: Any])?["path"] as? String) == "export/objection-dump.json"
                && $0["action"] as? String != "skipped"
        }
        #expect(objection.count == 10)
        #expect(objection.allSatisfy { $0["action"] as? String == "shadowed" })
        // The synchronizable item is written as the fuller copy says: synchronizable.
        let listed = try await sandbox.run(["store", "info", "--store", store, "--service", "cloud", "credentials"])
        #expect(
            listed.out.contains("synchronizable\ttrue") || listed.out.contains("synchronizable: true"), "\(listed.out)")
    }

    @Test("two copies of an Android app folder: the FacebookConceal items are migrated once, not conflicts")
    func androidFolderTwice() async throws {
        for copy in ["a", "b"] {
            for file in ["shared_prefs/RN_KEYCHAIN.xml", "shared_prefs/crypto.KEY_256.xml"] {
                try copySample("react-native-keychain/android/\(file)", as: "\(copy)/\(file)")
            }
        }
        let result = try await sandbox.run(["migrate", "a", "b", "--dry-run", "--format", "json"] + Self.bundleID)
        #expect(result.status == 0, "\(result.err)")
        let summary = try #require(try jsonObject(result)["summary"] as? [String: Int])
        #expect(summary["conflict"] == 0)
        let legacy = try items(result).filter {
            (($0["target"] as? [String: Any])?["service"] as? String) == "legacy"
        }
        #expect(legacy.map { $0["action"] as? String } == ["create", "shadowed"])
    }

    @Test(
        "the store, its key file and the report inside the folder read are the run's own files: left out, --strict passes"
    )
    func ownFilesInTheFolder() async throws {
        try copySample("react-native-keychain/ios/keychain.plist", as: "app/keychain.plist")
        _ = try await sandbox.initStore("app/app.db", device: "ios")
        let command = ["migrate", "app", "--store", "app/app.db", "--report", "app/report.json", "--strict"]
        for run in 1...2 {
            // The second run finds the first run's report there too.
            let result = try await sandbox.run(command + Self.bundleID)
            #expect(result.status == 0, "run \(run): \(result.err)")
            #expect(result.messages == "", "run \(run)")
        }
        // A file of the folder that is not the run's own is still skipped with a word, and --strict refuses it.
        try sandbox.write("app/notes.txt", "not a dump")
        let strict = try await sandbox.run(command + Self.bundleID)
        #expect(strict.status == 65)
        #expect(strict.err.contains("app/notes.txt"))
        // Named as the report, a file that holds no earlier report is an input like the others: --strict refuses
        // the run before the file is replaced.
        let overNotes = try await sandbox.run(
            ["migrate", "app", "--store", "app/app.db", "--report", "app/notes.txt", "--strict"] + Self.bundleID)
        #expect(overNotes.status == 65)
        #expect(try String(contentsOfFile: sandbox.path("app/notes.txt"), encoding: .utf8) == "not a dump")
    }

    @Test(
        "FacebookConceal entries without their key file are blocked and pending (exit 1), and the migration is not complete; with the key file the next run migrates them"
    )
    func concealWithoutKeyFile() async throws {
        let prefs = "react-native-keychain/android/shared_prefs/"
        try copySample(prefs + "RN_KEYCHAIN.xml", as: "app/shared_prefs/RN_KEYCHAIN.xml")
        let store = try await sandbox.initStore(device: "android")
        let first = try await sandbox.run(["migrate", "app", "--store", store, "--format", "json"] + Self.bundleID)
        #expect(first.status == 1, "the user must give the key file: \(first.err)")
        let waiting = try items(first).filter { ($0["reasonCode"] as? String) == "needsInput" }
        #expect(waiting.count == 3, "legacy, staging and old")
        #expect(waiting.allSatisfy { $0["action"] as? String == "blocked" && $0["state"] as? String == "pending" })
        let marker = try await sandbox.run(
            ["store", "get", "--store", store, "--service", "apex-keychain.migration", "done:default"])
        #expect(marker.status == 1, "no completion marker while items wait")

        try copySample(prefs + "crypto.KEY_256.xml", as: "app/shared_prefs/crypto.KEY_256.xml")
        let second = try await sandbox.run(["migrate", "app", "--store", store, "--format", "json"] + Self.bundleID)
        #expect(second.status == 0, "\(second.err)")
        #expect(try items(second).filter { ($0["reasonCode"] as? String) == "needsInput" }.isEmpty)
        let summary = try #require(try jsonObject(second)["summary"] as? [String: Int])
        #expect(summary["verified"] == 3)
    }
}

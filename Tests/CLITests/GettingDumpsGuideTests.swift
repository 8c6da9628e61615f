import Foundation
import Testing

/// `docs/GETTING-DUMPS.md`: every `apex-keychain` command of its code blocks runs with the built binary on the
/// files the guide's other commands would have written (the bundled samples under those names), and the README
/// links the guide outside its Quick start.
@Suite("docs/GETTING-DUMPS.md: its commands run")
struct GettingDumpsGuideTests {
    static let page = "docs/GETTING-DUMPS.md"

    /// One `apex-keychain` command of the guide: its arguments, and the device file piped into it, if any.
    struct Command: CustomStringConvertible {
        var arguments: [String]
        /// The file the `adb … cat FILE |` before it reads, as a path in an app data folder.
        var stdinFile: String?
        var line: Int

        var description: String {
            "\(GettingDumpsGuideTests.page):\(line): apex-keychain \(arguments.joined(separator: " "))"
        }
    }

    /// The guide's `apex-keychain` commands, from its fenced blocks (a pipeline's last stage included).
    static func commands(_ text: String) -> [Command] {
        var commands: [Command] = []
        for block in Markdown.fencedBlocks(text) {
            for (offset, line) in block.lines.enumerated() {
                let stages = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                for (index, stage) in stages.enumerated() where stage.hasPrefix("apex-keychain ") {
                    var input: String?
                    if index > 0 {
                        let before = stages[index - 1].split(separator: " ")
                        if before.dropLast().last == "cat", let file = before.last { input = String(file) }
                    }
                    let words = stage.split(separator: " ").dropFirst().map(String.init)
                    commands.append(Command(arguments: words, stdinFile: input, line: block.firstLine + offset))
                }
            }
        }
        return commands
    }

    /// The samples the guide's copy commands would have written, under the names it gives them.
    static let files: [String: String] = [
        "keychain.json": "react-native-keychain/ios/objection-dump.json",
        "keychain.plist": "react-native-keychain/ios/keychain.plist",
        "RN_KEYCHAIN.xml": "react-native-keychain/android/shared_prefs/RN_KEYCHAIN.xml",
        "crypto.KEY_256.xml": "react-native-keychain/android/shared_prefs/crypto.KEY_256.xml",
        "RN_KEYCHAIN.preferences_pb": "react-native-keychain/android/files/datastore/RN_KEYCHAIN.preferences_pb",
        "SecureStore.xml": "expo-secure-store/android/shared_prefs/SecureStore.xml",
        "shared_preferences.xml": "react-native-sensitive-info/android/shared_prefs/shared_preferences.xml",
        "RN_ENCRYPTED_STORAGE_SHARED_PREF.xml":
            "react-native-encrypted-storage/android-1.0.0/shared_prefs/RN_ENCRYPTED_STORAGE_SHARED_PREF.xml",
    ]

    /// A sandbox holding those files and `app-data/`, a copy of an app data folder.
    static func prepared() throws -> Sandbox {
        let sandbox = try Sandbox()
        for (name, path) in files {
            try FileManager.default.copyItem(
                at: URL(fileURLWithPath: sample(path)), to: sandbox.url.appendingPathComponent(name))
        }
        try FileManager.default.copyItem(
            at: URL(fileURLWithPath: sample("react-native-keychain/android")),
            to: sandbox.url.appendingPathComponent("app-data"))
        // The encrypted backup's folder and its password file, as the guide's `cp -R` and the reader leave them.
        try FileManager.default.copyItem(
            at: URL(fileURLWithPath: sample("ios-backup/backup")), to: sandbox.url.appendingPathComponent("backup"))
        _ = try sandbox.writeSecret(
            "backup-password", try String(contentsOfFile: sample("ios-backup/password.txt"), encoding: .utf8))
        return sandbox
    }

    @Test("every apex-keychain command of the guide runs (exit 0) on what the guide's steps before it write")
    func commandsRun() async throws {
        let commands = Self.commands(try Repository.text(Self.page))
        #expect(commands.count >= 10, "\(commands)")
        #expect(commands.contains { $0.stdinFile != nil && $0.arguments.contains("-") })
        let sandbox = try Self.prepared()
        for command in commands {
            var stdin = Data()
            if let file = command.stdinFile {
                let name = (file as NSString).lastPathComponent
                let source = try #require(Self.files[name], "\(command): no sample for \(file)")
                stdin = try Data(contentsOf: URL(fileURLWithPath: sample(source)))
            }
            let result = try await sandbox.run(command.arguments, stdin: stdin)
            #expect(result.status == 0, "\(command): exit \(result.status): \(result.err)")
            #expect(!result.out.isEmpty, "\(command)")
        }
    }

    @Test("the check catches a command that doesn't parse")
    func catchesABadCommand() async throws {
        let text = try Repository.text(Self.page)
        let broken = text.replacingOccurrences(
            of: "apex-keychain inspect app-data", with: "apex-keychain inspect app-data --recursive")
        let command = try #require(Self.commands(broken).first { $0.arguments.contains("--recursive") })
        let result = try await Self.prepared().run(command.arguments)
        #expect(result.status == 64)
    }

    @Test("every command that writes a file or prints says where, and what to run next")
    func eachStepSaysWhatNext() throws {
        let text = try Repository.text(Self.page)
        let blocks = Markdown.fencedBlocks(text)
        #expect(!blocks.isEmpty)
        let lines = Markdown.lines(text)
        for block in blocks where !block.lines.contains(where: { $0.contains("apex-keychain ") }) {
            // A block of device commands: the text after it says where the output went and names the next step.
            let after = lines[(block.firstLine + block.lines.count)...].prefix(12).joined(separator: "\n")
            #expect(after.contains("Next") || after.contains("next"), "\(Self.page):\(block.firstLine): no next step")
        }
    }

    @Test("the README links the guide in its documentation section, not in Quick start")
    func readmeLinksIt() throws {
        let readme = try Repository.text("README.md")
        let documentation = try #require(Markdown.section(readme, heading: "## Documentation"))
        #expect(documentation.lines.contains { $0.contains("](docs/GETTING-DUMPS.md)") })
        let quickStart = try #require(Markdown.section(readme, heading: "## Quick start"))
        #expect(!quickStart.lines.contains { $0.contains("GETTING-DUMPS") })
    }
}

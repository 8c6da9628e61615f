import Foundation
import SampleDumps
import Testing

/// Issue 32: `inspect` and `migrate` read an encrypted iPhone backup's folder with its password, through the same
/// importers, plan and store writes as any dump; the errors a user meets each name the file and what is wrong.
@Suite("encrypted iPhone backups on the command line")
struct EncryptedBackupCLITests {
    let sandbox: Sandbox
    /// The bundled sample backup, copied into the sandbox, and its password file (0600).
    let backup: String
    let passwordFile: String

    static let sample = Repository.root.appendingPathComponent("samples/ios-backup")

    init() throws {
        sandbox = try Sandbox()
        backup = sandbox.path("backup")
        try FileManager.default.copyItem(atPath: Self.sample.appendingPathComponent("backup").path, toPath: backup)
        passwordFile = try sandbox.writeSecret(
            "password", try String(contentsOf: Self.sample.appendingPathComponent("password.txt"), encoding: .utf8))
    }

    /// The made-up secrets of the sample's items: none may be in any output.
    static let canaries = ["sample-token-0", "sample-password-0", "sample-session-0", "sample-system-value"]

    func expectNoSecret(_ result: CLIResult, sourceLocation: SourceLocation = #_sourceLocation) {
        for canary in Self.canaries {
            #expect(!result.out.contains(canary), "stdout holds a secret", sourceLocation: sourceLocation)
            #expect(!result.err.contains(canary), "stderr holds a secret", sourceLocation: sourceLocation)
        }
    }

    func json(_ result: CLIResult) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.err)")
    }

    @Test("inspect reads the backup: its source is ios-encrypted-backup, with sealed counts and notes; no secret shown")
    func inspectReadsTheBackup() async throws {
        let result = try await sandbox.run(
            ["inspect", backup, "--backup-password-file", passwordFile, "--format", "json"])
        #expect(result.status == 0, "\(result.err)")
        expectNoSecret(result)
        let report = try json(result)
        let sources = try #require(report["sources"] as? [[String: Any]])
        #expect(sources.count == 1)
        #expect(sources.first?["format"] as? String == "ios-encrypted-backup")
        #expect(sources.first?["sealed"] as? [String: Int] == ["aku": 3, "cku": 2, "dku": 1])
        let notes = try #require(sources.first?["notes"] as? [String])
        #expect(notes.contains { $0.hasPrefix("6 items are sealed with the phone's own key") })
        #expect(notes.contains { $0.contains("never holds") && $0.contains("akpu") })
        #expect(notes.contains { $0.hasPrefix("2 items of the system's access groups") })
        let items = try #require(report["items"] as? [[String: Any]])
        let groups = Set(items.compactMap { ($0["source"] as? [String: Any])?["accessGroup"] as? String })
        #expect(groups.isSuperset(of: ["A1B2C3D4E5.com.example.sampleapp", "A1B2C3D4E5.com.example.expoapp"]))
        #expect(!groups.contains("apple"), "the system's items are left out")
        #expect(result.err.contains("deriving its key from the password (1,000 rounds of PBKDF2-SHA256)"))
        #expect(result.err.contains("key derived in"))
    }

    @Test("a wrong password is exit 77, 'the backup password is wrong', and nothing on stdout")
    func wrongPassword() async throws {
        let wrong = try sandbox.writeSecret("wrong", "not-the-password\n")
        for command in [["inspect"], ["migrate", "--dry-run"], ["inspect", "--list-apps"]] {
            let result = try await sandbox.run(
                [command[0], backup, "--backup-password-file", wrong] + command.dropFirst())
            #expect(result.status == 77, "\(command): \(result.err)")
            #expect(result.err.hasSuffix("apex-keychain: \(backup): the backup password is wrong\n"), "\(command)")
            #expect(result.out == "", "\(command)")
        }
    }

    @Test("a password file others can read is refused (77) before it is read; an empty one is 77 too")
    func passwordFileRules() async throws {
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: passwordFile)
        let open = try await sandbox.run(["inspect", backup, "--backup-password-file", passwordFile])
        #expect(open.status == 77)
        #expect(open.err.contains("the backup password file \(passwordFile) is accessible by others (mode 644)"))
        let empty = try sandbox.writeSecret("empty", "\n")
        let result = try await sandbox.run(["inspect", backup, "--backup-password-file", empty])
        #expect(result.status == 77)
        #expect(result.err == "apex-keychain: \(backup): the backup password is empty\n")
    }

    @Test("without a password file and without a terminal: exit 75, which says to pass --backup-password-file")
    func noTerminal() async throws {
        let result = try await sandbox.run(["inspect", backup])
        #expect(result.status == 75)
        #expect(
            result.err == "apex-keychain: \(backup): an encrypted iPhone backup, and there is no terminal to ask "
                + "for its password; pass --backup-password-file FILE\n")
    }

    @Test("asked on the terminal with echo off, the password typed opens the backup and is never echoed")
    func asksOnTheTerminal() throws {
        let binary = try #require(CLIBinary.url)
        let terminal = try PseudoTerminal()
        let pid = try terminal.spawn(
            binary.path, ["inspect", backup, "--format", "json"], stdout: sandbox.path("stdout"),
            stderr: sandbox.path("stderr"))
        let prompt = "Password of the iPhone backup \(backup): "
        try #require(terminal.waitFor(prompt), "no prompt: \(terminal.transcript)")
        try #require(terminal.waitForEchoOff())
        terminal.type(Array("\(IOSBackupSamplePassword.value)\n".utf8))
        let status = terminal.drain(until: pid)
        #expect(
            status == 0,
            "\(terminal.transcript) \((try? String(contentsOfFile: sandbox.path("stderr"), encoding: .utf8)) ?? "")")
        #expect(!terminal.transcript.contains(IOSBackupSamplePassword.value))
        #expect(terminal.echoes, "echo is back on")
        let out = try String(contentsOfFile: sandbox.path("stdout"), encoding: .utf8)
        #expect(out.contains("\"ios-encrypted-backup\""))
    }

    @Test("an unencrypted backup is exit 65, naming its Manifest.plist and saying to make an encrypted one")
    func unencrypted() async throws {
        let plain = sandbox.url.appendingPathComponent("plain")
        try BackupFolderWriter.write(
            to: plain, password: "x", items: [.init(service: "s", account: "a", value: Array("v".utf8))],
            encrypted: false)
        let result = try await sandbox.run(["inspect", plain.path, "--backup-password-file", passwordFile])
        #expect(result.status == 65)
        #expect(result.err.hasPrefix("apex-keychain: \(plain.path)/Manifest.plist: the backup is not encrypted"))
        #expect(result.err.contains("make an encrypted backup"))
        #expect(!result.err.contains("deriving"), "no password is asked for a backup that has none")
    }

    @Test("a cut Manifest.db and a missing keychain file are exit 65, each naming its file")
    func damagedFiles() async throws {
        let database = backup + "/Manifest.db"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: database))
        try bytes.prefix(bytes.count - 7).write(to: URL(fileURLWithPath: database))
        let cut = try await sandbox.run(["inspect", backup, "--backup-password-file", passwordFile])
        #expect(cut.status == 65)
        #expect(cut.err.contains("apex-keychain: \(database): "), "\(cut.err)")
        try bytes.write(to: URL(fileURLWithPath: database))
        let keychain = backup + "/51/" + BackupFilesWriter.keychainFileID
        try FileManager.default.removeItem(atPath: keychain)
        let missing = try await sandbox.run(["inspect", backup, "--backup-password-file", passwordFile])
        #expect(missing.status == 65)
        #expect(missing.err.hasSuffix("apex-keychain: \(keychain): the keychain's file is missing from the backup\n"))
    }

    @Test("--list-apps lists Manifest.plist's apps with their items, the system's groups, and the sealed count")
    func listApps() async throws {
        let text = try await sandbox.run(["inspect", backup, "--backup-password-file", passwordFile, "--list-apps"])
        #expect(text.status == 0, "\(text.err)")
        let lines = text.out.split(separator: "\n").map(String.init)
        #expect(lines.first == "apps of the backup \(backup) (5 apps in Manifest.plist):")
        #expect(
            lines.contains {
                $0.hasPrefix("  com.example.sampleapp ") && $0.contains(" 5  A1B2C3D4E5.com.example.sampleapp")
            })
        #expect(lines.contains { $0.hasPrefix("  com.example.notes ") && $0.hasSuffix(" 0  -") })
        #expect(lines.contains { $0.hasPrefix("  (the system) ") && $0.hasSuffix("apple, com.apple.cfnetwork") })
        #expect(
            lines.last
                == "sealed: 6 items (ThisDeviceOnly: aku 3, cku 2, dku 1) can't be opened off the phone, nor told to an app"
        )
        let json = try await sandbox.run(
            ["inspect", backup, "--backup-password-file", passwordFile, "--list-apps", "--format", "json"])
        let backups = try #require(try self.json(json)["backups"] as? [[String: Any]])
        let apps = try #require(backups.first?["apps"] as? [[String: Any]])
        let counts = Dictionary(
            uniqueKeysWithValues: apps.compactMap { app in
                (app["app"] as? String).map { ($0, app["items"] as? Int ?? -1) }
            })
        #expect(
            counts == [
                "com.example.expoapp": 3, "com.example.notes": 0, "com.example.rnesapp": 3, "com.example.rnsiapp": 4,
                "com.example.sampleapp": 5,
            ])
        let listed = try await sandbox.run(["inspect", sandbox.path(""), "--list-apps"])
        #expect(listed.status == 64)
    }

    @Test("--app keeps that app's items only and is the importers' bundle id; with another --bundle-id, 64")
    func appFilter() async throws {
        let result = try await sandbox.run(
            [
                "migrate", backup, "--backup-password-file", passwordFile, "--app", "com.example.sampleapp",
                "--format", "json",
            ])
        #expect(result.status == 0, "\(result.err)")
        let items = try #require(try json(result)["items"] as? [[String: Any]])
        #expect(items.count == 5)
        for item in items {
            #expect((item["source"] as? [String: Any])?["accessGroup"] as? String == "A1B2C3D4E5.com.example.sampleapp")
            #expect(
                !((item["notes"] as? [String]) ?? []).contains { $0.contains("inferred") }, "the bundle id is given")
        }
        let both = try await sandbox.run(
            [
                "migrate", backup, "--backup-password-file", passwordFile, "--app", "com.example.sampleapp",
                "--bundle-id", "com.example.other",
            ])
        #expect(both.status == 64)
        #expect(both.err.contains("'--app com.example.sampleapp' and '--bundle-id com.example.other' differ"))
    }

    @Test("migrate into a store: the values read back are the backup's, and no file holds one in plaintext")
    func migrateIntoAStore() async throws {
        let store = try await sandbox.initStore(device: "ios")
        let result = try await sandbox.run(
            [
                "migrate", backup, "--backup-password-file", passwordFile, "--app", "com.example.expoapp",
                "--store", store, "--format", "json",
            ])
        #expect(result.status == 0, "\(result.err)")
        expectNoSecret(result)
        let get = try await sandbox.run(["store", "get", "--store", store, "--service", "app", "authToken"])
        #expect(get.status == 0, "\(get.err)")
        // expo-secure-store reads `app:no-auth` first: its copy is the one migrated (the bare `app` one is shadowed).
        #expect(get.out == "sample-token-0203")
        let again = try await sandbox.run(
            [
                "migrate", backup, "--backup-password-file", passwordFile, "--app", "com.example.expoapp",
                "--store", store, "--format", "json",
            ])
        let actions = try #require(try json(again)["items"] as? [[String: Any]]).compactMap { $0["action"] as? String }
        #expect(!actions.contains("create"), "a second run finds the items in place: \(actions)")
        let files = try FileManager.default.subpathsOfDirectory(atPath: sandbox.path(""))
        for file in files where !file.hasPrefix("backup/") {
            guard let bytes = FileManager.default.contents(atPath: sandbox.path(file)) else { continue }
            for canary in Self.canaries {
                #expect(bytes.range(of: Data(canary.utf8)) == nil, "\(file) holds a secret in plaintext")
            }
        }
    }

    @Test("a backup in a searched folder is one dump, not searched; naming its Manifest.plist names it")
    func foundInAFolder() async throws {
        let folder = try await sandbox.run(
            ["inspect", sandbox.path(""), "--backup-password-file", passwordFile, "--format", "json"])
        #expect(folder.status == 0, "\(folder.err)")
        #expect(!folder.err.contains("skipped \(backup)/"), "a backup's files are not skipped one by one")
        let sources = try #require(try json(folder)["sources"] as? [[String: Any]])
        #expect(sources.map { $0["format"] as? String } == ["ios-encrypted-backup"])
        let manifest = try await sandbox.run(
            ["inspect", backup + "/Manifest.plist", "--backup-password-file", passwordFile, "--format", "json"])
        #expect(manifest.status == 0, "\(manifest.err)")
        #expect(try #require(try json(manifest)["sources"] as? [[String: Any]]).first?["path"] as? String == backup)
    }
}

/// The bundled sample backup's password, as `samples/ios-backup/password.txt` holds it.
enum IOSBackupSamplePassword {
    static var value: String {
        (try? String(
            contentsOf: EncryptedBackupCLITests.sample.appendingPathComponent("password.txt"), encoding: .utf8))?
            .trimmingCharacters(in: .newlines) ?? ""
    }
}

import ApexDumps
import ApexTestSupport
import Foundation
import SampleDumps
import Testing

/// Issue 32: a backup is one more input of `DumpReader`, not a second pipeline: its folder is one dump of format
/// `ios-encrypted-backup`, read with a `BackupAccess`, whose notes say what it can't open or never holds.
@Suite("Encrypted backups: DumpReader's view")
struct BackupDumpTests {
    static let password = "sample-backup-password"
    static let items = [
        BackupKeychainWriter.Item(service: "auth", account: "u", value: Array("v1".utf8)),
        BackupKeychainWriter.Item(
            service: "other", account: "u", value: Array("v2".utf8), accessGroup: "F9E8D7C6B5.com.other.app"),
        BackupKeychainWriter.Item(service: "token", account: "a", value: Array("v3".utf8), accessGroup: "apple"),
        BackupKeychainWriter.Item(service: "pin", account: "u", value: [7], protectionClass: 9),
        BackupKeychainWriter.Item(service: "pin2", account: "u", value: [8], protectionClass: 10),
    ]

    /// A folder holding a backup of `items`, and the scratch folder around it.
    func backup(
        encrypted: Bool = true, apps: [String] = ["com.example.app"]
    ) throws -> (ScratchFolder, String) {
        let scratch = try ScratchFolder()
        let folder = scratch.url.appendingPathComponent("backup")
        try BackupFolderWriter.write(
            to: folder, password: Self.password, items: Self.items, apps: apps, encrypted: encrypted)
        return (scratch, folder.path)
    }

    func access(app: String? = nil, _ asked: Counter = Counter()) -> BackupAccess {
        BackupAccess(app: app) { _ in
            asked.count += 1
            return Array(Self.password.utf8)
        }
    }

    final class Counter { var count = 0 }

    @Test("a backup's folder is one dump: the apps' items, the system's left out, ThisDeviceOnly ones counted")
    func oneDump() throws {
        let (scratch, folder) = try backup()
        _ = scratch
        let scan = try DumpReader.scan(paths: [folder], backups: access())
        let dump = try #require(scan.dumps.first)
        #expect(scan.dumps.count == 1)
        #expect(dump.format == .encryptedBackup && dump.format.platform == .ios)
        #expect(dump.path == folder)
        guard case .keychain(let records) = dump.content else {
            Issue.record("not keychain records")
            return
        }
        #expect(records.compactMap { $0.service?.text } == ["auth", "other"])
        #expect(dump.sealed == ["aku": 1, "cku": 1])
        #expect(dump.notes.contains { $0.hasPrefix("1 item of the system's access groups") })
        #expect(
            dump.notes.contains {
                $0.hasPrefix("2 items are sealed with the phone's own key (ThisDeviceOnly: aku 1, cku 1)")
            })
        #expect(dump.notes.last?.contains("never holds") == true)
    }

    @Test("with an app, only its access group's items are kept, and the others are counted")
    func appFilter() throws {
        let (scratch, folder) = try backup()
        _ = scratch
        let dump = try #require(
            try DumpReader.scan(paths: [folder], backups: access(app: "com.example.app")).dumps.first)
        guard case .keychain(let records) = dump.content else {
            Issue.record("not keychain records")
            return
        }
        #expect(records.compactMap { $0.service?.text } == ["auth"])
        #expect(dump.notes.first == "2 items of other access groups than com.example.app's left out (--app)")
    }

    @Test("an app that is not in the backup, with no item of its groups, is named as such; an app without items is not")
    func unknownApp() throws {
        let (scratch, folder) = try backup(apps: ["com.example.app", "com.example.empty"])
        _ = scratch
        let unknown = try #require(
            try DumpReader.scan(paths: [folder], backups: access(app: "com.exmaple.app")).dumps.first)
        #expect(
            unknown.notes.contains(
                "com.exmaple.app is not an app of this backup (its Manifest.plist lists 2: com.example.app, "
                    + "com.example.empty) and no item is of its access groups: check the bundle id; inspect "
                    + "--list-apps lists the backup's apps"), "\(unknown.notes)")
        let empty = try #require(
            try DumpReader.scan(paths: [folder], backups: access(app: "com.example.empty")).dumps.first)
        #expect(!empty.notes.contains { $0.contains("is not an app of this backup") }, "\(empty.notes)")
        let (many, manyFolder) = try backup(apps: (1...7).map { "com.example.app\($0)" })
        _ = many
        let long = try #require(
            try DumpReader.scan(paths: [manyFolder], backups: access(app: "com.exmaple.app")).dumps.first)
        #expect(
            long.notes.contains {
                $0.contains(
                    "lists 7: com.example.app1, com.example.app2, com.example.app3, "
                        + "com.example.app4, com.example.app5, …) and")
            }, "\(long.notes)")
    }

    @Test("a tombstone (tomb 1, a deleted item kept for sync) is left out with a note, never migrated")
    func tombstone() throws {
        let scratch = try ScratchFolder()
        let folder = scratch.url.appendingPathComponent("backup")
        let items = [
            BackupKeychainWriter.Item(service: "auth", account: "u", value: Array("v1".utf8)),
            BackupKeychainWriter.Item(service: "gone", account: "u", value: [], tombstone: true),
        ]
        try BackupFolderWriter.write(to: folder, password: Self.password, items: items, apps: ["com.example.app"])
        let dump = try #require(try DumpReader.scan(paths: [folder.path], backups: access()).dumps.first)
        guard case .keychain(let records) = dump.content else {
            Issue.record("not keychain records")
            return
        }
        #expect(records.compactMap { $0.service?.text } == ["auth"])
        #expect(dump.notes.first == "1 tombstone (tomb 1: deleted items kept for iCloud Keychain's sync) left out")
    }

    @Test("which groups are an app's, and which the system's")
    func groups() {
        #expect(BackupApps.owns(accessGroup: "ABCDE12345.com.example.app", app: "com.example.app"))
        #expect(BackupApps.owns(accessGroup: "com.example.app", app: "com.example.app"))
        #expect(!BackupApps.owns(accessGroup: "ABCDE12345.com.example.app.widget", app: "com.example.app"))
        #expect(!BackupApps.owns(accessGroup: "abcde12345.com.example.app", app: "com.example.app"))
        #expect(!BackupApps.owns(accessGroup: "ABCDE12345.com.example.apps", app: "com.example.app"))
        #expect(!BackupApps.owns(accessGroup: "ABCDE1234.xcom.example.app", app: "com.example.app"))
        #expect(BackupApps.isSystem(accessGroup: "apple"))
        #expect(BackupApps.isSystem(accessGroup: "com.apple.cfnetwork"))
        #expect(!BackupApps.isSystem(accessGroup: "ABCDE12345.com.example.app"))
        #expect(!BackupApps.isSystem(accessGroup: "group.com.example.shared"))
    }

    @Test("the apps' listing: each app of the manifest with its items, another app's group, then the system's")
    func listing() throws {
        let (scratch, folder) = try backup(apps: ["com.example.app", "com.example.empty"])
        _ = scratch
        let listing = try DumpReader.backupApps(folder, access: access(app: "com.example.app"))
        #expect(
            listing.entries == [
                .init(app: "com.example.app", accessGroups: ["ABCDE12345.com.example.app"], items: 1),
                .init(app: "com.example.empty", accessGroups: [], items: 0),
                .init(app: nil, accessGroups: ["F9E8D7C6B5.com.other.app"], items: 1),
                .init(app: nil, system: true, accessGroups: ["apple"], items: 1),
            ])
        #expect(listing.sealed == ["aku": 1, "cku": 1])
        #expect(listing.damaged == 0)
    }

    @Test("an unencrypted backup is refused before the password is asked; without access, a backup is unsupported")
    func refusals() throws {
        let (scratch, folder) = try backup(encrypted: false)
        _ = scratch
        let asked = Counter()
        #expect {
            try DumpReader.scan(paths: [folder], backups: access(asked))
        } throws: { error in
            let error = error as? DumpError
            return error?.kind == .unsupported && error?.path == folder + "/Manifest.plist"
                && error?.message.contains("make an encrypted backup") == true
        }
        #expect(asked.count == 0)
        let (other, encrypted) = try backup()
        _ = other
        #expect(
            throws: DumpError(
                .unsupported, path: encrypted, "an encrypted iPhone backup: reading it needs its password")
        ) {
            try DumpReader.scan(paths: [encrypted])
        }
    }

    @Test("a wrong password is its own kind, after the key derivation; the password's own error stops the scan")
    func wrongPassword() throws {
        let (scratch, folder) = try backup()
        _ = scratch
        var steps: [EncryptedBackup.Progress] = []
        let wrong = BackupAccess(password: { _ in Array("nope".utf8) }, progress: { _, step in steps.append(step) })
        #expect(throws: DumpError(.wrongPassword, path: folder, "the backup password is wrong")) {
            try DumpReader.scan(paths: [folder], backups: wrong)
        }
        #expect(steps == [.derivingKey(rounds: 100, sha1Rounds: 10), .keyDerived])
        let refusing = BackupAccess(password: { folder throws(DumpError) in
            throw DumpError(.unreadable, path: folder, "no password")
        })
        #expect(throws: DumpError(.unreadable, path: folder, "no password")) {
            try DumpReader.scan(paths: [folder], backups: refusing)
        }
    }

    @Test("a searched folder holds a backup as one entry, not its encrypted files")
    func discovery() throws {
        let (scratch, folder) = try backup()
        try Data("not a dump".utf8).write(to: scratch.url.appendingPathComponent("notes.txt"))
        #expect(try DumpReader.discover(scratch.url.path) == [folder, scratch.url.path + "/notes.txt"])
        let scan = try DumpReader.scan(paths: [scratch.url.path], backups: access())
        #expect(scan.dumps.map(\.format) == [.encryptedBackup])
        #expect(scan.skipped.map(\.path) == [scratch.url.path + "/notes.txt"])
    }

    @Test("a damaged item is named in the notes and the others are read")
    func damagedItem() throws {
        let scratch = try ScratchFolder()
        let folder = scratch.url.appendingPathComponent("backup")
        try BackupFolderWriter.write(to: folder, password: Self.password) { classKeys in
            try BackupKeychainTests.changingFirstItem(BackupKeychainWriter.write(Self.items, classKeys: classKeys))
        }
        let dump = try #require(try DumpReader.scan(paths: [folder.path], backups: access()).dumps.first)
        guard case .keychain(let records) = dump.content else {
            Issue.record("not keychain records")
            return
        }
        #expect(records.compactMap { $0.service?.text } == ["other"])
        #expect(dump.notes.contains { $0.hasPrefix("genp item 1 can't be read: ") }, "\(dump.notes)")
    }
}

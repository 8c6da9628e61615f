import ApexNettle
import Foundation

/// How ``DumpReader/scan(paths:standardInput:backups:)`` reads the encrypted backups it meets: where the password
/// comes from, which app's items to keep, and whom to tell while the key is derived.
public struct BackupAccess {
    /// The password of the backup in the folder given (its path as met), as UTF-8 bytes; asked once per backup,
    /// after its `Manifest.plist` shows it is encrypted. The reader wipes the bytes when done. A `DumpError` thrown
    /// here stops the scan.
    public var password: (_ folder: String) throws(DumpError) -> [UInt8]
    /// When set, the bundle ID of the one app whose items are kept (``BackupApps/owns(accessGroup:app:)``); the
    /// others are counted in the dump's notes.
    public var app: String?
    /// Told, with the backup's folder, when the key derivation starts and ends (it takes seconds).
    public var progress: (_ folder: String, _ step: EncryptedBackup.Progress) -> Void

    /// Creates the access.
    public init(
        app: String? = nil, password: @escaping (_ folder: String) throws(DumpError) -> [UInt8],
        progress: @escaping (_ folder: String, _ step: EncryptedBackup.Progress) -> Void = { _, _ in }
    ) {
        self.app = app
        self.password = password
        self.progress = progress
    }
}

/// Which keychain items of a backup belong to which app.
public enum BackupApps {
    /// Whether an item of `accessGroup` is `app`'s: the group is the app's own, `<App ID prefix>.<bundle ID>`
    /// (the prefix is the team's ten letters and digits), or the bundle ID itself. A group the app shares with
    /// others (`<prefix>.group.…`, a group of its own choosing) is not told from the backup, so it is not the
    /// app's here.
    public static func owns(accessGroup: String, app: String) -> Bool {
        if accessGroup == app { return true }
        guard accessGroup.utf8.count == app.utf8.count + 11, accessGroup.hasSuffix("." + app) else { return false }
        return !isSystem(accessGroup: accessGroup)
    }

    /// Whether `accessGroup` is one of iOS's own (`apple`, `com.apple.…`, `lockdown-identities`, …) rather than an
    /// app's: an app's access groups start with its App ID prefix (ten letters and digits, then a dot), or are an
    /// app group (`group.…`). A backup holds the whole phone's keychain, the system's items among them.
    public static func isSystem(accessGroup: String) -> Bool {
        if accessGroup.hasPrefix("group.") { return false }
        let bytes = Array(accessGroup.utf8.prefix(11))
        let prefixed =
            bytes.count == 11 && bytes[10] == UInt8(ascii: ".")
            && bytes[..<10].allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }
        return !prefixed
    }

    /// One app of a backup, or one access group no app of `Manifest.plist` owns.
    public struct Entry: Sendable, Equatable {
        /// The bundle ID; nil for a group no app of the manifest owns, and for the system's groups.
        public var app: String?
        /// Whether these are the system's access groups (``isSystem(accessGroup:)``), all in one entry.
        public var system: Bool = false
        /// The access groups of its items, sorted.
        public var accessGroups: [String]
        /// How many of the keychain's opened items are in them.
        public var items: Int

        /// Creates an entry.
        public init(app: String?, system: Bool = false, accessGroups: [String], items: Int) {
            self.app = app
            self.system = system
            self.accessGroups = accessGroups
            self.items = items
        }
    }

    /// What ``DumpReader/backupApps(_:access:)`` found in a backup.
    public struct Listing: Sendable, Equatable {
        /// The apps, then the access groups no app owns (``list(apps:records:)``).
        public var entries: [Entry]
        /// The items sealed with the phone's key, by protection (`aku`, …): no app can be told for them.
        public var sealed: [String: Int]
        /// How many items are damaged.
        public var damaged: Int
    }

    /// The apps of `manifest`, each with its items' access groups and count, then one entry per access group
    /// that no app of the manifest owns (an app group, an app not in the backup), by group, then one for all the
    /// system's groups.
    public static func list(apps: [String], records: [KeychainRecord]) -> [Entry] {
        var byGroup: [String: Int] = [:]
        for record in records { byGroup[record.accessGroup ?? "", default: 0] += 1 }
        var owned: Set<String> = []
        var entries: [Entry] = apps.map { app in
            let groups = byGroup.keys.filter { owns(accessGroup: $0, app: app) }.sorted()
            owned.formUnion(groups)
            return Entry(app: app, accessGroups: groups, items: groups.reduce(0) { $0 + byGroup[$1]! })
        }
        var system = Entry(app: nil, system: true, accessGroups: [], items: 0)
        for (group, count) in byGroup.sorted(by: { $0.key < $1.key }) where !owned.contains(group) {
            if isSystem(accessGroup: group) {
                system.accessGroups.append(group)
                system.items += count
            } else {
                entries.append(Entry(app: nil, accessGroups: [group], items: count))
            }
        }
        if system.items > 0 { entries.append(system) }
        return entries
    }
}

extension DumpReader {
    /// The protection (`pdmn`) of each class a backup's keychain uses (`ios-encrypted-backups.md` §1.3).
    static let backupProtections: [UInt32: String] = [
        6: "ak", 7: "ck", 8: "dk", 9: "aku", 10: "cku", 11: "dku", 12: "akpu",
    ]

    /// What a backup never holds, for every backup's notes (§1.8).
    static let backupNeverHolds =
        "a backup never holds items stored WhenPasscodeSetThisDeviceOnly (akpu) or with access control "
        + "(biometry, passcode, user presence): an app's such items are not in it, and only a migration on the "
        + "phone can move them"

    /// The encrypted backup in `folder`, read with `access`, as a dump: its opened items, and notes that count the
    /// sealed, damaged and left-out ones.
    static func readBackup(_ folder: String, access: BackupAccess?) throws(DumpError) -> Dump {
        try dump(openBackup(folder, access: access), folder: folder, app: access?.app)
    }

    /// The apps of the encrypted backup in `folder` (``BackupApps/list(apps:records:)``), read with `access` (its
    /// `app` is not applied: every app is listed), with the items that can't be opened or read, counted.
    /// - Throws: as ``scan(paths:standardInput:backups:)`` for a backup; `DumpError/Kind/unreadable` when `folder`
    ///   is not a backup's folder.
    public static func backupApps(_ folder: String, access: BackupAccess) throws(DumpError) -> BackupApps.Listing {
        guard let folder = backupFolder(named: folder) else {
            throw DumpError(
                .unreadable, path: folder, "not an iPhone backup's folder (no Manifest.plist and Manifest.db)")
        }
        let (backup, keychain) = try openBackup(folder, access: access)
        let dump = dump((backup, keychain), folder: folder, app: nil)
        return BackupApps.Listing(
            entries: BackupApps.list(apps: backup.manifest.apps, records: keychain.records), sealed: dump.sealed,
            damaged: keychain.damaged.count)
    }

    /// The backup in `folder` and its keychain, opened with `access`'s password.
    private static func openBackup(
        _ folder: String, access: BackupAccess?
    ) throws(DumpError) -> (EncryptedBackup, BackupKeychain) {
        let backup: EncryptedBackup
        do throws(EncryptedBackup.Failure) {
            backup = try EncryptedBackup(folder: URL(fileURLWithPath: folder))
        } catch {
            throw dumpError(error, folder: folder)
        }
        guard let access else {
            throw DumpError(.unsupported, path: folder, "an encrypted iPhone backup: reading it needs its password")
        }
        var password = try access.password(folder)
        defer { Nettle.wipe(&password) }
        let keychain: BackupKeychain
        do throws(EncryptedBackup.Failure) {
            keychain = try backup.keychain(password: password) { access.progress(folder, $0) }
        } catch {
            throw dumpError(error, folder: folder)
        }
        return (backup, keychain)
    }

    /// The dump of a backup's opened keychain: its records (only `app`'s when given), and its notes.
    private static func dump(_ opened: (EncryptedBackup, BackupKeychain), folder: String, app: String?) -> Dump {
        let keychain = opened.1
        var records = keychain.records
        var notes: [String] = []
        // A tombstone (`tomb` 1) is a deleted item iCloud Keychain keeps to sync the deletion: nothing to migrate.
        let stored = records.count
        records.removeAll { $0.extra["tomb"] == "1" }
        if records.count < stored {
            let count = stored - records.count
            notes.append(
                "\(count) tombstone\(count == 1 ? "" : "s") (tomb 1: deleted items kept for iCloud Keychain's sync) "
                    + "left out")
        }
        let before = records.count
        if let app {
            records.removeAll { !BackupApps.owns(accessGroup: $0.accessGroup ?? "", app: app) }
            let left = before - records.count
            if left > 0 {
                notes.append(
                    "\(left) item\(left == 1 ? "" : "s") of other access groups than \(app)'s left out (--app)")
            }
            let apps = opened.0.manifest.apps
            if records.isEmpty, !apps.contains(app) {
                // A typo in the bundle id reads as an app without items: say that it is no app of the backup.
                let shown = apps.prefix(5).joined(separator: ", ") + (apps.count > 5 ? ", …" : "")
                let listed = apps.isEmpty ? "lists no apps" : "lists \(apps.count): \(shown)"
                notes.append(
                    "\(app) is not an app of this backup (its Manifest.plist \(listed)) and no item is of its access "
                        + "groups: check the bundle id; inspect --list-apps lists the backup's apps")
            }
        } else {
            // The phone's own items (thousands on a real phone) are no app's to migrate.
            records.removeAll { $0.accessGroup.map(BackupApps.isSystem(accessGroup:)) ?? false }
            let left = before - records.count
            if left > 0 {
                notes.append(
                    "\(left) item\(left == 1 ? "" : "s") of the system's access groups (apple, com.apple.…: iOS's "
                        + "own, no app's) left out")
            }
        }
        var sealed: [String: Int] = [:]
        for (protectionClass, count) in keychain.sealedByClass {
            sealed[backupProtections[protectionClass] ?? "class \(protectionClass)", default: 0] += count
        }
        if !sealed.isEmpty {
            let total = sealed.values.reduce(0, +)
            let classes = sealed.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            notes.append(
                "\(total) item\(total == 1 ? " is" : "s are") sealed with the phone's own key (ThisDeviceOnly: "
                    + "\(classes)): a backup can't open them, nor tell whose they are; a migration on the phone "
                    + "can read them")
        }
        for (location, problem) in keychain.damaged {
            notes.append("\(location) can't be read: \(problem)")
        }
        notes.append(backupNeverHolds)
        var dump = Dump(path: folder, format: .encryptedBackup, content: .keychain(records))
        dump.notes = notes
        dump.sealed = sealed
        return dump
    }

    /// A backup's failure as a reader's error, naming the file.
    private static func dumpError(_ failure: EncryptedBackup.Failure, folder: String) -> DumpError {
        switch failure {
        case .wrongPassword:
            DumpError(.wrongPassword, path: folder, "the backup password is wrong")
        case .notEncrypted(let path):
            DumpError(
                .unsupported, path: path,
                "the backup is not encrypted, so its keychain is sealed with the phone's own key and can't be read "
                    + "off the phone: make an encrypted backup (Finder: 'Encrypt local backup'; idevicebackup2 "
                    + "encryption on) and read that")
        case .damaged(let path, let why):
            DumpError(.malformed, path: path, why)
        }
    }
}

import ApexDumps
import ApexKeychain
import Foundation

extension InspectCommand {
    /// `inspect BACKUP --list-apps`: each backup's apps, with how many keychain items each has, and the access
    /// groups no app of the backup owns; the sealed items, which can't be told to an app, counted.
    /// - Throws: 64 for a path that is not an iPhone backup's folder; as reading a backup otherwise.
    func listApps() throws(CLIError) {
        let failure = BackupOptions.PasswordFailure()
        var listings: [(String, BackupApps.Listing)] = []
        for path in paths {
            guard EncryptedBackup.isBackup(URL(fileURLWithPath: path)) else {
                throw .usage("'--list-apps' lists the apps of an iPhone backup's folder; \(path) is not one")
            }
            do throws(DumpError) {
                listings.append((path, try DumpReader.backupApps(path, access: backups.access(failure: failure))))
            } catch {
                throw failure.error ?? DumpInput.cliError(error)
            }
        }
        if json {
            try Console.write(Self.appsJSON(listings))
        } else {
            try Console.write(Data(listings.map { Self.appsText($0.0, $0.1) }.joined(separator: "\n").utf8))
        }
    }

    /// The listing as text: a table of app, items and access groups.
    static func appsText(_ path: String, _ listing: BackupApps.Listing) -> String {
        let apps = listing.entries.filter { $0.app != nil }
        var text =
            "apps of the backup \(DisplayText.escaped(path)) (\(Console.counted(apps.count, "app")) in Manifest.plist):\n"
        let names = listing.entries.map {
            DisplayText.escaped($0.app ?? ($0.system ? "(the system)" : "(no app of the backup)"))
        }
        let width = max(names.map(\.count).max() ?? 0, 3)
        func row(_ name: String, _ items: String, _ groups: String) -> String {
            "  " + name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                + String(repeating: " ", count: max(0, 5 - items.count)) + items + "  " + groups + "\n"
        }
        text += row("APP", "ITEMS", "ACCESS GROUPS")
        for (entry, name) in zip(listing.entries, names) {
            var groups = entry.accessGroups.map { $0.isEmpty ? "(none)" : DisplayText.escaped($0) }
            // The system has hundreds of groups on a real phone: a few name it (JSON lists them all).
            if groups.count > 3 { groups = groups.prefix(3) + ["+\(groups.count - 3) more"] }
            text += row(name, String(entry.items), groups.isEmpty ? "-" : groups.joined(separator: ", "))
        }
        let sealed = listing.sealed.values.reduce(0, +)
        if sealed > 0 {
            let classes = listing.sealed.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            text +=
                "sealed: \(Console.counted(sealed, "item")) (ThisDeviceOnly: \(classes.joined(separator: ", "))) "
                + "can't be opened off the phone, nor told to an app\n"
        }
        if listing.damaged > 0 {
            text += "damaged: \(Console.counted(listing.damaged, "item")) can't be read (inspect names them)\n"
        }
        return text
    }

    /// The listings as JSON: `{"backups": [{"path", "apps": [{"app", "system", "items", "accessGroups"}],
    /// "sealed", "damaged"}]}`, `app` null for an access group no app of the backup owns and for the system's.
    static func appsJSON(_ listings: [(String, BackupApps.Listing)]) throws(CLIError) -> Data {
        struct App: Encodable {
            var app: String?
            var system: Bool
            var items: Int
            var accessGroups: [String]
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(app, forKey: .app)
                try c.encode(system, forKey: .system)
                try c.encode(items, forKey: .items)
                try c.encode(accessGroups, forKey: .accessGroups)
            }
            enum CodingKeys: String, CodingKey { case app, system, items, accessGroups }
        }
        struct Backup: Encodable {
            var path: String
            var apps: [App]
            var sealed: [String: Int]
            var damaged: Int
        }
        let backups = listings.map { path, listing in
            Backup(
                path: path,
                apps: listing.entries.map {
                    App(app: $0.app, system: $0.system, items: $0.items, accessGroups: $0.accessGroups)
                },
                sealed: listing.sealed, damaged: listing.damaged)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(["backups": backups]) + Data("\n".utf8)
        } catch {
            throw CLIError(.ioError, "can't write the apps as JSON: \(error)")
        }
    }
}

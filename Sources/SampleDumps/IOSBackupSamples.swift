import ApexDumps
import Foundation

/// An encrypted Finder/iTunes backup of a made-up iPhone (`ios-encrypted-backups.md`): the four libraries' iOS
/// sample items in one phone's keychain, as a backup holds them. Their `akpu` and access-controlled items are not
/// in it (a backup never holds them); their ThisDeviceOnly items are, sealed with a key no one has (the phone's);
/// a few of the system's items sit beside them. `Manifest.plist` lists the four apps and one without keychain
/// items. The password is in `password.txt`; the key derivation takes a few rounds instead of ten million.
enum IOSBackupSamples {
    /// The backup's folder under `samples/`.
    static let folder = "ios-backup/backup"
    /// The backup's password (made up), as `password.txt` holds it.
    static let password = "sample-backup-password"

    /// The apps `Manifest.plist` lists.
    static let apps = [
        "com.example.sampleapp", "com.example.expoapp", "com.example.rnesapp", "com.example.rnsiapp",
        "com.example.notes",
    ]

    /// The items of the system's access groups, beside the apps'.
    static var systemItems: [SampleItem] {
        [("apple", "com.apple.account.IdentityServices.token"), ("com.apple.cfnetwork", "com.apple.cfnetwork")].map {
            group, service in
            SampleItem(
                itemClass: "genp", service: .string(service), account: .string("sample-system-account"),
                value: Data("sample-system-value".utf8), protection: "ck", accessGroup: group,
                created: SampleDates.at(hours: 1), modified: SampleDates.at(hours: 1))
        }
    }

    static func files() throws -> [SampleFile] {
        let items =
            ReactNativeKeychainSamples.iosItems + ExpoSecureStoreSamples.iosItems
            + ReactNativeEncryptedStorageSamples.iosItems + ReactNativeSensitiveInfoSamples.iosItems + systemItems
        let backup = try BackupFolderWriter.files(
            password: password, apps: apps, iterations: 10, passwordIterations: 1000, encrypted: true
        ) { BackupKeychainWriter.write(sampleItems: items, classKeys: $0, seed: 0x4241_434B) }
        var files = backup.map { path, data in
            SampleFile(
                path: "\(folder)/\(path)", data: data, format: path == "Manifest.plist" ? .encryptedBackup : nil,
                about: path == "Manifest.plist"
                    ? "the four libraries' iOS items in an encrypted Finder backup (password in "
                        + "`ios-backup/password.txt`); ThisDeviceOnly items sealed, akpu and access-controlled ones "
                        + "absent, as in a real backup; name the folder"
                    : "")
        }
        files.append(
            SampleFile(
                path: "ios-backup/password.txt", data: Data((password + "\n").utf8), format: nil, about: "",
                isKeychainDump: false))
        return files
    }
}

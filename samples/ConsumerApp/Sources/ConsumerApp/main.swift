// An app's start-up migration, written outside ApexKeychain against its library products: at launch, before the
// first keychain read, the app moves what react-native-keychain, expo-secure-store and
// react-native-encrypted-storage left behind into the package's keychain, once.
//
// On a phone the source is the device's keychain and the target the platform's database and device. Here the old
// items come from a keychain dump the app writes first (made-up values), and the target is an
// InMemoryKeychainDatabase on a SimulatedDevice. Nothing printed holds a secret.
import ApexDumps
import ApexKeychain
import ApexMigration
import ExpoSecureStoreImporter
import Foundation
import ReactNativeEncryptedStorageImporter
import ReactNativeKeychainImporter

let bundleID = "com.example.consumerapp"
let device = SimulatedDevice(bundleIdentifier: bundleID, teamIdentifier: "ABCDE12345")
let database = InMemoryKeychainDatabase()
let legacy = LegacyKeychain.items(bundleID: bundleID)

/// What the app does at launch: runs the migration unless an earlier launch completed it.
func migrateAtLaunch(from dumps: [Dump]) async -> (text: String, ok: Bool) {
    let migration = Migration(
        id: MigrationID("consumer-app-v1")!,
        importers: [ReactNativeKeychainImporter(), ExpoSecureStoreImporter(), ReactNativeEncryptedStorageImporter()],
        source: .dumps(dumps),
        target: MigrationTarget(database: database, device: device),
        policy: MigrationPolicy(importOptions: ImportOptions(bundleID: bundleID)))
    do {
        switch try await migration.runIfNeeded() {
        case .alreadyComplete:
            return ("already migrated", true)
        case .ran(let report):
            let s = report.summary
            let text =
                "migrated: \(s.found) found, \(s.verified) verified, \(s.failed) failed, \(s.conflict) conflicts, "
                + "\(s.blocked) blocked"
            return (text, !report.hasProblems)
        }
    } catch .tryLater(let why) {
        // The device is locked (a background launch, say): nothing was marked; the next launch tries again.
        return ("try later: \(why)", false)
    } catch {
        return ("migration stopped: \(error)", false)
    }
}

/// The app's new code reads its items through the package: how many hold what the old libraries stored.
func readBack() async -> Int {
    var matching = 0
    for item in legacy {
        do throws(KeychainError) {
            // react-native-encrypted-storage's items had no service: they are in the app's default service now.
            let service = item.service.isEmpty ? bundleID : item.service
            let keychain = try Keychain(KeychainOptions(service: service), database: database, device: device)
            let value: String?
            if item.isCredentials {
                let credentials = try await keychain.getCredentials()
                value = credentials?.username == item.key ? credentials?.password : nil
            } else {
                value = try await keychain.getItem(item.key)
            }
            if value == item.value { matching += 1 }
        } catch {
            FileHandle.standardError.write(Data("ConsumerApp: \(item.service): \(error.code)\n".utf8))
        }
    }
    return matching
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ConsumerApp-\(UUID().uuidString)")
let dumps: [Dump]
do {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let path = try LegacyKeychain.writeDump(legacy, accessGroup: device.defaultAccessGroup, into: folder)
    dumps = [try DumpReader.read(path: path)]
} catch {
    FileHandle.standardError.write(Data("ConsumerApp: can't write or read the legacy dump: \(error)\n".utf8))
    try? FileManager.default.removeItem(at: folder)
    exit(70)
}

let first = await migrateAtLaunch(from: dumps)
print("first launch: \(first.text)")
let matching = await readBack()
print("read back: \(matching) of \(legacy.count) items")
let next = await migrateAtLaunch(from: dumps)
print("next launch: \(next.text)")
try? FileManager.default.removeItem(at: folder)
exit(first.ok && next.ok && matching == legacy.count ? 0 : 1)

// How an app calls the migration at start-up: once, early, before the first keychain read
// (`migrateAtLaunch(database:device:)`, in MigrateAtLaunch.swift).
//
// The app's keychain database here is an in-memory one loaded with what expo-secure-store left on the device
// (the bundled sample dump stands in for the device's keychain). On a phone the database and device would be the
// platform's; the calls are the same.
import ApexDumps
import ApexKeychain
import ApexKeychainApple
import Foundation

/// Loads the sample dump's items into the database as the other library's items, as they sit on a device.
func loadDeviceKeychain(from path: String, into database: any KeychainDatabase, device: any Device) throws {
    let dump = try DumpReader.read(path: path)
    guard case .keychain(let records) = dump.content else { return }
    for record in records where record.knownClass == .genericPassword {
        guard let service = record.service?.text, let account = record.account?.text,
            case .data(let value) = record.value,
            let domain = record.protectionDomain
        else { continue }
        try database.add(
            KeychainItem(
                attributes: ItemAttributes(
                    service: service, account: account, accessGroup: record.accessGroup ?? device.defaultAccessGroup,
                    label: record.label, generic: record.generic?.bytes, protectionDomain: domain,
                    accessControl: record.accessControl?.flags ?? [], synchronizable: record.synchronizable),
                value: value))
    }
}

let arguments = CommandLine.arguments.dropFirst()
let dumpPath = arguments.first ?? "samples/expo-secure-store/ios/keychain.plist"
let device = SimulatedDevice()
let database = InMemoryKeychainDatabase()
do {
    try loadDeviceKeychain(from: dumpPath, into: database, device: device)
} catch {
    FileHandle.standardError.write(Data("StartupMigration: \(error)\n".utf8))
    exit(66)
}
print("first launch: \(await migrateAtLaunch(database: database, device: device))")
print("next launch: \(await migrateAtLaunch(database: database, device: device))")

// The same items in an emulated iPhone keychain (SecItemEmulator follows the Security framework's documented
// semantics), migrated as `startMigrationAtLaunch()` in MigrateOnIOS.swift does on a phone. The dump's items sit
// in the dumped app's access groups, which the emulated app is entitled to.
let phone = SimulatedDevice()
var groups = [phone.defaultAccessGroup]
if case .keychain(let records)? = try? DumpReader.read(path: dumpPath).content {
    for group in records.compactMap(\.accessGroup) where !groups.contains(group) { groups.append(group) }
}
let keychain = SecItemKeychainDatabase(calls: SecItemEmulator(device: phone, accessGroups: groups))
do {
    try loadDeviceKeychain(from: dumpPath, into: keychain, device: phone)
} catch {
    FileHandle.standardError.write(Data("StartupMigration: \(error)\n".utf8))
    exit(66)
}
print("on an iPhone: \(await migrateOnDevice(database: keychain, device: phone))")
print("next launch on an iPhone: \(await migrateOnDevice(database: keychain, device: phone))")

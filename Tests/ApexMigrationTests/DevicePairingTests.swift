import ApexDumps
import ApexKeychain
import ApexKeychainApple
import ApexKeychainStore
import ApexMigration
import ApexTestSupport
import Foundation
import Testing

/// Issue 28: a migration over a store with a device that isn't the store's own verified a `biometryCurrentSet`
/// item against the simulated enrolled set and removed its source; the first read through the store's own device
/// invalidated it, and both copies were gone. A migration now refuses such a pair before it reads or writes.
///
/// Only the store models a device of its own, so the refusals are the store's cases. A device's keychain
/// (`SecItemKeychainDatabase`) is the keychain of the device the app runs on: its `SecItemEmulator` reads the state
/// of the device it was made with, and the context a prompt leaves is evaluated on that device (`apple-secitem.md`
/// §2.7, "the caller's `kSecUseAuthenticationContext`"); a phone with another phone's keychain does not occur, and
/// the database accepts any device, as the in-memory one does. The migration through the database's own device
/// runs on every database.
@Suite("a store and a device that is not its own")
struct DevicePairingTests {
    static func store(_ profile: DeviceProfile) throws -> SQLiteKeychainDatabase {
        let url = try ScratchFolder.perProcess().appendingPathComponent("store.db")
        return try SQLiteKeychainDatabase.create(
            at: url, key: .keyFile(SQLiteKeychainDatabase.defaultKeyFile(for: url)), device: profile)
    }

    /// A react-native-keychain-like item in the store, protected by the current biometric set.
    static func seedBiometricItem(_ database: any KeychainDatabase, group: String) throws {
        try database.add(
            KeychainItem(
                attributes: ItemAttributes(
                    service: "svc", account: "expo-1", accessGroup: group, creator: nil, protectionDomain: .ak,
                    accessControl: [.biometryCurrentSet]),
                value: Data("v1".utf8)))
    }

    @Test(
        "a simulated iPhone over a linux store is refused, on-device with removeSource: nothing read, nothing removed")
    func simulatedDeviceOverLinuxStore() async throws {
        let database = try Self.store(.linux)
        let device = SimulatedDevice()
        try Self.seedBiometricItem(database, group: device.defaultAccessGroup)
        let before = try database.attributes(matching: ItemQuery())
        let migration = Migration(
            id: .forTests, importers: [CompletionMarkerTests.expo], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device), policy: MigrationPolicy(removeSource: true))
        for call in ["run", "runIfNeeded", "plan", "isComplete"] {
            let error = await #expect(throws: MigrationError.self, "\(call)") {
                switch call {
                case "run": _ = try await migration.run()
                case "runIfNeeded": _ = try await migration.runIfNeeded()
                case "plan": _ = try await migration.plan()
                default: _ = try await migration.isComplete()
                }
            }
            guard case .target(let failure)? = error else {
                Issue.record("\(call): \(String(describing: error)) is not a target failure")
                continue
            }
            #expect(failure.code == .INVALID_ARGUMENT, "\(call)")
            let why = failure.message
            #expect(why.contains("is not the one the store \(database.url.path) models ('linux')"), "\(why)")
            #expect(why.contains("platform iOS 18, not Linux"), "\(why)")
        }
        #expect(try database.attributes(matching: ItemQuery()) == before, "nothing written or removed")
    }

    @Test("a dump migration into a linux store through a simulated device is refused")
    func dumpsThroughAnotherDevice() async throws {
        let database = try Self.store(.linux)
        let migration = Migration(
            id: .forTests, importers: [CompletionMarkerTests.expo],
            source: .dumps([dump([("svc", "expo-1", "v1", "ck", [])])]),
            target: MigrationTarget(database: database, device: SimulatedDevice(platform: .linux)))
        let error = await #expect(throws: MigrationError.self) { _ = try await migration.run() }
        guard case .target(let failure)? = error else {
            Issue.record("\(String(describing: error)) is not a target failure")
            return
        }
        #expect(failure.code == .INVALID_ARGUMENT)
        #expect(try database.attributes(matching: ItemQuery()).isEmpty)
    }

    @Test("another store's device is refused; the store's own device, made again, is accepted")
    func terminalDevices() throws {
        let database = try Self.store(.linux)
        let other = try Self.store(.linux)
        #expect(database.problem(with: database.makeDevice(passcode: .none)) == nil)
        #expect(database.problem(with: TerminalDevice(store: database, passcode: .none)) == nil)
        let reopened = try SQLiteKeychainDatabase(
            opening: database.url, key: .keyFile(SQLiteKeychainDatabase.defaultKeyFile(for: database.url)))
        #expect(database.problem(with: reopened.makeDevice(passcode: .none)) == nil, "the same file")
        let problem = database.problem(with: other.makeDevice(passcode: .none))
        #expect(problem?.contains("the device is the store \(other.url.path)'s") == true)
    }

    @Test("on a phone profile: a device of the same state is accepted; another platform, set or passcode is refused")
    func phoneProfiles() throws {
        let ios = try Self.store(.ios)
        #expect(ios.problem(with: ios.makeDevice()) == nil)
        #expect(ios.problem(with: SimulatedDevice()) == nil, "the same iPhone, another app")
        #expect(ios.problem(with: SimulatedDevice(platform: .android(apiLevel: 34), biometry: .fingerprint)) != nil)
        #expect(ios.problem(with: SimulatedDevice(passcodeSet: false)) != nil)
        let reenrolled = SimulatedDevice()
        reenrolled.enrollBiometrics()
        #expect(ios.problem(with: reenrolled)?.contains("another enrolled biometric set") == true)
        let noPasscode = try Self.store(.iosNoPasscode)
        #expect(noPasscode.problem(with: noPasscode.makeDevice()) == nil)
        #expect(noPasscode.problem(with: SimulatedDevice())?.contains("a passcode, where the store's has none") == true)
        #expect(InMemoryKeychainDatabase().problem(with: SimulatedDevice(platform: .linux)) == nil, "any device")
        let keychain = SecItemKeychainDatabase(calls: SecItemEmulator(device: SimulatedDevice()))
        #expect(keychain.problem(with: SimulatedDevice(platform: .linux)) == nil, "any device")
    }

    @Test(
        "with the database's own device, the on-device migration of a biometryCurrentSet item keeps it readable",
        arguments: DatabaseKind.allCases)
    func ownDeviceKeepsTheItem(kind: DatabaseKind) async throws {
        let simulated = SimulatedDevice()
        let database = try kind.make(device: simulated)
        // The store's own device is the one it makes; the others' is the device they were made on.
        let store = database as? SQLiteKeychainDatabase
        let device = store?.makeDevice() ?? simulated
        try Self.seedBiometricItem(database, group: device.defaultAccessGroup)
        let migration = Migration(
            id: .forTests, importers: [CompletionMarkerTests.expo], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device),
            // A service of its own: the source, which has access control, can't make room in place. The app
            // names the access control it gave the item, which a device's keychain doesn't disclose for another
            // library's item (`apple-secitem.md` §2.4).
            policy: MigrationPolicy(
                removeSource: true, importOptions: ImportOptions(serviceMap: ["svc": "svc.migrated"]),
                protectedSourceItems: .readWithPrompt(
                    Prompt(title: "Move your saved sign-in"), accessControl: .biometryCurrentSet)))
        let report = try await migration.run()
        #expect(report.summary.verified == 1)
        let later = try Keychain(
            KeychainOptions(service: "svc.migrated"), database: database, device: store?.makeDevice() ?? simulated)
        #expect(try await later.getItem("expo-1") == "v1")
    }
}

import ApexKeychain
import ApexKeychainApple
import ApexKeychainStore
import Foundation
import Testing

/// The databases the core's rules and the migration are proved on. A test that takes one of these as its argument
/// (`arguments: DatabaseKind.allCases`) runs the same on each database.
public enum DatabaseKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    /// `InMemoryKeychainDatabase`.
    case inMemory
    /// The embedded store: a real SQLite file with a key file, in the process's scratch folder.
    case sqlite
    /// The iOS backend: `SecItemKeychainDatabase` over `SecItemEmulator`, which follows the device's lock,
    /// passcode and enrolled biometrics as the Security framework does.
    case secItem

    /// The case's name, as a test's argument.
    public var testDescription: String { rawValue }

    /// The databases an Android device's keychain is proved on. `SecItemKeychainDatabase` is the iOS Keychain's
    /// (its emulator follows the Security framework, `apple-secitem.md`); on Android the package keeps its items
    /// in files of its own, encrypted with a Keystore key (seed 001), so an Android device over it is no device.
    public static let android: [DatabaseKind] = allCases.filter { $0.runsOnAndroid }

    /// Whether an Android device's keychain can run on this database (see ``android``).
    public var runsOnAndroid: Bool { self != .secItem }

    /// Whether `atomically` is a real transaction on this database. A device's keychain can't group writes
    /// (`SecItemKeychainDatabase`'s `atomically` is the protocol's default: each call atomic on its own, a failure
    /// part-way leaves the calls before it done), so a test of undone writes expects that there.
    public var groupsWrites: Bool { self != .secItem }

    /// A new, empty database of this kind; the emulated keychain reads `device`'s state at every call.
    /// - Parameters:
    ///   - accessGroups: the emulated app's access groups (`SecItemEmulator(device:accessGroups:)`); nil for the
    ///     device's entitlement. The other databases have no groups of their own and ignore it.
    ///   - storeProfile: the device the SQLite store models (`SQLiteKeychainDatabase.problem(with:)`, which a
    ///     migration checks); the default is the iPhone a default `SimulatedDevice` is. The others ignore it.
    public func make(
        device: any Device, accessGroups: [String]? = nil, storeProfile: DeviceProfile = .ios
    ) throws -> any KeychainDatabase {
        try makeObserved(device: device, accessGroups: accessGroups, storeProfile: storeProfile).database
    }

    /// As ``make(device:accessGroups:storeProfile:)``, and for ``secItem`` the emulator behind the database, whose
    /// `calls` are the keychain round trips a device would make and whose `items` are the keychain's rows; nil for
    /// the others.
    public func makeObserved(
        device: any Device, accessGroups: [String]? = nil, storeProfile: DeviceProfile = .ios
    ) throws -> (database: any KeychainDatabase, emulator: SecItemEmulator?) {
        switch self {
        case .inMemory:
            return (InMemoryKeychainDatabase(), nil)
        case .sqlite:
            let store = try ScratchFolder.perProcess().appendingPathComponent("store.db")
            let database = try SQLiteKeychainDatabase.create(
                at: store, key: .keyFile(SQLiteKeychainDatabase.defaultKeyFile(for: store)), device: storeProfile)
            return (database, nil)
        case .secItem:
            let emulator = SecItemEmulator(device: device, accessGroups: accessGroups)
            return (SecItemKeychainDatabase(calls: emulator), emulator)
        }
    }
}

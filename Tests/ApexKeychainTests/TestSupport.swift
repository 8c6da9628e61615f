import ApexKeychain
import ApexKeychainApple
import ApexKeychainStore
import ApexTestSupport
import Foundation
import Testing

/// A keychain's database and simulated device, with both at hand for scripting.
struct Fixture {
    let database: any KeychainDatabase
    let device: SimulatedDevice
    /// The emulated keychain under a `secItem` database; nil for the others.
    let emulator: SecItemEmulator?

    /// - Parameter accessGroups: as ``DatabaseKind/make(device:accessGroups:storeProfile:)``: for a test that seeds
    ///   items in groups outside the device's entitlement, which a real keychain refuses (errSecMissingEntitlement,
    ///   `apple-secitem.md` §2.3 item 2, §2.8).
    init(
        _ kind: DatabaseKind = .inMemory, device: SimulatedDevice = SimulatedDevice(), accessGroups: [String]? = nil
    ) throws {
        // The store models this machine (`linux`, the store's default): the core's rules never ask which device a
        // store models; only a migration does.
        (self.database, self.emulator) = try kind.makeObserved(
            device: device, accessGroups: accessGroups, storeProfile: .linux)
        self.device = device
    }

    /// A fixture on a database made by the test (an in-memory one that fails a planted write, for example).
    init(database: any KeychainDatabase, device: SimulatedDevice = SimulatedDevice()) {
        self.database = database
        self.device = device
        self.emulator = nil
    }

    /// Where every stored item is (service, account, access group), seen from outside the app, whatever the
    /// device's state: the emulated keychain's rows for `secItem`, whose own listing is refused before the first
    /// unlock (`apple-secitem.md` §2.9); ``allItems()`` otherwise.
    func storedPlaces() throws -> [(service: String, account: String, accessGroup: String)] {
        guard let emulator else { return try allItems().map { ($0.service, $0.account, $0.accessGroup) } }
        func text(_ value: SecItemValue?) -> String {
            if case .string(let text)? = value { return text }
            return ""
        }
        return emulator.items.map {
            (text($0.attributes[.service]), text($0.attributes[.account]), text($0.attributes[.accessGroup]))
        }
    }

    /// A keychain on this fixture's database and device.
    func keychain(_ options: KeychainOptions = KeychainOptions()) throws -> Keychain {
        try Keychain(options, database: database, device: device)
    }

    /// Every item in the database, whoever wrote it.
    func allItems() throws -> [ItemAttributes] {
        try database.attributes(matching: ItemQuery())
    }

    /// Puts another library's item straight into the database, as a dump loader would.
    func seedForeign(
        service: String, account: String, value: Data = Data("foreign-secret".utf8), creator: UInt32? = nil,
        accessGroup: String? = nil, synchronizable: Bool = false
    ) throws {
        try database.add(
            KeychainItem(
                attributes: ItemAttributes(
                    service: service, account: account, accessGroup: accessGroup ?? device.defaultAccessGroup,
                    creator: creator, protectionDomain: .ck, synchronizable: synchronizable),
                value: value))
    }
}

/// Runs `body` and returns the code of the ``KeychainError`` it threw, or nil when it did not throw.
func errorCode(_ body: () async throws -> Void) async -> KeychainErrorCode? {
    do {
        try await body()
        return nil
    } catch let error as KeychainError {
        return error.code
    } catch {
        Issue.record("expected a KeychainError, got \(error)")
        return nil
    }
}

/// Runs `body` and returns the ``KeychainError`` it threw, or nil when it did not throw.
func thrown(_ body: () async throws -> Void) async -> KeychainError? {
    do {
        try await body()
        return nil
    } catch let error as KeychainError {
        return error
    } catch {
        Issue.record("expected a KeychainError, got \(error)")
        return nil
    }
}

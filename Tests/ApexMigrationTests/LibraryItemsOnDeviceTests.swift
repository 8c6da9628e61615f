import ApexKeychain
import ApexKeychainApple
import ApexMigration
import ExpoSecureStoreImporter
import Foundation
import ReactNativeEncryptedStorageImporter
import ReactNativeKeychainImporter
import ReactNativeSensitiveInfoImporter
import Testing

/// The `.database` source on the iOS backend: the emulator seeded with the very `SecItemAdd` dictionaries the old
/// libraries send (``LibraryQueries``), migrated by `Migration.onDevice` over `SecItemKeychainDatabase`, and held to
/// the issue's round trips on the emulator's `calls` (`apple-secitem.md` §8.3).
@Suite("On-device migration: the libraries' own items on the emulator", .serialized)
struct LibraryItemsOnDeviceTests {
    /// A library's items: the add dictionaries and the values they hold.
    struct Library: CustomTestStringConvertible, Sendable {
        var name: String
        var importer: @Sendable () -> any Importer
        /// Whether the items' targets are their very keys (react-native-sensitive-info's service `app` and key): a
        /// run moves each source aside (one SecItemUpdate) to make room, and without removeSource each is a conflict.
        var inPlace = false
        var items: @Sendable (Int) -> [(query: SecItemDictionary, value: String)]
        var testDescription: String { name }
    }

    static let bundleID = "com.example.app"

    static let libraries: [Library] = [
        Library(name: "react-native-keychain generic", importer: { ReactNativeKeychainImporter() }) { count in
            (0..<count).map { index in
                let value = "sample-password-\(index)"
                return (
                    LibraryQueries.keychainGeneric(service: "svc\(index)", username: "user\(index)", password: value),
                    value
                )
            }
        },
        Library(name: "react-native-keychain internet", importer: { ReactNativeKeychainImporter() }) { count in
            (0..<count).map { index in
                let value = "sample-password-\(index)"
                return (
                    LibraryQueries.keychainInternet(
                        server: "host\(index).example.com", username: "user\(index)", password: value), value
                )
            }
        },
        Library(name: "expo-secure-store", importer: { ExpoSecureStoreImporter() }) { count in
            (0..<count).map { index in
                let value = "sample-value-\(index)"
                return (LibraryQueries.expo(key: "key\(index)", value: value), value)
            }
        },
        Library(
            name: "react-native-sensitive-info", importer: { ReactNativeSensitiveInfoImporter() }, inPlace: true
        ) { count in
            (0..<count).map { index in
                let value = "sample-value-\(index)"
                return (LibraryQueries.sensitiveInfo(key: "key\(index)", value: value), value)
            }
        },
        Library(name: "react-native-encrypted-storage", importer: { ReactNativeEncryptedStorageImporter() }) { count in
            (0..<count).map { index in
                let value = "sample-value-\(index)"
                return (LibraryQueries.encryptedStorage(key: "key\(index)", value: value), value)
            }
        },
    ]

    /// An emulator on `device` holding `queries`, added as the library adds them; its calls forgotten.
    static func seeded(_ queries: [SecItemDictionary], device: SimulatedDevice) throws -> SecItemEmulator {
        let emulator = SecItemEmulator(device: device)
        for query in queries {
            let status = emulator.add(query)
            try #require(status == .success, "\(status)")
        }
        emulator.resetCalls()
        return emulator
    }

    static func migration(
        _ importer: any Importer, _ database: any KeychainDatabase, _ device: SimulatedDevice,
        removeSource: Bool = true, protected: MigrationPolicy.ProtectedSourceItems = .leavePending
    ) -> Migration {
        Migration.onDevice(
            id: .forTests, importers: [importer], database: database, device: device,
            policy: MigrationPolicy(
                removeSource: removeSource, importOptions: ImportOptions(bundleID: bundleID),
                protectedSourceItems: protected))
    }

    /// The values of the report's verified items, read back through a core `Keychain`.
    static func readBack(
        _ report: MigrationReport, _ database: any KeychainDatabase, _ device: SimulatedDevice
    ) async throws -> [String] {
        var values: [String] = []
        for item in report.items where item.result == .verified {
            let target = try #require(item.target)
            let keychain = try Keychain(KeychainOptions(service: target.service), database: database, device: device)
            let bytes = try #require(try await keychain.getBytes(target.key, GetOptions(prompt: Prompt())))
            values.append(String(decoding: bytes, as: UTF8.self))
        }
        return values
    }

    /// The emulator's calls of one run, sorted: the source listings, the ledger's (its records, one per batch and a
    /// few per run) and the items' own.
    struct RoundTrips: CustomStringConvertible {
        var sourceListings: [String: Int] = [:]
        var ledger = 0
        var items = 0
        var total = 0
        var authenticatedReads = 0

        init(_ calls: [SecItemEmulator.Call]) {
            total = calls.count
            for call in calls {
                // The source's listings name a class only: no service, no creator mark.
                if call.kind == .copyMatching, call.query[.matchLimit] == .string(SecItemConstant.matchLimitAll),
                    call.query[.creator] == nil, call.query[.service] == nil,
                    case .string(let itemClass)? = call.query[.itemClass]
                {
                    sourceListings[itemClass, default: 0] += 1
                } else if call.query[.service] == .string(Migration.ledgerService) {
                    ledger += 1
                } else {
                    items += 1
                    if case .authenticationContext(.evaluated)? = call.query[.authenticationContext] {
                        authenticatedReads += 1
                    }
                }
            }
        }

        var description: String {
            "total=\(total) sourceListings=\(sourceListings.sorted { $0.key < $1.key }) ledger=\(ledger) items=\(items) authenticated=\(authenticatedReads)"
        }
    }

    /// Migrates `count` items of `library` without access control, the sources removed, and checks the values and
    /// the round trips; returns the run's calls.
    @discardableResult
    static func migrate(_ library: Library, count: Int) async throws -> RoundTrips {
        let device = SimulatedDevice(bundleIdentifier: bundleID, teamIdentifier: "A1B2C3D4E5")
        let items = library.items(count)
        let emulator = try Self.seeded(items.map(\.query), device: device)
        let database = SecItemKeychainDatabase(calls: emulator)
        let clock = ContinuousClock()
        let started = clock.now
        let report = try await migration(library.importer(), database, device).run()
        let spent = clock.now - started
        let trips = RoundTrips(emulator.calls)
        #expect(
            report.summary.verified == count,
            "\(library.name): \(report.items.prefix(3).map { [$0.action?.rawValue, $0.reason, $0.resultReason] })")
        #expect(report.isComplete)
        let values = try await readBack(report, database, device)
        #expect(Set(values) == Set(items.map(\.value)), "every value, read back through a core Keychain")
        let foreign = emulator.items.filter { $0.attributes[.creator] != .number(0x4170_784B) }
        #expect(foreign.isEmpty, "every source removed: \(foreign.count) left")
        // Per run: at most two listings per class, whatever the count.
        #expect(trips.sourceListings.values.allSatisfy { $0 <= 2 }, "\(trips)")
        // Per item: the add, the read-back and the source's removal; in place, the source turned into the target
        // and the read-back.
        #expect(trips.items <= (library.inPlace ? 2 : 3) * count, "\(library.name), \(count) items: \(trips)")
        print("SecItem round trips, \(library.name), \(count) items, in \(spent): \(trips)")
        return trips
    }

    @Test(
        "10 items of each library: every value migrated, the sources removed, within the round trips",
        arguments: libraries)
    func tenItems(_ library: Library) async throws {
        try await Self.migrate(library, count: 10)
    }

    /// How fast is for `apex-keychain-bench`; here, the counts alone.
    @Test("1,000 items: the same bounds and the same number of listings", arguments: libraries)
    func thousandItems(_ library: Library) async throws {
        let small = try await Self.migrate(library, count: 10)
        let large = try await Self.migrate(library, count: 1000)
        #expect(large.sourceListings == small.sourceListings, "listings don't grow with the count")
    }

    @Test("without removeSource the sources stay, untouched", arguments: libraries)
    func sourcesStay(_ library: Library) async throws {
        let device = SimulatedDevice(bundleIdentifier: Self.bundleID, teamIdentifier: "A1B2C3D4E5")
        let seeded = library.items(3)
        let emulator = try Self.seeded(seeded.map(\.query), device: device)
        let before = emulator.items
        let database = SecItemKeychainDatabase(calls: emulator)
        let report = try await Self.migration(library.importer(), database, device, removeSource: false).run()
        #expect(emulator.items.filter { $0.attributes[.creator] == nil } == before)
        if library.inPlace {
            #expect(report.items.allSatisfy { $0.action == .conflict }, "a source holding its target key stays")
            return
        }
        #expect(report.summary.verified == 3)
        #expect(Set(try await Self.readBack(report, database, device)) == Set(seeded.map(\.value)))
    }

    @Test("a launch after the migration completed makes at most one keychain call", arguments: libraries)
    func launchAfterCompletion(_ library: Library) async throws {
        let device = SimulatedDevice(bundleIdentifier: Self.bundleID, teamIdentifier: "A1B2C3D4E5")
        let emulator = try Self.seeded(library.items(10).map(\.query), device: device)
        let database = SecItemKeychainDatabase(calls: emulator)
        guard case .ran = try await Self.migration(library.importer(), database, device).runIfNeeded() else {
            throw CancellationError()
        }
        device.relaunch()
        emulator.resetCalls()
        guard case .alreadyComplete = try await Self.migration(library.importer(), database, device).runIfNeeded()
        else {
            Issue.record("the second launch ran")
            return
        }
        #expect(emulator.calls.count <= 1, "\(emulator.callSummary)")
    }
}

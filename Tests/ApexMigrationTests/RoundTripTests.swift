import ApexDumps
import ApexKeychain
import ApexKeychainApple
import ApexMigration
import ApexTestSupport
import Foundation
import Testing

/// The start-up migration on the device, held to a number of keychain round trips (`apple-secitem.md` §8.3): every
/// database call is one, counted by kind (``CountingDatabase``), ledger records and parking included.
@Suite("On-device migration: round trips", .serialized)
struct RoundTripTests {
    /// `count` other libraries' items of service `legacy` in a fresh keychain, counted from here on.
    static func keychain(
        _ count: Int, device: SimulatedDevice = SimulatedDevice(), accessControl: AccessControlFlags = [],
        kind: DatabaseKind = .inMemory
    ) throws -> CountingDatabase {
        try observed(count, device: device, accessControl: accessControl, kind: kind).database
    }

    /// ``keychain(_:device:accessControl:kind:)``, and for ``DatabaseKind/secItem`` the emulator behind it, its
    /// calls forgotten once the items are in.
    static func observed(
        _ count: Int, device: SimulatedDevice = SimulatedDevice(), accessControl: AccessControlFlags = [],
        kind: DatabaseKind
    ) throws -> (database: CountingDatabase, emulator: SecItemEmulator?) {
        let (base, emulator) = try kind.makeObserved(device: device)
        for index in 0..<count {
            try base.add(
                KeychainItem(
                    attributes: ItemAttributes(
                        service: "legacy", account: "key\(index)", accessGroup: device.defaultAccessGroup,
                        creator: nil, protectionDomain: accessControl.isEmpty ? .ck : .aku,
                        accessControl: accessControl),
                    value: Data("sample-value-\(index)".utf8)))
        }
        emulator?.resetCalls()
        return (CountingDatabase(base), emulator)
    }

    /// The migration of `legacy` into `app` on the device, the sources removed once verified.
    static func migration(
        _ database: CountingDatabase, _ device: SimulatedDevice,
        protected: MigrationPolicy.ProtectedSourceItems =
            .leavePending, inPlace: Bool = false
    ) -> Migration {
        Migration.onDevice(
            id: .forTests, importers: [PlainImporter()], database: database, device: device,
            policy: MigrationPolicy(
                removeSource: true, importOptions: ImportOptions(serviceMap: inPlace ? [:] : ["legacy": "app"]),
                protectedSourceItems: protected))
    }

    /// What a first run costs beyond the listings and the items' own calls: the ledger's look-ups, its fingerprint
    /// key, the pending record and the completion marker, and per batch of writes (``MigrationPolicy/Batching``)
    /// its record, written before the items and again once they are read back.
    static func fixedCalls(batches: Int) -> Int { 16 + 6 * batches }

    /// How many batches the run's ledger recorded.
    static func batches(_ database: any KeychainDatabase, _ device: SimulatedDevice) async throws -> Int {
        try await Keychain(KeychainOptions(service: Migration.ledgerService), database: database, device: device)
            .getAllKeys().filter { $0.hasPrefix("entries:") }.count
    }

    /// The calls of a first run of `count` items without access control, checked against the bounds; returns them.
    @discardableResult
    static func firstRun(
        _ count: Int, inPlace: Bool = false, kind: DatabaseKind = .inMemory
    ) async throws -> CountingDatabase {
        let device = SimulatedDevice()
        let (database, emulator) = try observed(count, device: device, kind: kind)
        let clock = ContinuousClock()
        let started = clock.now
        guard case .ran(let report) = try await migration(database, device, inPlace: inPlace).runIfNeeded() else {
            throw CancellationError()
        }
        let spent = clock.now - started
        #expect(report.summary.verified == count, "\(report.summary)")
        #expect(
            try database.base.attributes(matching: ItemQuery()).allSatisfy(\.isApexItem), "every source removed")
        // Per run: one listing per class, whatever the count.
        #expect(database.count(.itemsWithValues) == 2)
        #expect(database.listingQueries.map(\.itemClass) == [.genericPassword, .internetPassword])
        #expect(database.count(.value) == 0, "never one read per source item")
        // Per item: the add, the read-back and the source's removal; in place, the source turned into the target
        // (one replacement) and the read-back: nothing renamed, added or removed.
        #expect(database.count(.item) == count, "\(database.summary)")
        #expect(database.count(.deleteKey) == (inPlace ? 0 : count), "\(database.summary)")
        if inPlace {
            #expect(database.count(.rename) == 0, "\(database.summary)")
            // The items' replacements, and the ledger's records of each batch.
            #expect(database.count(.replace) >= count, "\(database.summary)")
        }
        let calls = database.total
        let batches = try await batches(database.base, device)
        #expect(batches >= 1)
        let perItemBudget = inPlace ? 2 : 3
        #expect(
            calls <= 2 + perItemBudget * count + fixedCalls(batches: batches),
            "\(count) items: \(database.total) calls: \(database.summary)")
        print(
            "round trips, \(kind), \(count) items\(inPlace ? " in place" : ""): \(calls) calls, \(batches) batches, in \(spent): \(database.summary)"
        )
        if let emulator {
            print(
                "SecItem calls, \(count) items\(inPlace ? " in place" : ""): \(emulator.calls.count): \(emulator.callSummary), listings genp=\(emulator.listings(of: "genp")) inet=\(emulator.listings(of: "inet")), source listings genp=\(emulator.sourceListings(of: "genp")) inet=\(emulator.sourceListings(of: "inet"))"
            )
        }
        return database
    }

    @Test(
        "10 items: two listings, and at most the add, the read-back and the removal per item",
        arguments: DatabaseKind.allCases)
    func tenItems(kind: DatabaseKind) async throws {
        try await Self.firstRun(10, kind: kind)
    }

    /// How fast is for `apex-keychain-bench`; here, the counts alone.
    @Test("1,000 items: the same bounds", arguments: DatabaseKind.allCases)
    func thousandItems(kind: DatabaseKind) async throws {
        try await Self.firstRun(1000, kind: kind)
    }

    @Test(
        "in place (the source holds its target key): one replacement and the read-back per item",
        arguments: DatabaseKind.allCases)
    func inPlace(kind: DatabaseKind) async throws {
        try await Self.firstRun(10, inPlace: true, kind: kind)
        let large = try await Self.firstRun(100, inPlace: true, kind: kind)
        #expect(large.count(.add) <= 10, "only the ledger adds: \(large.summary)")
    }

    @Test(
        "a launch after a completed migration makes one keychain call: the marker's look-up",
        arguments: DatabaseKind.allCases)
    func launchAfterCompletion(kind: DatabaseKind) async throws {
        let device = SimulatedDevice()
        let (database, emulator) = try Self.observed(10, device: device, kind: kind)
        let migration = Self.migration(database, device)
        guard case .ran = try await migration.runIfNeeded() else { throw CancellationError() }
        device.relaunch()
        database.reset()
        emulator?.resetCalls()
        guard case .alreadyComplete = try await Self.migration(database, device).runIfNeeded() else {
            Issue.record("the second launch ran")
            return
        }
        #expect(database.total == 1, "\(database.summary)")
        if let emulator { #expect(emulator.calls.count == 1, "\(emulator.callSummary)") }
    }

    @Test("protected source items are left pending by default: no prompt, no read, a reason that names the policy")
    func protectedLeftPending() async throws {
        let device = SimulatedDevice()
        let database = try Self.keychain(3, device: device, accessControl: .biometryAny)
        guard case .ran(let report) = try await Self.migration(database, device).runIfNeeded() else {
            throw CancellationError()
        }
        #expect(device.promptCount == 0)
        #expect(database.count(.authenticatedValue) == 0 && database.count(.value) == 0)
        #expect(report.items.allSatisfy { $0.action == .blocked && $0.state == .pending && $0.cause == .needsPrompt })
        #expect(report.items.allSatisfy { $0.reason?.contains("protectedSourceItems") == true })
        #expect(try database.base.attributes(matching: ItemQuery()).filter { !$0.isApexItem }.count == 3)
        #expect(try await Self.migration(database, device).isComplete() == false)
    }

    @Test("allowed a prompt: one prompt for the run opens every protected item, one authenticated read each more")
    func protectedOnePrompt() async throws {
        let device = SimulatedDevice()
        let database = try Self.keychain(5, device: device, accessControl: .biometryAny)
        let migration = Self.migration(database, device, protected: .readWithPrompt(Prompt(title: "Move your data")))
        guard case .ran(let report) = try await migration.runIfNeeded() else { throw CancellationError() }
        #expect(report.summary.verified == 5, "\(report.items.map { $0.reason ?? "" })")
        #expect(device.promptCount == 1, "one prompt for the run, the read-backs included")
        #expect(device.prompts.first?.prompt.title == "Move your data")
        #expect(device.prompts.first?.accessControl == .biometryAny)
        #expect(database.count(.authenticatedValue) == 5 * 2, "the source's read and the target's read-back")
        #expect(database.count(.itemsWithValues) == 2)
        let app = try Keychain(KeychainOptions(service: "app"), database: database, device: device)
        #expect(try await app.getItemInfo("key0")?.accessControl == .biometryAny)
    }

    @Test("a read the shared context doesn't open falls back to a prompt of its own for that item")
    func protectedFallback() async throws {
        let device = SimulatedDevice()
        let database = OwnContextDatabase(try Self.keychain(3, device: device, accessControl: .biometryAny))
        let migration = Migration.onDevice(
            id: .forTests, importers: [PlainImporter()], database: database, device: device,
            policy: MigrationPolicy(
                removeSource: true, importOptions: ImportOptions(serviceMap: ["legacy": "app"]),
                protectedSourceItems: .readWithPrompt(Prompt())))
        guard case .ran(let report) = try await migration.runIfNeeded() else { throw CancellationError() }
        #expect(report.summary.verified == 3)
        // One shared prompt (which opens the first item), one of its own for each other item, and the read-backs
        // of the items the shared context doesn't open prompt through the keychain.
        #expect(device.prompts.filter { $0.service == "legacy" }.count == 3)
    }

    @Test(
        "an item with access control whose constraints the keychain doesn't disclose is never written weaker: pending (also when the app names .none), or migrated with the access control the app names"
    )
    func undisclosedAccessControl() async throws {
        for protected: MigrationPolicy.ProtectedSourceItems in [
            .leavePending, .readWithPrompt(Prompt()), .readWithPrompt(Prompt(), accessControl: .biometryCurrentSet),
            // A named `.none` names no protection: the keychain said the item has some.
            .readWithPrompt(Prompt(), accessControl: AccessControl.none),
        ] {
            let device = SimulatedDevice()
            let database = UndisclosingDatabase(try Self.keychain(2, device: device, accessControl: .biometryAny))
            let migration = Migration.onDevice(
                id: .forTests, importers: [PlainImporter()], database: database, device: device,
                policy: MigrationPolicy(
                    removeSource: true, importOptions: ImportOptions(serviceMap: ["legacy": "app"]),
                    protectedSourceItems: protected))
            let report = try await migration.run()
            let app = try Keychain(KeychainOptions(service: "app"), database: database, device: device)
            if case .readWithPrompt(_, let named?) = protected, named != .none {
                #expect(report.summary.verified == 2)
                #expect(try await app.getItemInfo("key0")?.accessControl == .biometryCurrentSet)
            } else {
                #expect(report.items.allSatisfy { $0.action == .blocked && $0.state == .pending })
                #expect(report.items.allSatisfy { $0.reason?.contains("disclose") == true }, "\(protected)")
                #expect(try await app.getAllKeys().isEmpty, "nothing written, weaker or not")
                #expect(device.promptCount == 0)
            }
        }
    }
}

/// A keychain that opens an item with access control only with the context of a prompt for that very item: a
/// shared context opens the first item only.
final class OwnContextDatabase: ForwardingDatabase, Sendable {
    let base: any KeychainDatabase
    init(_ base: any KeychainDatabase) { self.base = base }

    func value(
        for key: ItemAttributes.PrimaryKey, authentication: (any AuthenticationContext)?
    ) throws(KeychainDatabaseError) -> Data {
        if let evaluation = authentication as? SimulatedDevice.Evaluation, evaluation.request.key != key.account {
            throw KeychainDatabaseError(.authFailed, "the context was evaluated for another item")
        }
        return try base.value(for: key, authentication: authentication)
    }

    func item(
        for key: ItemAttributes.PrimaryKey, authentication: (any AuthenticationContext)?
    ) throws(KeychainDatabaseError) -> KeychainItem? {
        if let evaluation = authentication as? SimulatedDevice.Evaluation, evaluation.request.key != key.account {
            throw KeychainDatabaseError(.authFailed, "the context was evaluated for another item")
        }
        return try base.item(for: key, authentication: authentication)
    }

    func itemsWithValues(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ListedItem] {
        try base.itemsWithValues(matching: query)
    }

    func exclusively<T>(_ body: () throws -> T) throws -> T { try base.exclusively(body) }
}

/// A keychain that, as iOS does for other libraries' items, doesn't disclose access-control constraints: such an
/// item is listed with empty flags, its value as needing authentication.
final class UndisclosingDatabase: ForwardingDatabase, Sendable {
    let base: any KeychainDatabase
    init(_ base: any KeychainDatabase) { self.base = base }

    private static func hide(_ a: ItemAttributes) -> ItemAttributes {
        guard !a.isApexItem else { return a }
        var hidden = a
        hidden.accessControl = []
        return hidden
    }

    func itemsWithValues(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ListedItem] {
        try base.itemsWithValues(matching: query).map {
            ListedItem(attributes: Self.hide($0.attributes), value: $0.value)
        }
    }

    func attributes(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ItemAttributes] {
        try base.attributes(matching: query).map(Self.hide)
    }

    func exclusively<T>(_ body: () throws -> T) throws -> T { try base.exclusively(body) }
}

import ApexDumps
import ApexKeychain
import ApexMigration
import Foundation
import Testing

/// An importer of one library for these tests: the generic-password records whose account starts with
/// `<prefix>-` become string items of the same service, account, access group and protection.
struct PrefixImporter: Importer {
    let library: SourceLibrary
    let prefix: String

    func importItems(from dumps: [Dump], options: ImportOptions) throws(ImportError) -> [SourceItem] {
        var items: [SourceItem] = []
        for dump in dumps {
            guard case .keychain(let records) = dump.content else { continue }
            for record in records where record.itemClass == "genp" {
                guard let service = record.service?.text, let account = record.account?.text,
                    account.hasPrefix("\(prefix)-"), case .data(let data) = record.value
                else { continue }
                let accessible =
                    record.protection.flatMap(ProtectionDomain.init(rawValue:))?.accessible ?? .whenUnlocked
                let control = record.accessControl?.flags.accessControl ?? AccessControl.none
                items.append(
                    SourceItem(
                        library: library, platform: .ios,
                        origin: SourceOrigin(path: dump.path, format: dump.format, location: record.location),
                        source: SourceDescription(itemClass: "genp", service: service, account: account),
                        value: .value(data),
                        target: TargetItem(
                            service: options.serviceMap[service] ?? service, key: account, kind: .string,
                            options: SetOptions(accessible: accessible, accessControl: control),
                            accessGroup: record.accessGroup)))
            }
        }
        return items
    }
}

/// Issue 28: the first run's importers decided forever (an importer added in an app update never ran under the
/// same migration id), and an item under the completion marker's key counted as a marker whatever it held.
@Suite("the completion marker records the libraries")
struct CompletionMarkerTests {
    static let expo = PrefixImporter(library: .expoSecureStore, prefix: "expo")
    static let rnk = PrefixImporter(library: .reactNativeKeychain, prefix: "rnk")

    /// Two libraries' items in one dump.
    static let source = MigrationSource.dumps([
        dump([
            ("svc", "expo-1", "v1", "ck", []), ("svc", "expo-2", "v2", "ck", []), ("svc", "rnk-1", "v3", "ck", []),
            ("svc", "rnk-2", "v4", "ak", []),
        ])
    ])

    static func migration(
        _ importers: [any Importer], _ target: MigrationTarget, source: MigrationSource = source
    ) -> Migration {
        Migration(id: .forTests, importers: importers, source: source, target: target)
    }

    /// The ledger's keychain of `target`, as a tool would open it.
    static func ledger(_ target: MigrationTarget) throws -> Keychain {
        try target.keychain(service: Migration.ledgerService)
    }

    /// The target keys of a report's items (the source accounts: a report leaves react-native-keychain's out).
    static func accounts(_ report: MigrationReport) -> [String] {
        report.items.compactMap(\.target?.key).sorted()
    }

    @Test("an importer added in an app update migrates its library's items at the next launch, and only those")
    func importerAddedLater() async throws {
        let target = memoryTarget()
        let first = try await Self.migration([Self.expo], target).runIfNeeded()
        guard case .ran(let firstReport) = first else { throw CancellationError() }
        #expect(Self.accounts(firstReport) == ["expo-1", "expo-2"])
        #expect(try await Self.migration([Self.expo], target).isComplete())

        let updated = Self.migration([Self.expo, Self.rnk], target)
        #expect(try await !updated.isComplete(), "react-native-keychain was never planned")
        guard case .ran(let report) = try await updated.runIfNeeded() else {
            Issue.record("the added importer never ran")
            return
        }
        #expect(Self.accounts(report) == ["rnk-1", "rnk-2"], "only the added library's items are planned")
        #expect(report.items.allSatisfy { $0.result == .verified })
        let keychain = try target.keychain(service: "svc")
        #expect(try await keychain.getItem("rnk-2") == "v4")
        guard case .alreadyComplete = try await updated.runIfNeeded() else {
            Issue.record("the third launch ran again")
            return
        }
        // The marker keeps both: an update that drops an importer is still complete.
        #expect(try await Self.migration([Self.rnk], target).isComplete())
    }

    @Test("a library added while items are pending: planned once in full, then only what is pending")
    func importerAddedWhilePending() async throws {
        // No passcode: the `whenPasscodeSetThisDeviceOnly` item ("akpu") of expo stays pending.
        let device = SimulatedDevice(passcodeSet: false)
        let target = memoryTarget(device: device)
        let source = MigrationSource.dumps([
            dump([
                ("svc", "expo-1", "v1", "akpu", []), ("svc", "expo-2", "v2", "ck", []),
                ("svc", "rnk-1", "v3", "ck", []),
            ])
        ])
        guard case .ran(let first) = try await Self.migration([Self.expo], target, source: source).runIfNeeded()
        else { throw CancellationError() }
        #expect(first.items.map(\.state) == [.pending, .final])

        let updated = Self.migration([Self.expo, Self.rnk], target, source: source)
        guard case .ran(let second) = try await updated.runIfNeeded() else { throw CancellationError() }
        #expect(Self.accounts(second) == ["expo-1", "rnk-1"], "the pending item and the added library's")
        guard case .ran(let third) = try await updated.runIfNeeded() else { throw CancellationError() }
        #expect(Self.accounts(third) == ["expo-1"], "rnk-1 was planned and migrated: only the pending item is left")

        device.setPasscode(true)
        guard case .ran(let fourth) = try await updated.runIfNeeded() else { throw CancellationError() }
        #expect(fourth.items.map(\.result) == [.verified])
        #expect(try await updated.isComplete())
    }

    @Test("an empty list of importers is refused before anything is read or written")
    func emptyImportersRefused() async throws {
        let database = InMemoryKeychainDatabase()
        let target = MigrationTarget(database: database, device: SimulatedDevice())
        let migration = Self.migration([], target)
        for call in ["runIfNeeded", "run", "plan", "isComplete"] {
            let error = await #expect(throws: MigrationError.self, "\(call)") {
                switch call {
                case "runIfNeeded": _ = try await migration.runIfNeeded()
                case "run": _ = try await migration.run()
                case "plan": _ = try await migration.plan()
                default: _ = try await migration.isComplete()
                }
            }
            guard case .invalidPolicy(let why)? = error else {
                Issue.record("\(call): \(String(describing: error)) is not invalidPolicy")
                continue
            }
            #expect(why.contains("at least one importer"), "\(call)")
        }
        #expect(try database.attributes(matching: ItemQuery()).isEmpty, "no marker, no ledger")
        // The app's later release, with its importer, migrates everything.
        guard case .ran(let report) = try await Self.migration([Self.expo], target).runIfNeeded() else {
            throw CancellationError()
        }
        #expect(report.summary.verified == 2)
    }

    /// What an earlier version leaves: its marker, `1` without a label.
    static func plantLegacyMarker(_ target: MigrationTarget) async throws {
        try await Self.ledger(target).setItem(
            "done:default", "1", SetOptions(accessible: .afterFirstUnlockThisDeviceOnly))
    }

    /// Review of issue 28: an earlier version's marker counted for the current importers, so an importer added in
    /// the release that upgrades the package never ran under the same migration id.
    @Test(
        "an earlier version's marker (`1`) covers no library: an importer added with the upgrade migrates its items, and what earlier runs migrated stays as the app left it"
    )
    func legacyMarkerWithAddedImporter() async throws {
        let target = memoryTarget()
        guard case .ran = try await Self.migration([Self.expo], target).runIfNeeded() else { throw CancellationError() }
        try await Self.plantLegacyMarker(target)
        // Since then, the app removed one migrated item and changed the other.
        let keychain = try target.keychain(service: "svc")
        try await keychain.removeItem("expo-1")
        try await keychain.setItem("expo-2", "changed by the app", SetOptions(accessible: .afterFirstUnlock))

        let updated = Self.migration([Self.expo, Self.rnk], target)
        #expect(try await !updated.isComplete())
        guard case .ran(let report) = try await updated.runIfNeeded() else {
            Issue.record("the importer added with the upgrade never ran")
            return
        }
        #expect(Self.accounts(report) == ["rnk-1", "rnk-2"], "expo's items, which the ledger holds, are not planned")
        #expect(report.items.allSatisfy { $0.result == .verified })
        #expect(try await !keychain.hasItem("expo-1"), "an item the app removed is not brought back")
        #expect(try await keychain.getItem("expo-2") == "changed by the app")
        let info = try #require(try await Self.ledger(target).getItemInfo("done:default"))
        #expect(info.label == #"{"libraries":["expo-secure-store","react-native-keychain"]}"#)
        guard case .alreadyComplete = try await updated.runIfNeeded() else {
            Issue.record("the next launch ran again")
            return
        }
    }

    @Test(
        "an earlier version's marker, with the same importers: one run plans the libraries the ledger has no item of, and rewrites the marker",
        arguments: [true, false])
    func legacyMarkerSameImporters(migratedBefore: Bool) async throws {
        let target = memoryTarget()
        if migratedBefore {
            guard case .ran = try await Self.migration([Self.expo], target).runIfNeeded() else {
                throw CancellationError()
            }
        }
        try await Self.plantLegacyMarker(target)
        let migration = Self.migration([Self.expo], target)
        #expect(try await !migration.isComplete())
        guard case .ran(let report) = try await migration.runIfNeeded() else {
            Issue.record("an earlier version's marker counted for the current importers")
            return
        }
        // Migrated before: the ledger holds expo's items, which are not planned again. Never migrated (a marker
        // whose runs found nothing): expo is planned in full.
        #expect(Self.accounts(report) == (migratedBefore ? [] : ["expo-1", "expo-2"]))
        #expect(report.items.allSatisfy { $0.result == .verified })
        let info = try #require(try await Self.ledger(target).getItemInfo("done:default"))
        #expect(info.label == #"{"libraries":["expo-secure-store"]}"#)
        guard case .alreadyComplete = try await migration.runIfNeeded() else {
            Issue.record("the next launch ran again")
            return
        }
    }

    /// Review of issue 28: a run that had no importer for a library whose items were pending dropped them, and
    /// marked that library done; an update that brought its importer back found the migration complete.
    @Test(
        "items pending for a library a run doesn't plan stay pending: an update that brings its importer back migrates them",
        arguments: [false, true])
    func pendingLibraryLeftOut(narrowedByOptions: Bool) async throws {
        // No passcode: react-native-keychain's `whenPasscodeSetThisDeviceOnly` item ("akpu") stays pending.
        let device = SimulatedDevice(passcodeSet: false)
        let target = memoryTarget(device: device)
        let source = MigrationSource.dumps([
            dump([("svc", "expo-1", "v1", "ck", []), ("svc", "rnk-1", "v3", "akpu", [])])
        ])
        let both = Self.migration([Self.expo, Self.rnk], target, source: source)
        guard case .ran(let first) = try await both.runIfNeeded() else { throw CancellationError() }
        #expect(first.items.map(\.state) == [.final, .pending])

        // The next release has only expo's importer, or narrows ImportOptions.libraries to expo.
        var policy = MigrationPolicy()
        if narrowedByOptions { policy.importOptions.libraries = [.expoSecureStore] }
        let narrowed = Migration(
            id: .forTests, importers: narrowedByOptions ? [Self.expo, Self.rnk] : [Self.expo], source: source,
            target: target,
            policy: policy)
        for _ in 0..<2 {
            guard case .ran(let report) = try await narrowed.runIfNeeded() else {
                Issue.record("a run that never planned rnk-1 completed the migration")
                return
            }
            #expect(!report.items.contains { $0.result != nil }, "nothing written")
            #expect(try await !narrowed.isComplete())
        }

        device.setPasscode(true)
        guard case .ran(let third) = try await both.runIfNeeded() else {
            Issue.record("rnk-1 was recorded as done by a run that never planned it")
            return
        }
        #expect(third.items.filter { $0.result == .verified }.compactMap(\.target?.key) == ["rnk-1"])
        #expect(try await target.keychain(service: "svc").getItem("rnk-1") == "v3")
        #expect(try await both.isComplete())
        #expect(try await narrowed.isComplete())
    }

    @Test(
        "an item under the marker's key that is no marker (another value, another protection) does not complete the migration, and is never read with a prompt",
        arguments: [
            ("yes", SetOptions(accessible: .afterFirstUnlockThisDeviceOnly)),
            ("1", SetOptions(accessible: .afterFirstUnlock)),
            ("1", SetOptions(accessible: .afterFirstUnlockThisDeviceOnly, label: "done")),
            ("1", SetOptions(accessible: .whenUnlockedThisDeviceOnly, accessControl: .biometryAny)),
        ])
    func plantedMarker(value: String, options: SetOptions) async throws {
        let device = SimulatedDevice()
        let target = memoryTarget(device: device)
        try await Self.ledger(target).setItem("done:default", value, options)
        let migration = Self.migration([Self.expo], target)
        #expect(try await !migration.isComplete())
        guard case .ran(let report) = try await migration.runIfNeeded() else {
            Issue.record("the planted item completed the migration before it ran")
            return
        }
        #expect(report.summary.verified == 2)
        #expect(device.promptCount == 0)
        #expect(try await migration.isComplete(), "the run's own marker replaced it")
    }

    @Test("a record of pending items that doesn't decode is no record: the run plans everything, and doesn't stop")
    func plantedPendingRecord() async throws {
        let target = memoryTarget()
        try await Self.ledger(target).setItem(
            "pending:default", "not json", SetOptions(accessible: .afterFirstUnlockThisDeviceOnly))
        let migration = Self.migration([Self.expo], target)
        guard case .ran(let report) = try await migration.runIfNeeded() else { throw CancellationError() }
        #expect(report.summary.verified == 2)
        #expect(try await migration.isComplete())
        #expect(try await !Self.ledger(target).hasItem("pending:default"), "the complete run removed it")
    }
}

import ApexDumps
import ApexKeychain
import ApexKeychainStore
import ApexMigration
import ApexTestSupport
import Foundation
import Testing

/// Issue "Start-up migration an app can adopt", part 2: a run is complete only when nothing is left that a later
/// run could still migrate; a later `runIfNeeded` retries only what is pending; the policy can give up. Each case runs
/// on every database; the store models one device (`KeychainDatabase.problem(with:)`, `DevicePairingTests`), so a
/// case whose device gets a passcode between launches leaves it out.
@Suite("Pending items")
struct PendingItemsTests {
    typealias Record = (service: String, account: String, value: String, pdmn: String, flags: AccessControlFlags)

    static let records: [Record] = [
        ("app", "token", "sample-token-0001", "ck", []),
        ("app", "pin", "sample-pin-0002", "ck", [.devicePasscode]),
        ("app", "and-combination", "sample-x", "ck", []),
    ]

    static func migration(
        _ database: any KeychainDatabase, _ device: SimulatedDevice, policy: MigrationPolicy = .init()
    )
        -> Migration
    {
        var records = Self.records
        records[2].account = "blocked-and-combination"
        return Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(records)]),
            target: MigrationTarget(database: database, device: device), policy: policy)
    }

    static func item(_ report: MigrationReport, _ account: String) -> MigrationReport.Item? {
        report.items.first { $0.source.account == account }
    }

    /// A new database of `kind` on a new iPhone, with or without a passcode, counted; the store models that iPhone.
    static func target(
        _ kind: DatabaseKind, passcodeSet: Bool = true
    ) throws -> (database: CountingDatabase, device: SimulatedDevice) {
        let device = SimulatedDevice(passcodeSet: passcodeSet)
        let base = try kind.make(device: device, storeProfile: passcodeSet ? .ios : .iosNoPasscode)
        return (CountingDatabase(base), device)
    }

    /// The databases of a case whose device gets a passcode between launches: not the store, whose device is
    /// the one it models.
    static let passcodeChanges: [DatabaseKind] = [.inMemory, .secItem]

    @Test(
        "no passcode at launch 1: the passcode item is pending and the run incomplete; set before launch 2, it is migrated then; launch 3 costs one lookup",
        arguments: passcodeChanges)
    func passcodeSetBetweenLaunches(kind: DatabaseKind) async throws {
        let (database, device) = try Self.target(kind, passcodeSet: false)

        guard case .ran(let first) = try await Self.migration(database, device).runIfNeeded() else {
            Issue.record("launch 1 did not run")
            return
        }
        let pin = try #require(Self.item(first, "pin"))
        #expect(pin.action == .blocked && pin.cause == .keychain(.PASSCODE_NOT_SET) && pin.state == .pending)
        #expect(Self.item(first, "token")?.state == .final)
        // No equivalent protection can never succeed: it does not hold the migration open.
        #expect(Self.item(first, "blocked-and-combination")?.state == .final)
        #expect(!first.isComplete)
        #expect(try await !Self.migration(database, device).isComplete())

        device.setPasscode(true)
        device.relaunch()
        guard case .ran(let second) = try await Self.migration(database, device).runIfNeeded() else {
            Issue.record("launch 2 did not run")
            return
        }
        // Only what was pending is planned and written again.
        #expect(second.items.map(\.source.account) == ["pin"])
        #expect(second.items.first?.result == .verified && second.items.first?.state == .final)
        #expect(second.isComplete)
        let app = try Keychain(KeychainOptions(service: "app"), database: database, device: device)
        #expect(try await app.getItem("pin") == "sample-pin-0002")

        device.relaunch()
        database.reset()
        guard case .alreadyComplete = try await Self.migration(database, device).runIfNeeded() else {
            Issue.record("launch 3 ran again")
            return
        }
        #expect(database.reads == 1)
    }

    @Test(
        "a conflict the app resolves between launches is migrated at the next launch", arguments: DatabaseKind.allCases)
    func conflictResolvedBetweenLaunches(kind: DatabaseKind) async throws {
        let (database, device) = try Self.target(kind)
        let app = try Keychain(KeychainOptions(service: "app"), database: database, device: device)
        try await app.setItem("token", "the app's own token")

        guard case .ran(let first) = try await Self.migration(database, device).runIfNeeded() else { return }
        let token = try #require(Self.item(first, "token"))
        #expect(token.action == .conflict && token.cause == .heldByDifferentItem && token.state == .pending)
        // The reason ends with what to do (issue 31): the app's call, and the tool's command.
        #expect(
            token.reason?.hasSuffix(
                "remove that item first (Keychain.removeItem in the app, or apex-keychain store remove for a store), then run again"
            ) == true, "\(token.reason ?? "")")
        #expect(!first.isComplete)

        try await app.removeItem("token")
        device.relaunch()
        guard case .ran(let second) = try await Self.migration(database, device).runIfNeeded() else {
            Issue.record("launch 2 did not run")
            return
        }
        #expect(second.items.map(\.source.account) == ["token"])
        #expect(second.items.first?.result == .verified)
        #expect(second.isComplete)
        #expect(try await app.getItem("token") == "sample-token-0001")
        guard case .alreadyComplete = try await Self.migration(database, device).runIfNeeded() else {
            Issue.record("launch 3 ran again")
            return
        }
    }

    @Test(
        "the policy gives up after N launches: the item is reported given up, and the migration completes",
        arguments: DatabaseKind.allCases)
    func giveUpAfterLaunches(kind: DatabaseKind) async throws {
        let (database, device) = try Self.target(kind, passcodeSet: false)
        // No passcode is a reason the user can fix, which afterRuns keeps waiting for unless told otherwise.
        let policy = MigrationPolicy(giveUp: .init(afterRuns: 2, keepWaiting: []))
        guard case .ran(let first) = try await Self.migration(database, device, policy: policy).runIfNeeded() else {
            return
        }
        #expect(Self.item(first, "pin")?.state == .pending)
        #expect(
            Self.item(first, "pin")?.reason?.hasSuffix("; a later run migrates it once the device has a passcode")
                == true,
            "the reason ends with what lets a later run migrate it")
        // The summary and the verdict count it pending, beside the actions (issue 31).
        #expect(first.summary.pending == 1 && first.summary.givenUp == 0)
        #expect(first.verdict.migrated == 1 && first.verdict.leftBehind == 2)
        #expect(
            first.verdict.groups.map { "\($0.needs) \($0.reasonCode?.code ?? "-") \($0.state) \($0.count)" } == [
                "user PASSCODE_NOT_SET pending 1", "nothing noEquivalent final 1",
            ])
        device.relaunch()
        guard case .ran(let second) = try await Self.migration(database, device, policy: policy).runIfNeeded() else {
            Issue.record("launch 2 did not run")
            return
        }
        #expect(second.items.map(\.source.account) == ["pin"])
        #expect(second.items.first?.state == .givenUp)
        #expect(second.summary.pending == 0 && second.summary.givenUp == 1)
        #expect(second.verdict.groups.map(\.state) == [.givenUp])
        #expect(
            second.verdict.lines().last?.contains("(PASSCODE_NOT_SET, given up)") == true, "\(second.verdict.lines())")
        #expect(second.isComplete)
        #expect(MigrationReport.self == type(of: second))
        guard case .alreadyComplete = try await Self.migration(database, device, policy: policy).runIfNeeded() else {
            Issue.record("launch 3 ran again")
            return
        }
    }

    @Test(
        "after N launches, an item waiting for the user to set a passcode or enrol biometrics keeps waiting",
        arguments: [(true, false), (false, true)])
    func waitingForTheUserIsNotGivenUp(passcodeSet: Bool, enrolled: Bool) async throws {
        let database = InMemoryKeychainDatabase()
        let device = SimulatedDevice(passcodeSet: passcodeSet, biometricsEnrolled: enrolled)
        // The pin behind biometrics, or the passcode: what the user can still set up.
        var records = Self.records
        records[1].flags = passcodeSet ? [.biometryCurrentSet] : [.devicePasscode]
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(records)]),
            target: MigrationTarget(database: database, device: device),
            policy: MigrationPolicy(giveUp: .init(afterRuns: 1)))
        for _ in 1...3 {
            guard case .ran(let report) = try await migration.runIfNeeded() else {
                Issue.record("a launch did not run")
                return
            }
            let pin = Self.item(report, "pin")
            #expect(pin?.state == .pending, "\(String(describing: pin?.cause))")
            #expect(
                pin?.cause == .keychain(passcodeSet ? .BIOMETRY_NOT_ENROLLED : .PASSCODE_NOT_SET),
                "\(String(describing: pin?.cause))")
            device.relaunch()
        }
        #expect(try await migration.isComplete() == false)
    }

    @Test("the policy gives up at once for the reasons it names", arguments: DatabaseKind.allCases)
    func giveUpForReasons(kind: DatabaseKind) async throws {
        let policy = MigrationPolicy(giveUp: .init(reasons: [.keychain(.PASSCODE_NOT_SET)]))
        let (database, device) = try Self.target(kind, passcodeSet: false)
        let migration = Self.migration(database, device, policy: policy)
        guard case .ran(let report) = try await migration.runIfNeeded() else { return }
        #expect(Self.item(report, "pin")?.state == .givenUp)
        #expect(report.isComplete)
        #expect(try await migration.isComplete())
    }

    /// Not on the store: the device gets a passcode between launches (``passcodeChanges``).
    @Test(
        "on the device, a later launch reads the values of only the source items left pending",
        arguments: passcodeChanges)
    func onDeviceRetryReadsOnlyPendingValues(kind: DatabaseKind) async throws {
        let (database, device) = try Self.target(kind, passcodeSet: false)
        func foreign(_ service: String, _ account: String, flags: AccessControlFlags = []) throws {
            try database.base.add(
                KeychainItem(
                    attributes: ItemAttributes(
                        service: service, account: account, accessGroup: device.defaultAccessGroup, creator: nil,
                        protectionDomain: .ck, accessControl: flags),
                    value: Data("value-of-\(account)".utf8)))
        }
        try foreign("app", "token")
        try foreign("app", "pin", flags: [.devicePasscode])
        for index in 1...5 { try foreign("app", "skip-\(index)") }
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device),
            // A service of its own: the pin, which has access control, can't make room in place. The app names the
            // access control it gave the pin, which a device's keychain doesn't disclose (`apple-secitem.md` §2.4).
            policy: MigrationPolicy(
                removeSource: true, importOptions: ImportOptions(serviceMap: ["app": "app.migrated"]),
                protectedSourceItems: .readWithPrompt(
                    Prompt(title: "Move your saved sign-in"), accessControl: .passcode)))

        guard case .ran(let first) = try await migration.runIfNeeded() else { return }
        #expect(first.items.first { $0.source.account == "pin" }?.state == .pending)
        // The pin's prompt can't pass without a passcode: its value is not read.
        #expect(database.foreignValueReads == 6)

        device.setPasscode(true)
        device.relaunch()
        let before = database.foreignValueReads
        guard case .ran(let second) = try await migration.runIfNeeded() else {
            Issue.record("launch 2 did not run")
            return
        }
        #expect(second.items.map(\.source.account) == ["pin"])
        #expect(second.items.first?.result == .verified)
        // The five skipped items stay in the keychain, and their values are not read again.
        #expect(database.foreignValueReads - before == 1)
        #expect(
            try await Keychain(KeychainOptions(service: "app.migrated"), database: database, device: device).getItem(
                "pin") == "value-of-pin")
    }

    @Test(
        "the device locked in the middle of a run: what could not be written is pending, and the next launch finishes it",
        arguments: DatabaseKind.allCases)
    func lockedMidRun(kind: DatabaseKind) async throws {
        let (database, device) = try Self.target(kind)
        let records: [Record] = [
            ("app", "a", "sample-a", "ck", []), ("app", "b", "sample-b", "ak", []), ("app", "c", "sample-c", "ak", []),
        ]
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(records)]),
            target: MigrationTarget(database: database, device: device))
        // The ledger's first record and item `a` are added, then the user locks the phone.
        database.after(adds: 3) { device.lock() }
        guard case .ran(let first) = try await migration.runIfNeeded() else {
            Issue.record("launch 1 did not run")
            return
        }
        #expect(first.items.map(\.result) == [.verified, .failed, .failed])
        #expect(
            first.items.dropFirst().allSatisfy {
                $0.cause == .keychain(.INTERACTION_NOT_ALLOWED) && $0.state == .pending
            })
        #expect(!first.isComplete)
        // The verdict counts the failed writes as left behind, waiting for the user to unlock the phone.
        #expect(first.verdict.kind == .run && first.verdict.migrated == 1 && first.verdict.leftBehind == 2)
        #expect(
            first.verdict.groups.map { "\($0.needs) \($0.reasonCode?.code ?? "-") \($0.state) \($0.count)" } == [
                "user INTERACTION_NOT_ALLOWED pending 2"
            ])
        #expect(first.summary.pending == 2 && first.summary.failed == 2)

        device.unlock()
        device.relaunch()
        guard case .ran(let second) = try await migration.runIfNeeded() else {
            Issue.record("launch 2 did not run")
            return
        }
        #expect(second.items.map(\.source.account) == ["b", "c"])
        #expect(second.items.allSatisfy { $0.result == .verified })
        #expect(second.isComplete)
    }
}

import ApexDumps
import ApexKeychain
import ApexKeychainStore
import Foundation
import Testing

@testable import ApexMigration

/// A migration killed at any point loses nothing, and the next run completes it: after a `migrate` into a store
/// is SIGKILLed at a seed-chosen moment, a second run finishes, and a third finds every item in place.
@Suite("migrate: killed and resumed", .serialized)
struct MigrateCrashTests {
    static let plist = sample("react-native-keychain/ios/keychain.plist")

    /// react-native-sensitive-info's iOS sample: classic, 5.6.x and 6.x items, access control among them.
    static let sensitiveInfo = [
        sample("react-native-sensitive-info/ios/keychain.plist"), "--bundle-id", "com.example.rnsiapp",
    ]

    /// Starts `apex-keychain migrate` into `store` and kills it after `delay`.
    static func killedRun(
        store: String, in sandbox: Sandbox, after delay: Duration,
        dump: [String] = [plist, "--bundle-id", "com.example.sampleapp"]
    ) async throws {
        let binary = try #require(CLIBinary.url)
        let process = Process()
        process.executableURL = binary
        process.arguments = ["migrate"] + dump + ["--store", store, "--quiet", "--format", "json"]
        process.currentDirectoryURL = sandbox.url
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try await Task.sleep(for: delay)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    static func report(_ result: CLIResult) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
    }

    @Test(
        "a migrate killed at a seed-chosen point is completed by the next run, and a third run finds all in place",
        arguments: 1...8)
    func killedThenResumed(seed: Int) async throws {
        try await Self.killedThenResumed(seed: seed, dump: [Self.plist, "--bundle-id", "com.example.sampleapp"])
    }

    @Test("the same for react-native-sensitive-info's sample", arguments: 1...4)
    func sensitiveInfoKilledThenResumed(seed: Int) async throws {
        try await Self.killedThenResumed(seed: seed, dump: Self.sensitiveInfo)
    }

    static func killedThenResumed(seed: Int, dump: [String]) async throws {
        let sandbox = try Sandbox()
        let store = try await sandbox.initStore(device: "ios")
        // Deterministic delays from 2 to 58 ms: before, during and after the writes of a run of a few ms.
        try await killedRun(store: store, in: sandbox, after: .milliseconds(2 + (seed * 37) % 57), dump: dump)

        let resumed = try await sandbox.run(["migrate"] + dump + ["--store", store, "--format", "json"])
        #expect(resumed.status == 0, "\(resumed.err)")
        let summary = try #require(try report(resumed)["summary"] as? [String: Int])
        #expect(summary["failed"] == 0)
        #expect(
            summary["conflict"] == 0, "a half-finished run must not leave items that conflict with their own source")

        let third = try await sandbox.run(["migrate"] + dump + ["--store", store, "--format", "json"])
        #expect(third.status == 0)
        let after = try #require(try report(third)["summary"] as? [String: Int])
        #expect(after["create"] == 0)
        #expect(after["exists"] == (summary["create"] ?? 0) + (summary["exists"] ?? 0))
        #expect(after["written"] == 0)
    }
}

/// A migration in batches killed at any point loses its uncommitted batch and nothing else, and the next run
/// completes it. A `store-writer` child migrates 60 items in batches of 6 (from a dump, or on the device from
/// other libraries' items in the store itself, removing each source once migrated) and sends itself SIGKILL at a
/// seeded event: before one of its writes, or right after one of its commits. Then:
/// - every item of the package is the one a complete run writes (old or new, never a part), and they come in
///   whole batches;
/// - the ledger names exactly the items in the store, with their fingerprints, and at most one batch pending;
/// - every source item is still there (in place or parked, as it was), or its target is in place and verified, or
///   the source was turned into its target and the target's pending entry names it;
/// - a second run completes, and leaves the store a clean run leaves.
@Suite("migrate in batches: killed at seeded points and resumed")
struct BatchedMigrateCrashTests {
    /// A clean run of each source, once: how many events it has, and the store it leaves.
    actor References {
        private var runs: [BatchedMigration.Source: (events: Int, snapshot: StoreSnapshot)] = [:]

        func reference(_ source: BatchedMigration.Source) throws -> (events: Int, snapshot: StoreSnapshot) {
            if let run = runs[source] { return run }
            let sandbox = try Sandbox()
            let (store, keyFile, dump) = try BatchedMigration.prepare(source, in: sandbox)
            let run = try BatchedMigration.child(source, store: store, keyFile: keyFile, dump: dump, killAt: nil)
            guard run.reason == .exit, run.status == 0,
                let line = run.output.split(separator: "\n").first(where: { $0.hasPrefix("events ") }),
                let events = Int(line.dropFirst("events ".count))
            else {
                throw CocoaError(.executableLoad, userInfo: [NSDebugDescriptionErrorKey: "store-writer: \(run.errors)"])
            }
            let snapshot = try StoreSnapshot(SQLiteKeychainDatabase(opening: store, key: .keyFile(keyFile)))
            runs[source] = (events, snapshot)
            return (events, snapshot)
        }
    }

    static let references = References()

    @Test(
        "a migration from a dump killed at one of 30 points spread over its batches is completed by the next run",
        arguments: 0..<30)
    func killedFromDump(point: Int) async throws {
        try await killedAndResumed(.dump, point: point, of: 30)
    }

    @Test(
        "an on-device migration that removes its sources, killed at one of 24 points, loses no source item",
        arguments: 0..<24)
    func killedOnDevice(point: Int) async throws {
        try await killedAndResumed(.store, point: point, of: 24)
    }

    func killedAndResumed(_ source: BatchedMigration.Source, point: Int, of count: Int) async throws {
        let reference = try await Self.references.reference(source)
        #expect(reference.snapshot.items.count >= BatchedMigration.items)
        // Event numbers from the first to the last, evenly spread: each falls at another place in its batch.
        let killAt = 1 + point * (reference.events - 1) / (count - 1)
        let sandbox = try Sandbox()
        let (store, keyFile, dump) = try BatchedMigration.prepare(source, in: sandbox)
        let before = try StoreSnapshot(SQLiteKeychainDatabase(opening: store, key: .keyFile(keyFile)))
        let run = try BatchedMigration.child(source, store: store, keyFile: keyFile, dump: dump, killAt: killAt)
        try #require(
            run.reason == .uncaughtSignal && run.status == SIGKILL,
            "event \(killAt) of \(reference.events): \(run.errors)")

        let database = try SQLiteKeychainDatabase(opening: store, key: .keyFile(keyFile))
        let killed = try StoreSnapshot(database)
        var dumps = [dump]
        if source == .store { dumps.append(sample("expo-secure-store/ios/keychain.plist")) }
        var expected = try dumps.reduce(into: [String: (target: TargetItem, value: SourceValue)]()) { all, path in
            all.merge(try BatchedMigration.expected(dump: path)) { first, _ in first }
        }
        if source == .store {
            let records = try BatchedMigration.encryptedStorageRecords()
            #expect(!records.isEmpty)
            let dump = Dump(path: "rnes", format: .iosPlist, content: .keychain(records))
            expected.merge(try BatchedMigration.expected(dumps: [dump])) { first, _ in first }
            // react-native-encrypted-storage's items are migrated too, to the app's bundle id.
            let place = BatchedMigration.place("com.example.expoapp", "user_session")
            #expect(expected[place] != nil && reference.snapshot.items[place] != nil)
        }

        // Old or new: each item is the one a complete run writes, and whole batches of them.
        for (name, item) in killed.items {
            #expect(reference.snapshot.items[name] == item, "\(name) after event \(killAt)")
        }
        let present = killed.items.count
        #expect(present % BatchedMigration.batch == 0 || present == reference.snapshot.items.count, "\(present) items")
        if source == .dump {
            let order = reference.snapshot.items.keys.sorted()
            #expect(killed.items.keys.sorted() == Array(order.prefix(present)), "the batches commit in order")
        }

        // The ledger says of every item what the store holds.
        let ledger = try Ledger(
            target: MigrationTarget(database: database, device: BatchedMigration.device()), id: "default")
        var digests = Set<String>()
        for name in killed.items.keys {
            let (target, value) = try #require(expected[name], "\(name) is no item of the dump")
            let digest = Ledger.digest(target)
            digests.insert(digest)
            let fingerprint = try await ledger.fingerprint(of: value, kind: target.kind, create: false)
            #expect(killed.entries[digest]?.fingerprint == fingerprint, "\(name)'s entry")
        }
        #expect(Set(killed.entries.keys) == digests, "entries for exactly the items in the store")
        #expect(killed.entries.values.filter { $0.state == .pending }.count <= BatchedMigration.batch)

        // No source item lost: each is as it was (in place, or parked while its journal names it), or its target
        // is in place and verified.
        let parkingSuffix = ParkedItem.suffix
        for (name, item) in killed.foreign {
            let original = name.hasSuffix(parkingSuffix) ? String(name.dropLast(parkingSuffix.count)) : name
            var unparked = item
            if name != original {
                unparked.attributes.account = String(item.attributes.account.dropLast(parkingSuffix.count))
            }
            #expect(before.foreign[original] == unparked, "\(original) changed")
            if name != original {
                #expect(killed.records.contains { $0.hasPrefix("journal:") }, "\(original) is parked without a journal")
            }
        }
        for (name, item) in before.foreign
        where killed.foreign[name] == nil && killed.foreign[name + parkingSuffix] == nil {
            let targets = killed.items.filter { $0.value.attributes.account == item.attributes.account }
            // Or turned into its target in place, its value never in two items nor in none: the pending entry,
            // recorded before the conversion, names it, and the next run verifies it there.
            #expect(
                targets.contains { target in
                    expected[target.key].map {
                        let entry = killed.entries[Ledger.digest($0.target)]
                        return entry?.state == .verified
                            || entry?.converted == Ledger.SourceKey(item.attributes.primaryKey)
                    } ?? false
                }, "\(name) was removed before its target was verified")
        }

        // The next run completes, and leaves what a clean run leaves.
        let report = try await BatchedMigration.migration(source, database, dump: dump).run()
        #expect(report.summary.failed == 0 && report.summary.conflict == 0, "\(report.summary)")
        let resumed = try StoreSnapshot(database)
        #expect(
            resumed.differences(from: reference.snapshot).isEmpty, "\(resumed.differences(from: reference.snapshot))")
        #expect(resumed.entries.values.allSatisfy { $0.state == .verified })
    }
}

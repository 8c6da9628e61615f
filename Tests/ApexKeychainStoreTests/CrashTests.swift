import ApexKeychain
import ApexKeychainStore
import ApexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A process killed at any point of a write leaves every item old or new, never neither, and never a broken file.
///
/// A `store-writer` child writes keys in a loop, alternating in-place and staged writes, and is killed with SIGKILL
/// at a point chosen from the seed (not the clock): after a delay, or after a number of acknowledged writes.
@Suite("Crash consistency", .serialized)
struct CrashTests {
    let scratch: ScratchFolder
    let store: TestStore

    init() throws {
        scratch = try ScratchFolder("store-test")
        store = TestStore(scratch)
    }

    static let service = "crash"

    /// The value each key holds before the writer starts.
    static func initialValue(_ key: Int, seed: Int) -> String { "pre-\(key)-\(seed)" }

    /// The protection of the initial values: some keys start with access control, some without.
    static func initialAccessControl(_ key: Int) -> AccessControl { key % 2 == 0 ? .none : .biometryAny }

    /// Creates the store (`ios`, so that access-controlled writes are possible) with `keys` keys at their initial values.
    func prepare(keys: Int, seed: Int) async throws {
        let db = try store.create(device: .ios)
        let kc = try keychain(db, service: Self.service)
        for key in 0..<keys {
            try await kc.setItem(
                "k\(key)", Self.initialValue(key, seed: seed), SetOptions(accessControl: Self.initialAccessControl(key))
            )
        }
    }

    /// After the writer acknowledged writes `0..<acknowledged` (and may have made write `acknowledged` too), each
    /// key holds the value of its last acknowledged write, or that of the write in flight, with the protection of
    /// the same write. Also checks the file and that no staged item is left.
    func expectConsistent(keys: Int, seed: Int, acknowledged: Int) async throws {
        #expect(try store.integrityCheck() == "ok")
        let db = try store.open()
        let items = try db.attributes(matching: ItemQuery())
        #expect(!items.contains { $0.account.contains("\u{0}") }, "a staged item is left: \(items.map(\.account))")
        #expect(items.count == keys, "\(items.map(\.account))")

        let kc = try keychain(db, service: Self.service)
        let expectedKeys = (0..<keys).map { "k\($0)" }
        #expect(try await kc.getAllKeys() == expectedKeys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) })
        for key in 0..<keys {
            // (value, access control) of each write the key may show.
            var allowed: [String: AccessControl] = [:]
            if let last = (0..<acknowledged).last(where: { $0 % keys == key }) {
                allowed[StoreWriter.value(last, seed: seed)] = StoreWriter.accessControl(last, keys: keys)
            } else {
                allowed[Self.initialValue(key, seed: seed)] = Self.initialAccessControl(key)
            }
            if acknowledged % keys == key {
                allowed[StoreWriter.value(acknowledged, seed: seed)] = StoreWriter.accessControl(
                    acknowledged, keys: keys)
            }
            let value = try await kc.getItem("k\(key)")
            let info = try await kc.getItemInfo("k\(key)")
            #expect(
                value.map { allowed[$0] != nil } == true,
                "k\(key) holds \(value ?? "nothing"); allowed: \(allowed.keys.sorted())")
            if let value, let accessControl = allowed[value] {
                #expect(
                    info?.accessControl == accessControl,
                    "k\(key): the protection is not that of the write of its value")
            }
        }
    }

    /// When the writer is killed.
    enum Kill: CustomStringConvertible {
        /// This many milliseconds after it said `ready`.
        case afterDelay(milliseconds: Int)
        /// This many microseconds after its `ok` line number `writes` (counted from 1).
        case afterWrites(Int, microseconds: Int)

        /// Derived from the seed only: even seeds by time, odd seeds by acknowledged writes.
        init(seed: Int) {
            if seed % 2 == 0 {
                self = .afterDelay(milliseconds: 5 + (seed * 37) % 56)
            } else {
                self = .afterWrites(1 + (seed * 7) % 25, microseconds: (seed * 389) % 3000)
            }
        }

        var description: String {
            switch self {
            case .afterDelay(let ms): "\(ms) ms after ready"
            case .afterWrites(let n, let us): "\(us) µs after \(n) writes"
            }
        }
    }

    @Test("a writer killed at a seed-chosen point leaves every item old or new, and the file sound", arguments: 1...12)
    func killedWriter(seed: Int) async throws {
        let keys = 3 + seed % 4
        try await prepare(keys: keys, seed: seed)
        let kill = Kill(seed: seed)

        let writer = try WriterProcess(store: store, seed: seed, count: 1_000_000, keys: keys, service: Self.service)
        try #require(writer.waitFor("ready"), "store-writer did not start: \(writer.errorOutput)")
        switch kill {
        case .afterDelay(let milliseconds):
            usleep(useconds_t(milliseconds * 1000))
        case .afterWrites(let writes, let microseconds):
            var seen = 0
            while seen < writes, let line = writer.nextLine() {
                if line.hasPrefix("ok ") { seen += 1 }
            }
            usleep(useconds_t(microseconds))
        }
        writer.kill()
        writer.finish()
        #expect(
            writer.process.terminationReason == .uncaughtSignal, "store-writer ended by itself: \(writer.errorOutput)")
        #expect(writer.process.terminationStatus == SIGKILL)

        let acknowledged = writer.acknowledged
        #expect(acknowledged == Array(0..<acknowledged.count), "ok lines out of order")
        if case .afterWrites(let writes, _) = kill {
            #expect(acknowledged.count >= writes)
        }
        try await expectConsistent(keys: keys, seed: seed, acknowledged: acknowledged.count)
    }

    @Test("the writer and the checks agree when it is not killed: every key holds its last write")
    func writerRunsToTheEnd() async throws {
        let keys = 4
        let count = 21
        try await prepare(keys: keys, seed: 0)
        let writer = try WriterProcess(store: store, seed: 0, count: count, keys: keys, service: Self.service)
        writer.finish()
        #expect(writer.process.terminationReason == .exit)
        #expect(writer.process.terminationStatus == 0, "store-writer failed: \(writer.errorOutput)")
        #expect(writer.lines.first == "ready")
        #expect(writer.acknowledged == Array(0..<count))
        // Write 20 went to k0; the others' last writes are 17, 18, 19.
        try await expectConsistent(keys: keys, seed: 0, acknowledged: count)
        let kc = try keychain(try store.open(), service: Self.service)
        #expect(try await kc.getItem("k0") == "v20-0")
        #expect(try await kc.getItem("k3") == "v19-0")
        // Both write paths ran: each key ends on one protection, and the keys differ.
        var protections = Set<AccessControl>()
        for key in 0..<keys { protections.insert(try #require(try await kc.getItemInfo("k\(key)")).accessControl) }
        #expect(protections == [.none, .biometryAny])
    }

    @Test("a writer killed again and again on the same store leaves it sound each time")
    func repeatedKills() async throws {
        let keys = 5
        try await prepare(keys: keys, seed: 100)
        var previous: [String: String] = [:]
        for round in 0..<4 {
            let writer = try WriterProcess(
                store: store, seed: 100 + round, count: 1_000_000, keys: keys, service: Self.service)
            try #require(writer.waitFor("ready"), "store-writer did not start: \(writer.errorOutput)")
            var seen = 0
            while seen < 3 + round * 2, let line = writer.nextLine() {
                if line.hasPrefix("ok ") { seen += 1 }
            }
            usleep(useconds_t(700 * round))
            writer.kill()
            writer.finish()
            #expect(writer.process.terminationReason == .uncaughtSignal)
            #expect(try store.integrityCheck() == "ok")
            let db = try store.open()
            #expect(!(try db.attributes(matching: ItemQuery()).contains { $0.account.contains("\u{0}") }))
            let kc = try keychain(db, service: Self.service)
            #expect(try await kc.getAllKeys().count == keys)
            var now: [String: String] = [:]
            for key in 0..<keys { now["k\(key)"] = try await kc.getItem("k\(key)") }
            #expect(now.count == keys)
            #expect(now != previous, "round \(round) wrote nothing")
            previous = now
        }
    }
}

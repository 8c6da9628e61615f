import ApexKeychain
import ApexKeychainStore
import ApexTestSupport
import Foundation
import Synchronization
import Testing

/// Several connections and several processes on one store: no error, no lost write, no damage.
@Suite("Concurrency")
struct ConcurrencyTests {
    let scratch: ScratchFolder
    let store: TestStore

    init() throws {
        scratch = try ScratchFolder("store-test")
        store = TestStore(scratch)
    }

    /// What writer `writer` writes in its write `index`: a key of its own (even indices; each written several
    /// times) or a key all writers share (odd indices), alternating between an in-place and a staged write.
    static func write(_ writer: Int, _ index: Int) -> (key: String, value: String, accessControl: AccessControl) {
        let key = index % 2 == 0 ? "w\(writer)-own-\(index / 2 % 25)" : "shared-\(index / 2 % 3)"
        return (key, "w\(writer)-\(index)", index % 4 < 2 ? .none : .biometryAny)
    }

    /// Checks the store after writers `0..<writers` each made `count` writes of ``write(_:_:)``.
    func expectAllWrites(writers: Int, count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        var last: [String: String] = [:]
        var written: [String: Set<String>] = [:]
        for writer in 0..<writers {
            for index in 0..<count {
                let write = Self.write(writer, index)
                written[write.key, default: []].insert(write.value)
                if !write.key.hasPrefix("shared") { last[write.key] = write.value }
            }
        }
        #expect(try store.integrityCheck() == "ok", sourceLocation: sourceLocation)
        let db = try store.open()
        let accounts = try db.attributes(matching: ItemQuery()).map(\.account)
        #expect(
            !accounts.contains { $0.contains("\u{0}") }, "a staged item was left behind", sourceLocation: sourceLocation
        )
        #expect(accounts.count == written.count, "one item per key", sourceLocation: sourceLocation)
        let kc = try keychain(db)
        #expect(
            try await kc.getAllKeys() == written.keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) },
            sourceLocation: sourceLocation)
        for (key, value) in last {
            #expect(try await kc.getItem(key) == value, "own key \(key)", sourceLocation: sourceLocation)
        }
        for (key, values) in written where key.hasPrefix("shared") {
            let value = try await kc.getItem(key)
            #expect(
                value.map(values.contains) == true, "shared key \(key) holds \(value ?? "nothing")",
                sourceLocation: sourceLocation)
        }
    }

    @Test("two connections written from concurrent tasks (two each), to own and shared keys: no error, no lost write")
    func twoConnectionsConcurrentTasks() async throws {
        do { _ = try store.create() }
        let connections = [try store.open(), try store.open()]
        let writers = 4
        let count = 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                let kc = try keychain(connections[writer % 2])
                group.addTask {
                    for index in 0..<count {
                        let write = Self.write(writer, index)
                        try await kc.setItem(write.key, write.value, SetOptions(accessControl: write.accessControl))
                        await Task.yield()
                    }
                }
            }
            try await group.waitForAll()
        }
        try await expectAllWrites(writers: writers, count: count)
    }

    @Test("two connections used by four threads at once through the database API: no error, no lost write")
    func twoConnectionsFourThreads() async throws {
        do { _ = try store.create() }
        let connections = [try store.open(), try store.open()]
        let writers = 4
        let count = 150
        let failures = Failures()
        let finished = DispatchGroup()
        // Real threads, so that the writers run at the same time whatever the test runner does with its own.
        for writer in 0..<writers {
            let db = connections[writer % 2]
            finished.enter()
            Thread {
                defer { finished.leave() }
                for index in 0..<count {
                    let write = Self.write(writer, index)
                    let item = KeychainItem(
                        attributes: ItemAttributes(
                            service: "threads", account: write.key, accessGroup: "g", creator: apexCreator,
                            protectionDomain: index % 3 == 0 ? .ck : .ak),
                        value: Data(write.value.utf8))
                    do {
                        try db.exclusively {
                            if let current = try db.attributes(
                                matching: ItemQuery(service: "threads", account: write.key)
                            ).first {
                                try db.replace(current.primaryKey, with: item)
                            } else {
                                try db.add(item)
                            }
                        }
                        let read = try db.value(for: item.attributes.primaryKey)
                        if !write.key.hasPrefix("shared"), read != item.value {
                            failures.add("writer \(writer) write \(index): read back another value")
                        }
                    } catch {
                        failures.add("writer \(writer) write \(index): \(error)")
                        return
                    }
                }
            }.start()
        }
        await withCheckedContinuation { continuation in
            finished.notify(queue: .global()) { continuation.resume() }
        }
        #expect(failures.messages.isEmpty, "\(failures.messages.prefix(5))")

        var last: [String: String] = [:]
        var written: [String: Set<String>] = [:]
        for writer in 0..<writers {
            for index in 0..<count {
                let write = Self.write(writer, index)
                written[write.key, default: []].insert(write.value)
                last[write.key] = write.value
            }
        }
        #expect(try store.integrityCheck() == "ok")
        let db = try store.open()
        let items = try db.attributes(matching: ItemQuery(service: "threads"))
        #expect(Set(items.map(\.account)) == Set(written.keys))
        #expect(items.count == written.count)
        for item in items {
            let value = String(decoding: try db.value(for: item.primaryKey), as: UTF8.self)
            if item.account.hasPrefix("shared") {
                #expect(written[item.account]?.contains(value) == true, "\(item.account) holds \(value)")
            } else {
                #expect(value == last[item.account], "\(item.account)")
            }
        }
    }

    @Test("one connection shared by many tasks: no error, no lost write")
    func oneConnectionManyTasks() async throws {
        let db = try store.create()
        let writers = 4
        let count = 100
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                let kc = try keychain(db)
                group.addTask {
                    for index in 0..<count {
                        let write = Self.write(writer, index)
                        try await kc.setItem(write.key, write.value, SetOptions(accessControl: write.accessControl))
                        await Task.yield()
                    }
                }
            }
            try await group.waitForAll()
        }
        try await expectAllWrites(writers: writers, count: count)
    }

    @Test("a write on one connection is seen at once by another that has read before, and that one can write after it")
    func writesVisibleAcrossConnections() async throws {
        do { _ = try store.create() }
        let first = try keychain(try store.open())
        let second = try keychain(try store.open())

        try await first.setItem("a", "1")
        #expect(try await second.getItem("a") == "1")
        try await first.setItem("b", "2")
        #expect(try await second.hasItem("b"))
        #expect(try await second.getAllKeys() == ["a", "b"])
        #expect(try await second.getItem("b") == "2")

        try await second.setItem("a", "1-second")
        #expect(try await first.getItem("a") == "1-second")
        try await first.setItem("a", "1-first", SetOptions(accessControl: .biometryAny))
        try await second.setItem("c", "3")
        try await first.setItem("d", "4")
        #expect(try await second.getAllKeys() == ["a", "b", "c", "d"])
        #expect(try await second.getItem("a") == "1-first")
        try await second.removeItem("d")
        #expect(try await first.hasItem("d") == false)
        #expect(try await first.getAllKeys() == ["a", "b", "c"])
    }

    @Test("two processes writing to one store at once: both finish, and every key of each is there with its last value")
    func twoProcesses() async throws {
        do { _ = try store.create() }
        let count = 90
        let keys = 30
        let writers = try ["a", "b"].map { prefix in
            try WriterProcess(store: store, seed: 7, count: count, keys: keys, prefix: prefix, service: "multi")
        }
        for writer in writers {
            writer.finish()
            #expect(writer.process.terminationReason == .exit)
            #expect(writer.process.terminationStatus == 0, "store-writer failed: \(writer.errorOutput)")
            #expect(writer.acknowledged == Array(0..<count))
        }
        #expect(try store.integrityCheck() == "ok")
        let db = try store.open()
        #expect(!(try db.attributes(matching: ItemQuery()).contains { $0.account.contains("\u{0}") }))
        let kc = try keychain(db, service: "multi")
        let expectedKeys = ["a", "b"].flatMap { prefix in (0..<keys).map { "\(prefix)\($0)" } }
        #expect(try await kc.getAllKeys() == expectedKeys.sorted())
        for prefix in ["a", "b"] {
            for k in 0..<keys {
                let lastWrite = count - keys + k
                #expect(try await kc.getItem("\(prefix)\(k)") == StoreWriter.value(lastWrite, seed: 7), "\(prefix)\(k)")
                let info = try await kc.getItemInfo("\(prefix)\(k)")
                #expect(info?.accessControl == StoreWriter.accessControl(lastWrite, keys: keys))
            }
        }
    }

    @Test(
        "a batch of writes in atomically is one transaction: another connection sees none of it until it returns, then all of it"
    )
    func batchIsOneTransaction() async throws {
        let db = try store.create()
        let other = try store.open()
        let kc = try keychain(db)
        try await kc.setItem("guarded", "old", SetOptions(accessControl: .biometryAny))
        let seen = try #require(try await kc.getItemInfo("guarded"))
        try db.atomically {
            for index in 0..<50 {
                try kc.setBytesSynchronously("k\(index)", Data("v\(index)".utf8), SetOptions())
            }
            // An access-controlled item is replaced (through its staging account) inside the batch too.
            #expect(try kc.setItem("guarded", "new", SetOptions(accessControl: .biometryAny), expecting: .own(seen)))
            #expect(try other.accounts(matching: ItemQuery(service: "s")) == ["guarded"], "nothing committed yet")
        }
        #expect(try other.accounts(matching: ItemQuery(service: "s")).count == 51)
        #expect(try await keychain(other).getItem("guarded") == "new")
        #expect(!(try other.attributes(matching: ItemQuery()).contains { $0.account.contains("\u{0}") }))
    }

    @Test(
        "inside a batch, exclusively adds no savepoint: a scope that throws keeps the writes it made; a nested atomically undoes its own"
    )
    func exclusivelyInsideABatchRunsAsItIs() async throws {
        struct Abandon: Error {}
        let db = try store.create()
        let kc = try keychain(db)
        try await kc.setItem("template", "t")
        let template = try #require(try db.attributes(matching: ItemQuery(service: "s")).first)
        func item(_ account: String) -> KeychainItem {
            var attributes = template
            attributes.account = account
            return KeychainItem(attributes: attributes, value: Data(account.utf8))
        }
        try db.atomically {
            #expect(throws: Abandon.self) {
                try db.exclusively {
                    try db.add(item("kept"))
                    throw Abandon()
                }
            }
            #expect(throws: Abandon.self) {
                try db.atomically {
                    try db.add(item("undone"))
                    throw Abandon()
                }
            }
        }
        #expect(Set(try store.open().accounts(matching: ItemQuery(service: "s"))) == ["template", "kept"])
        // At the top level, exclusively is a transaction of its own, undone whole.
        #expect(throws: Abandon.self) {
            try db.exclusively {
                try db.add(item("alone"))
                throw Abandon()
            }
        }
        #expect(Set(try store.open().accounts(matching: ItemQuery(service: "s"))) == ["template", "kept"])
    }

    @Test(
        "a store opened while another connection holds it (as a closing process does, to fold its WAL in) waits for it, as every write does"
    )
    func openWaitsWhileHeld() async throws {
        do { _ = try store.create() }
        // A connection in exclusive locking mode keeps every other connection out, readers too, until it lets go.
        let (url, holding, released) = (store.url, DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let holder = Thread {
            guard let raw = try? RawDatabase(url),
                (try? raw.execute("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; SELECT count(*) FROM meta;"))
                    != nil
            else {
                holding.signal()
                return
            }
            holding.signal()
            usleep(300_000)
            released.signal()
            try? raw.execute("COMMIT; PRAGMA locking_mode = NORMAL; SELECT count(*) FROM meta;")
        }
        holder.start()
        holding.wait()
        let db = try store.open()
        #expect(released.wait(timeout: .now()) == .success, "the open went on only once the other connection let go")
        #expect(try db.accounts(matching: ItemQuery()) == [])
    }
}

/// Failures reported from writer threads.
final class Failures: Sendable {
    private let list = Mutex<[String]>([])

    func add(_ message: String) { list.withLock { $0.append(message) } }

    var messages: [String] { list.withLock { $0 } }
}

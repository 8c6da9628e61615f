import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `store init` killed part-way: the next `store init` of the same store succeeds, and leaves nothing of the
/// killed one behind.
@Suite("store init: interrupted")
struct StoreInitInterruptedTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// Starts `store init` and kills it (SIGKILL) `delay` microseconds after one of its temporary files
    /// (`.creating-`) shows in the folder; whether it was killed (else it finished first).
    func initKilledMidway(_ store: String, delay: UInt32) throws -> Bool {
        let binary = try #require(CLIBinary.url)
        let process = Process()
        process.executableURL = binary
        process.arguments = ["store", "init", "--store", store]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let folder = (store as NSString).deletingLastPathComponent
        var killed = false
        while process.isRunning {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            if names.contains(where: { $0.contains(".creating-") }) {
                usleep(delay)
                kill(process.processIdentifier, SIGKILL)
                killed = true
                break
            }
            usleep(100)
        }
        process.waitUntilExit()
        return killed && process.terminationReason == .uncaughtSignal
    }

    @Test("init killed while it writes its files: the next init succeeds and leaves only the store and its key file")
    func killedInitThenInit() async throws {
        var interrupted = 0
        // Killed at once, and later and later: before, between and after the key file and the store are linked.
        for attempt in 0..<12 {
            let folder = sandbox.path("attempt-\(attempt)")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let store = folder + "/store.db"
            guard try initKilledMidway(store, delay: UInt32(attempt) * 1500) else { continue }
            if FileManager.default.fileExists(atPath: store) {
                // Killed once the store was in place: it is whole, and init refuses to replace it.
                #expect(try await sandbox.run(["store", "list", "--store", store]).status == 0, "attempt \(attempt)")
                #expect(try await sandbox.run(["store", "init", "--store", store]).status == 73)
                continue
            }
            interrupted += 1
            let again = try await sandbox.run(["store", "init", "--store", store])
            #expect(again.status == 0, "attempt \(attempt): \(again.err)")
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["store.db", "store.db.key"])
            try await sandbox.set(store, "k", "v")
            #expect(try await sandbox.run(["store", "get", "--store", store, "k"]).out == "v")
        }
        try #require(interrupted > 0, "no init was killed before its store was in place")
    }

    @Test("a key file with no store beside it (an interrupted init of an earlier version) is named, with the fix (73)")
    func leftoverKeyFile() async throws {
        let store = try await sandbox.initStore("old.db")
        let keyFile = sandbox.path("store.db.key")
        try FileManager.default.moveItem(atPath: store + ".key", toPath: keyFile)
        let target = sandbox.path("store.db")
        let result = try await sandbox.run(["store", "init", "--store", target])
        #expect(result.status == 73)
        #expect(result.out == "")
        #expect(
            result.err == """
                apex-keychain: \(target): \(keyFile): a key file is already there, with no store at \(target): a \
                'store init' of an earlier version may have been interrupted, or the key file belongs to a store \
                that was moved. If no store uses it, remove it (rm '\(keyFile)') and run 'store init' again

                """)
        #expect(FileManager.default.fileExists(atPath: keyFile))
        try FileManager.default.removeItem(atPath: keyFile)
        #expect(try await sandbox.run(["store", "init", "--store", target]).status == 0)
    }
}

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Review (hardening, item 9): the tool held every secret of the dumps until it exited. The dumps, items and plans
/// are now released as soon as the run is done, before the report is written, and the memory they free is wiped
/// by the allocator: while the tool writes its report, no value of the dump is anywhere in its memory.
@Suite("secrets dropped after they are written")
struct FreedSecretsTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// Items enough that the report fills a pipe: the tool then blocks writing it, after the run.
    static let itemCount = 1500
    /// Marks every value (and, base64-encoded, every value in the dump file).
    static let valueMark = "VALUECANARY"
    /// Marks every service name: these are in the report, so they must be found (the scan's control).
    static let serviceMark = "SERVICECANARY"

    /// The library whose iOS layout a dump has.
    enum Layout {
        /// react-native-keychain: one generic password per service, the service name marked.
        case keychain
        /// react-native-encrypted-storage: no service, the marked name the key.
        case encryptedStorage
        /// react-native-sensitive-info 5.6.x: service `default`, the marked name the key, JSON metadata in `gena`.
        case sensitiveInfo
    }

    /// An iOS XML plist of ``itemCount`` generic passwords in `layout`, each value marked.
    func writeDump(_ layout: Layout = .keychain) throws -> String {
        let items: [[String: Any]] = (0..<Self.itemCount).map { index in
            var item: [String: Any] = [
                "svce": "\(Self.serviceMark)-\(index)", "acct": "user\(index)", "pdmn": "ck", "sync": 0,
                "agrp": "A1B2C3D4E5.com.example.app",
                "v_Data": Data("\(Self.valueMark)-\(index)-a-password-of-some-length".utf8),
            ]
            switch layout {
            case .keychain: break
            case .encryptedStorage:
                item["svce"] = ""
                item["acct"] = "\(Self.serviceMark)-\(index)"
            case .sensitiveInfo:
                item["svce"] = "default"
                item["acct"] = "\(Self.serviceMark)-\(index)"
                item["gena"] = Data(#"{"accessControl":"none","securityLevel":"software","timestamp":1700000000}"#.utf8)
            }
            return item
        }
        let data = try PropertyListSerialization.data(fromPropertyList: ["genp": items], format: .xml, options: 0)
        return try sandbox.write("keychain.plist", data)
    }

    /// How often each pattern occurs in the readable memory of a process.
    static func occurrences(of patterns: [String], in pid: Int32) throws -> [String: Int] {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        let memory = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/mem"))
        defer { try? memory.close() }
        var counts = Dictionary(uniqueKeysWithValues: patterns.map { ($0, 0) })
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("r") else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard bounds.count == 2, bounds[1] > bounds[0] else { continue }
            // Regions the kernel won't hand over ([vvar], guard pages) are skipped.
            guard (try? memory.seek(toOffset: bounds[0])) != nil,
                let bytes = try? memory.read(upToCount: Int(bounds[1] - bounds[0]))
            else { continue }
            for pattern in patterns {
                counts[pattern, default: 0] += bytes.count(of: Data(pattern.utf8))
            }
        }
        return counts
    }

    /// Runs the tool with stdout a pipe nobody reads until it blocks writing its report, then scans its memory.
    func scanWhileReporting(_ arguments: [String]) async throws -> [String: Int] {
        let binary = try #require(CLIBinary.url)
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        // Dumpable, so the test (the same user) may read its memory; the hardening under test is not affected.
        process.environment = ProcessInfo.processInfo.environment.merging(["APEX_KEYCHAIN_CORE_DUMPS": "1"]) { $1 }
        process.currentDirectoryURL = sandbox.url
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(120)
        var blocked = false
        while !blocked, process.isRunning, ContinuousClock.now < deadline {
            blocked = CoreDumpTests.threadWaits(process.processIdentifier, in: "pipe_write")
            if !blocked { try await Task.sleep(for: .milliseconds(10)) }
        }
        let counts = blocked ? try Self.occurrences(of: scanned, in: process.processIdentifier) : [:]
        let report = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(blocked, "the tool never blocked writing its report (\(report.count) bytes)")
        #expect(process.terminationStatus == 0)
        return counts
    }

    /// The value mark as found in memory, and as found in the dump file (base64, at the start of a value).
    var scanned: [String] {
        [Self.valueMark, Data(Self.valueMark.utf8).base64EncodedString().dropLast(4).description, Self.serviceMark]
    }

    func expectNoValues(_ counts: [String: Int]) {
        #expect((counts[Self.serviceMark] ?? 0) > 0, "the scan found not even the service names the report holds")
        for pattern in scanned where pattern != Self.serviceMark {
            #expect(counts[pattern] == 0, "\(counts[pattern] ?? -1) copies of '\(pattern)' left in memory")
        }
    }

    @Test("after a migration into a store, no value is left in memory while the report is written")
    func migrate() async throws {
        let dump = try writeDump()
        let store = try await sandbox.initStore(device: "ios")
        expectNoValues(
            try await scanWhileReporting(["migrate", dump, "--bundle-id", "com.example.app", "--store", store]))
    }

    @Test("after a dry run, no value is left in memory while the report is written")
    func dryRun() async throws {
        let dump = try writeDump()
        expectNoValues(try await scanWhileReporting(["migrate", dump, "--bundle-id", "com.example.app"]))
    }

    @Test(
        "react-native-encrypted-storage's and react-native-sensitive-info's items: after a migration into a store, no value is left in memory",
        arguments: [Layout.encryptedStorage, .sensitiveInfo])
    func migrateOtherLayouts(_ layout: Layout) async throws {
        let dump = try writeDump(layout)
        let store = try await sandbox.initStore(device: "ios")
        expectNoValues(
            try await scanWhileReporting(["migrate", dump, "--bundle-id", "com.example.app", "--store", store]))
    }

    @Test("after inspect, no value is left in memory while the inventory is written")
    func inspect() async throws {
        let dump = try writeDump()
        expectNoValues(try await scanWhileReporting(["inspect", dump]))
    }
}

extension Data {
    /// How many times `pattern` occurs (non-overlapping): `memchr` finds each candidate first byte, `memcmp` the
    /// rest (a byte-by-byte search of a process's memory would take minutes).
    fileprivate func count(of pattern: Data) -> Int {
        withUnsafeBytes { haystack in
            pattern.withUnsafeBytes { needle in
                guard let base = haystack.baseAddress, let wanted = needle.baseAddress, needle.count > 0 else {
                    return 0
                }
                let first = Int32(needle[0])
                var count = 0
                var offset = 0
                while haystack.count - offset >= needle.count,
                    let found = memchr(base + offset, first, haystack.count - offset - needle.count + 1)
                {
                    let at = base.distance(to: UnsafeRawPointer(found))
                    if memcmp(found, wanted, needle.count) == 0 {
                        count += 1
                        offset = at + needle.count
                    } else {
                        offset = at + 1
                    }
                }
                return count
            }
        }
    }
}

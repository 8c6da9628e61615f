import Foundation
import Testing

/// `migrate --report FILE`, attacked as the security review did: a report over an input, a planted symlink, a
/// permissive umask, and a file that can't be written after the migration ran.
@Suite("migrate --report")
struct ReportFileTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let plist = sample("react-native-keychain/ios/keychain.plist")
    static let bundle = ["--bundle-id", "com.example.sampleapp"]

    /// A copy of the sample dump in the sandbox (the only copy, as a decrypted keychain would be).
    func dumpCopy() throws -> (path: String, bytes: Data) {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.plist))
        return (try sandbox.write("keychain.plist", bytes), bytes)
    }

    @Test("a report naming an input dump, by its path (64) or through a link (73), is refused and the dump is kept")
    func reportOverInput() async throws {
        let (dump, bytes) = try dumpCopy()
        try FileManager.default.createSymbolicLink(atPath: sandbox.path("link.plist"), withDestinationPath: dump)
        for report in [dump, "./keychain.plist", sandbox.path("link.plist")] {
            let result = try await sandbox.run(["migrate", dump, "--dry-run", "--report", report] + Self.bundle)
            // A link is no report file at all (73), whatever it names.
            let link = report.hasSuffix("link.plist")
            #expect(result.status == (link ? 73 : 64), "\(report)")
            #expect(result.out == "")
            #expect(link || result.err.contains("'--report \(report)' names an input"), "\(result.err)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: dump)) == bytes)
        }
        // A dump found in a folder is an input too.
        let result = try await sandbox.run(["migrate", sandbox.path("."), "--dry-run", "--report", dump] + Self.bundle)
        #expect(result.status == 64)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dump)) == bytes)
    }

    @Test("a report naming the store or its key file is refused (64) and the store still opens")
    func reportOverStore() async throws {
        let store = try await sandbox.initStore(device: "ios")
        for report in [store, store + ".key"] {
            let result = try await sandbox.run(
                ["migrate", Self.plist, "--store", store, "--report", report] + Self.bundle)
            #expect(result.status == 64, "\(report): \(result.err)")
        }
        let list = try await sandbox.run(["store", "list", "--store", store, "--all-services"])
        #expect(list.status == 0)
        #expect(list.out == "")
    }

    @Test(
        "a report path that is a link or a pipe is refused (73) before anything runs, and left as it was"
    )
    func notARegularFile() async throws {
        // Before, the report's temporary file was renamed over the path: a link (such as /dev/stdout), a pipe or a
        // device (/dev/null, as root) became a regular file holding the report.
        let victim = try sandbox.write("victim.txt", "not yours\n")
        try FileManager.default.createSymbolicLink(atPath: sandbox.path("link.txt"), withDestinationPath: victim)
        #expect(mkfifo(sandbox.path("pipe"), 0o600) == 0)
        for (name, what) in [("link.txt", "a link"), ("pipe", "a pipe")] {
            let result = try await sandbox.run(["migrate", Self.plist, "--report", name] + Self.bundle)
            #expect(result.status == 73, "\(name)")
            #expect(result.out == "", "\(name): nothing ran")
            #expect(
                result.err.hasPrefix(
                    "apex-keychain: can't write the report \(name): it is \(what), not a regular file"),
                "\(result.err)")
            var info = stat()
            #expect(lstat(sandbox.path(name), &info) == 0 && info.st_mode & S_IFMT != S_IFREG, "\(name) is kept")
        }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "not yours\n")
    }

    @Test("the report is created 0600 whatever the umask, and replaces an older report whole")
    func privateMode() async throws {
        try sandbox.write("report.json", "old report")
        let launcher = ["/bin/sh", "-c", "umask 000; exec \"$0\" \"$@\""]
        let result = try await sandbox.run(
            ["migrate", Self.plist, "--format", "json", "--report", "report.json"] + Self.bundle, launcher: launcher)
        #expect(result.status == 0, "\(result.err)")
        let attributes = try FileManager.default.attributesOfItem(atPath: sandbox.path("report.json"))
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.path("report.json"))) == result.stdout)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: sandbox.path(".")).filter {
            $0.contains("apex-report")
        }
        #expect(leftovers.isEmpty)
    }

    @Test("a report that can't be written after a real migration: the report is on stdout, exit 74 says so")
    func reportFailsAfterMigration() async throws {
        let store = try await sandbox.initStore(device: "ios")
        try FileManager.default.createDirectory(atPath: sandbox.path("full"), withIntermediateDirectories: false)
        // The report's folder is a 4 KiB file system of its own (in a mount namespace of this run only).
        let launcher = [
            "/usr/bin/unshare", "-m", "/bin/sh", "-c",
            "mount -t tmpfs -o size=4k tmpfs full && exec \"$0\" \"$@\"",
        ]
        let result = try await sandbox.run(
            ["migrate", Self.plist, "--store", store, "--format", "json", "--report", "full/report.json"] + Self.bundle,
            launcher: launcher)
        #expect(result.status == 74)
        #expect(
            result.err.contains("can't write the report full/report.json: No space left on device"), "\(result.err)")
        #expect(result.err.contains("the migration ran, and its report is on stdout"))
        let report = try jsonObject(result)
        #expect((report["summary"] as? [String: Int])?["written"] == 10)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.path("full")).isEmpty)
        let again = try await sandbox.run(["migrate", Self.plist, "--store", store, "--format", "json"] + Self.bundle)
        #expect((try jsonObject(again)["summary"] as? [String: Int])?["exists"] == 10)
    }
}

import ApexTestSupport
import Foundation
import Testing

/// What the tool leaves behind and what it writes from damaged dumps (security review, issue 16).
@Suite("dump hardening")
struct DumpHardeningTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// The names created in `folder` while `body` runs (inotify: files and folders made, even if removed again).
    static func created(in folder: String, during body: () async throws -> Void) async throws -> [String] {
        let watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        try #require(watch >= 0)
        defer { close(watch) }
        try #require(inotify_add_watch(watch, folder, UInt32(IN_CREATE | IN_MOVED_TO)) >= 0)
        try await body()
        var names: [String] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            while offset < count {
                let header = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self) }
                let nameStart = offset + MemoryLayout<inotify_event>.size
                let name = buffer[nameStart..<nameStart + Int(header.len)].prefix { $0 != 0 }
                names.append(String(decoding: name, as: UTF8.self))
                offset = nameStart + Int(header.len)
            }
        }
        return names
    }

    @Test(
        "a keychain SQLite export with a WAL is read in memory: nothing is created under TMPDIR, not even for a moment")
    func sqliteExportLeavesNoCopy() async throws {
        let export = sandbox.path("export.db")
        let writer = try RawDatabase(path: export, create: true)
        defer { withExtendedLifetime(writer) {} }
        let sql = """
            PRAGMA journal_mode = WAL;
            CREATE TABLE genp(acct TEXT, svce TEXT, agrp TEXT, pdmn TEXT, v_Data BLOB);
            INSERT INTO genp VALUES ('checkpointed-user', 'checkpointed-service', 'A1B2C3D4E5.com.example.app', 'ck', X'6131');
            PRAGMA wal_checkpoint(TRUNCATE);
            PRAGMA wal_autocheckpoint = 0;
            INSERT INTO genp VALUES ('wal-user', 'wal-only-service', 'A1B2C3D4E5.com.example.app', 'ck', X'6132');
            """
        try writer.execute(sql)
        // The writer stays open: the last row is only in the WAL.
        try #require(FileManager.default.fileExists(atPath: export + "-wal"))

        let temporary = sandbox.path("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
        var result: CLIResult?
        let created = try await Self.created(in: temporary) {
            result = try await sandbox.run(
                ["inspect", export, "--format", "json"], environment: ["TMPDIR": temporary, "SQLITE_TMPDIR": temporary])
        }
        let run = try #require(result)
        #expect(run.status == 0, "\(run.err)")
        #expect(created == [], "created under TMPDIR during the read: \(created)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary) == [])
        #expect(run.out.contains("wal-only-service"), "the WAL's committed row is read")
        #expect(run.out.contains("checkpointed-service"))
    }

    @Test("a damaged Base64 value is blocked as a damaged value and never written; the other items are")
    func damagedBase64IsNeverWritten() async throws {
        let sampleText = try String(contentsOfFile: sample("react-native-keychain/ios/keychain.plist"), encoding: .utf8)
        // The `auth` item's value, "sample-token-0001", cut short: a lenient decoder read "sample-token-0000", a
        // password that then migrated and verified.
        let good = "<data>c2FtcGxlLXRva2VuLTAwMDE=</data>"
        try #require(sampleText.components(separatedBy: good).count == 2)
        let damaged = try sandbox.write(
            "keychain.plist", sampleText.replacingOccurrences(of: good, with: "<data>c2FtcGxlLXRva2VuLTAwMD</data>"))
        let store = try await sandbox.initStore(device: "ios")
        let result = try await sandbox.run(
            ["migrate", damaged, "--store", store, "--bundle-id", "com.example.sampleapp", "--format", "json"])
        let report = try jsonObject(result)
        let items = try #require(report["items"] as? [[String: Any]])
        let auth = try #require(
            items.first { (($0["source"] as? [String: Any])?["service"] as? String) == "auth" },
            "the auth item is reported")
        #expect(auth["action"] as? String == "blocked")
        #expect(auth["state"] as? String == "final")
        let reason = try #require(auth["reason"] as? String)
        #expect(
            reason.contains(
                "damaged value: v_Data is <data> that is not valid Base64 (a last group shorter than four characters, without its padding)"
            ),
            "\(reason)")
        let summary = try #require(report["summary"] as? [String: Int])
        #expect(summary["blocked"] == 1)
        #expect(summary["written"] == summary["create"])
        #expect((summary["create"] ?? 0) > 0, "the other items are still written")

        let get = try await sandbox.run(["store", "get", "--store", store, "--service", "auth", "credentials"])
        #expect(get.status != 0, "the damaged item was written: \(get.out.count) bytes")
        for secret in sampleSecrets { #expect(!result.out.contains(secret) && !result.err.contains(secret)) }
        #expect(!result.out.contains("c2FtcGxlLXRva2VuLTAwMD") && !result.err.contains("c2FtcGxlLXRva2VuLTAwMD"))
        #expect(!result.out.contains("sample-token-0000"))
    }
}

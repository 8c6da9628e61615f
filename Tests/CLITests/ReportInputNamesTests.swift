import Foundation
import Testing

/// Issue 28: `--report` replaced inputs the identity check could not see. A dump read from stdin had no path
/// (`migrate - --report k.plist < k.plist` replaced the only copy); the store's `-wal` file, which another process
/// holding the store open writes, did not exist when the run checked (the report replaced the live WAL, and a
/// quarter of the items verified were gone afterwards). Standard input's file is an input, and the names SQLite
/// and the store use beside the store and beside a dump are refused whether or not a file is there.
@Suite("migrate --report: inputs without a path, and files that do not exist yet")
struct ReportInputNamesTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let bundle = ["--bundle-id", "com.example.sampleapp"]

    /// A copy of a sample dump in the sandbox (the only copy, as a decrypted keychain would be).
    func dumpCopy(_ sampleName: String = "keychain.plist") throws -> (path: String, bytes: Data) {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: sample("react-native-keychain/ios/\(sampleName)")))
        return (try sandbox.write(sampleName, bytes), bytes)
    }

    @Test("a report over the file stdin reads the dump from is refused (64), with or without a store")
    func reportOverStandardInput() async throws {
        let (dump, bytes) = try dumpCopy()
        let store = try await sandbox.initStore(device: "ios")
        for (report, extra) in [(dump, ["--dry-run"]), ("./keychain.plist", ["--store", store])] {
            let result = try await sandbox.run(
                ["migrate", "-", "--report", report] + extra + Self.bundle, stdinFile: dump)
            #expect(result.status == 64, "\(report): \(result.err)")
            #expect(result.out == "")
            #expect(
                result.err.hasPrefix(
                    "apex-keychain: '--report \(report)' is the file the dump on stdin ('-') is read from: writing "
                        + "the report would replace it"), "\(result.err)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: dump)) == bytes)
        }
        // Nothing was migrated: the refusal comes before the store is written.
        #expect(try await sandbox.run(["store", "list", "--store", store, "--all-services"]).out == "")
    }

    @Test(
        "a report over the store's -wal, -shm or -journal file is refused (64) though none exists, and none is made",
        arguments: ["-wal", "-shm", "-journal"])
    func reportOverStoreCompanion(_ suffix: String) async throws {
        let store = try await sandbox.initStore(device: "ios")
        let companion = store + suffix
        #expect(!FileManager.default.fileExists(atPath: companion))
        // The path as given, relative, and through a link to the folder: one name in one folder.
        try FileManager.default.createSymbolicLink(
            atPath: sandbox.path("again"), withDestinationPath: sandbox.path("."))
        for report in [companion, "./store.db\(suffix)", sandbox.path("again/store.db\(suffix)")] {
            let result = try await sandbox.run(
                ["migrate", sample("react-native-keychain/ios/keychain.plist"), "--store", store, "--report", report]
                    + Self.bundle)
            #expect(result.status == 64, "\(report): \(result.err)")
            #expect(result.out == "")
            #expect(
                result.err.hasPrefix(
                    "apex-keychain: '--report \(report)' names the store's \(suffix) file (\(companion)): writing the "
                        + "report would replace it"), "\(result.err)")
            #expect(!FileManager.default.fileExists(atPath: companion), "\(report)")
        }
        let list = try await sandbox.run(["store", "list", "--store", store, "--all-services"])
        #expect(list.status == 0)
        #expect(list.out == "")
    }

    @Test("a report over the key file a passphrase store would be opened with (STORE.key) is refused (64)")
    func reportOverAbsentDefaultKeyFile() async throws {
        // Before, the report became STORE.key: every later command without --passphrase-file took it for the
        // store's key file, refused it, and never asked for the passphrase.
        let store = sandbox.path("store.db")
        let passphrase = try sandbox.writeSecret("passphrase", "correct horse\n")
        try #require(
            try await sandbox.run([
                "store", "init", "--store", store, "--device", "ios", "--passphrase-file", passphrase,
            ])
            .status == 0)
        let result = try await sandbox.run(
            [
                "migrate", sample("react-native-keychain/ios/keychain.plist"), "--store", store, "--passphrase-file",
                passphrase, "--report", store + ".key",
            ] + Self.bundle)
        #expect(result.status == 64, "\(result.err)")
        #expect(result.err.contains("names the store's key file (\(store).key)"), "\(result.err)")
        #expect(!FileManager.default.fileExists(atPath: store + ".key"))
        // The passphrase file is refused as itself.
        let over = try await sandbox.run(
            [
                "migrate", sample("react-native-keychain/ios/keychain.plist"), "--store", store, "--passphrase-file",
                passphrase, "--report", passphrase,
            ] + Self.bundle)
        #expect(over.status == 64, "\(over.err)")
        #expect(try String(contentsOfFile: passphrase, encoding: .utf8) == "correct horse\n")
    }

    @Test(
        "a report over a SQLite dump's -wal, -shm or -journal file is refused (64), given or found in a folder",
        arguments: ["-wal", "-shm", "-journal"])
    func reportOverDumpCompanion(_ suffix: String) async throws {
        let (dump, _) = try dumpCopy("keychain-export.sqlite")
        for input in [dump, sandbox.path(".")] {
            let report = dump + suffix
            let result = try await sandbox.run(["migrate", input, "--dry-run", "--report", report] + Self.bundle)
            #expect(result.status == 64, "\(input): \(result.err)")
            #expect(result.err.hasPrefix("apex-keychain: '--report \(report)' names a dump's \(suffix) file ("))
            #expect(
                result.err.contains("keychain-export.sqlite\(suffix)): writing the report would replace it"),
                "\(result.err)")
            #expect(!FileManager.default.fileExists(atPath: report))
        }
    }
}

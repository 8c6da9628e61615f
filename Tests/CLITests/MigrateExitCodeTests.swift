import ApexTestSupport
import Foundation
import Testing

/// Every exit code of `apex-keychain migrate` (the table of docs/CLI.md), each on the built binary with its whole stdout
/// and stderr: reports against golden files in `Golden/`, error messages spelled out.
///
/// Dump paths are relative to the sandbox (the tool's working folder), so the reports are the same on every
/// machine; the tool names a store by its absolute path.
/// `APEX_UPDATE_GOLDEN=1` rewrites the golden files (see ``expectGolden(_:_:sourceLocation:)``).
@Suite("migrate exit codes")
struct MigrateExitCodeTests {
    let sandbox: Sandbox

    init() throws {
        sandbox = try Sandbox()
        try FileManager.default.copyItem(
            atPath: sample("react-native-keychain/ios/keychain.plist"), toPath: sandbox.path("keychain.plist"))
    }

    static let migrate = ["migrate", "keychain.plist", "--bundle-id", "com.example.sampleapp"]

    /// `store init` of a key-file store named `store.db` in the sandbox.
    func initStore(_ extra: [String] = []) async throws {
        let result = try await sandbox.run(["store", "init", "--store", "store.db", "--device", "ios"] + extra)
        try #require(result.status == 0, "store init failed: \(result.err)")
    }

    func list() async throws -> String {
        let result = try await sandbox.run(["store", "list", "--store", "store.db", "--all-services"])
        try #require(result.status == 0, "store list failed: \(result.err)")
        return result.out
    }

    @Test("0: a dry run prints the plan, nothing on stderr")
    func dryRun() async throws {
        let result = try await sandbox.run(Self.migrate)
        #expect(result.status == 0)
        #expect(result.messages == "")
        try expectGolden(result.out, "migrate-dry-run.txt")
    }

    @Test("0: a run into a store prints what it did, nothing on stderr")
    func run() async throws {
        try await initStore()
        let result = try await sandbox.run(Self.migrate + ["--store", "store.db"])
        #expect(result.status == 0)
        #expect(result.messages == "")
        try expectGolden(result.out, "migrate-run.txt")
    }

    @Test("1: a conflict is reported item by item, the rest is migrated, stderr sums it up")
    func conflict() async throws {
        try await initStore()
        try await sandbox.set(
            "store.db", "credentials", "another-password", ["--service", "auth", "--username", "someone"])
        let result = try await sandbox.run(Self.migrate + ["--store", "store.db"])
        #expect(result.status == 1)
        #expect(
            result.messages
                == "apex-keychain: \(sandbox.path("store.db")): 9 items migrated; not migrated: 1 conflict\n")
        // The conflict's reason names the command that makes room, with the store's absolute path.
        try expectGolden(
            result.out.replacingOccurrences(of: sandbox.path("store.db"), with: "<sandbox>/store.db"),
            "migrate-conflict.txt")
    }

    /// Issue 31: a conflict suggested no fix. Its reason ends with the command to run, which works as written.
    @Test("the command a conflict's reason names, run as it is, lets the next run migrate the item")
    func conflictRemedyRuns() async throws {
        try await initStore()
        try await sandbox.set(
            "store.db", "credentials", "another-password", ["--service", "auth", "--username", "someone"])
        let first = try await sandbox.run(Self.migrate + ["--store", "store.db", "--format", "json"])
        #expect(first.status == 1)
        let items = try #require(try jsonObject(first)["items"] as? [[String: Any]])
        let reason = try #require(items.first { $0["action"] as? String == "conflict" }?["reason"] as? String)
        let command = try #require(
            reason.firstMatch(of: /remove that item first \((apex-keychain store remove [^)]*)\), then run again$/),
            "\(reason)")
        let words = command.1.split(separator: " ").map(String.init)
        #expect(
            words == [
                "apex-keychain", "store", "remove", "--store", sandbox.path("store.db"), "--service", "auth",
                "credentials",
            ])
        let removed = try await sandbox.run(Array(words.dropFirst()))
        #expect(removed.status == 0, "\(removed.err)")
        let second = try await sandbox.run(Self.migrate + ["--store", "store.db", "--format", "json"])
        #expect(second.status == 0, "\(second.err)")
        let verdict = try #require(try jsonObject(second)["verdict"] as? [String: Any])
        #expect(verdict["migrated"] as? Int == 1 && verdict["alreadyThere"] as? Int == 9)
    }

    @Test("64: a usage error names the flag and points to the help; nothing on stdout")
    func usage() async throws {
        let result = try await sandbox.run(Self.migrate + ["--format", "yaml"])
        #expect(result.status == 64)
        #expect(result.out == "")
        #expect(
            result.messages == """
                apex-keychain: invalid value 'yaml' for '--format <format>'; expected one of: text, json, markdown
                Run 'apex-keychain migrate --help' for usage.

                """)
    }

    @Test("65: a malformed dump is named with what is wrong; nothing written")
    func malformed() async throws {
        try await initStore()
        try sandbox.write("bad.plist", "<?xml version=\"1.0\"?><plist><array><dict><key>x")
        let result = try await sandbox.run(Self.migrate + ["bad.plist", "--store", "store.db"])
        #expect(result.status == 65)
        #expect(result.out == "")
        #expect(
            result.messages
                == "apex-keychain: bad.plist: the file is an XML property list that is malformed, truncated or "
                + "nested too deeply (line 1: the document ends inside an element (truncated?) (libxml2 error 77))\n")
        #expect(try await list() == "")
    }

    @Test("66: a missing input is named")
    func missing() async throws {
        let result = try await sandbox.run(["migrate", "nope.plist"])
        #expect(result.status == 66)
        #expect(result.out == "")
        #expect(result.messages == "apex-keychain: nope.plist: no such file\n")
    }

    @Test("73: a report file that can't be created is refused before anything is written")
    func reportFolderMissing() async throws {
        try await initStore()
        let result = try await sandbox.run(Self.migrate + ["--store", "store.db", "--report", "nowhere/report.txt"])
        #expect(result.status == 73)
        #expect(result.out == "")
        #expect(
            result.err
                == "apex-keychain: can't write the report nowhere/report.txt: the folder nowhere does not exist\n")
        #expect(try await list() == "", "nothing was migrated")
        let folder = try await sandbox.run(Self.migrate + ["--report", "."])
        #expect(folder.status == 73)
        #expect(
            folder.messages.hasPrefix("apex-keychain: can't write the report .: it is a folder, not a regular file"))
    }

    @Test(
        "74: a store that can't be written stops the run; a later run completes it",
        .enabled(if: ImmutableFiles.filesAvailable, "needs chattr +i on a file: root, on a file system with the flag"))
    func storeNotWritable() async throws {
        try await initStore()
        let store = sandbox.path("store.db")
        try #require(ImmutableFiles.chattr("+i", store))
        defer { _ = ImmutableFiles.chattr("-i", store) }
        let result = try await sandbox.run(Self.migrate + ["--store", "store.db"])
        #expect(result.status == 74)
        #expect(result.out == "")
        #expect(
            result.messages == "apex-keychain: \(store): target: INTERNAL: service 'apex-keychain.migration': database "
                + "error: \(store): the store is open read-only (this process can't write the store file or its folder); "
                + "nothing was written\n")
        try #require(ImmutableFiles.chattr("-i", store))
        let again = try await sandbox.run(Self.migrate + ["--store", "store.db"])
        #expect(again.status == 0)
        try expectGolden(again.out, "migrate-run.txt")
    }

    @Test(
        "75: a passphrase store without a terminal is 'try later', and nothing is written",
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/setsid"),
            "needs /usr/bin/setsid, to run the tool without a controlling terminal"))
    func noTerminal() async throws {
        try sandbox.writeSecret("passphrase", "pw")
        try await initStore(["--passphrase-file", "passphrase"])
        let result = try await sandbox.run(
            Self.migrate + ["--store", "store.db"], launcher: ["/usr/bin/setsid", "-w"])
        #expect(result.status == 75)
        #expect(result.out == "")
        #expect(
            result.messages
                == "apex-keychain: \(sandbox.path("store.db")): the store is locked with a passphrase and there "
                + "is no terminal to ask for it; pass --passphrase-file FILE\n")
        let list = try await sandbox.run([
            "store", "list", "--store", "store.db", "--all-services", "--passphrase-file", "passphrase",
        ])
        #expect(list.status == 0 && list.out == "")
    }

    @Test("77: a key file others can read is refused, saying how to mend it")
    func keyFileOpen() async throws {
        try await initStore()
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: sandbox.path("store.db.key"))
        let result = try await sandbox.run(Self.migrate + ["--store", "store.db"])
        #expect(result.status == 77)
        #expect(result.out == "")
        let store = sandbox.path("store.db")
        #expect(
            result.messages
                == "apex-keychain: \(store): \(store).key: the key file is accessible by others (mode 644); "
                + "run: chmod 600 \(store).key\n")
    }
}

/// Gates for CI: a plan can fail a job when an item would end badly.
@Suite("migrate --fail-on")
struct FailOnTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let plist = sample("react-native-keychain/ios/keychain.plist")
    static let android = sample("react-native-keychain/android")

    @Test("a dry run exits 1 when an item ends as --fail-on names, after printing the plan; 0 when none does")
    func dryRunGates() async throws {
        let sealed = try await sandbox.run(["migrate", Self.android, "--fail-on", "sealed,conflict"])
        #expect(sealed.status == 1)
        #expect(sealed.out.contains("summary: found"))
        #expect(sealed.err.contains("apex-keychain: the plan: ") && sealed.err.contains(" sealed (--fail-on)"))
        let clean = try await sandbox.run(
            [
                "migrate", Self.plist, "--bundle-id", "com.example.sampleapp", "--fail-on",
                "conflict,blocked,sealed,pending",
            ])
        #expect(clean.status == 0, "\(clean.err)")
        let bad = try await sandbox.run(["migrate", Self.plist, "--fail-on", "conflict,oops"])
        #expect(bad.status == 64)
        #expect(bad.err.contains("invalid value 'oops' in '--fail-on <actions>'"))
        let typo = try await sandbox.run(["migrate", Self.plist, "--fail-on", "conflict,seald"])
        #expect(typo.status == 64)
        #expect(
            typo.err.contains("invalid value 'seald' in '--fail-on <actions>'; did you mean 'sealed'? expected"),
            "\(typo.err)")
    }

    /// Issue 31: a missing `--bundle-id` was `blocked`, `noEquivalent` and final, so `--fail-on pending` passed
    /// although one flag fixes it.
    @Test("an item that needs --bundle-id is needsInput and pending: --fail-on pending catches it; given it, none is")
    func missingBundleIDIsPending() async throws {
        let run = try await sandbox.run(["migrate", Self.android, "--format", "json", "--fail-on", "pending"])
        #expect(run.status == 1, "\(run.err)")
        #expect(run.err.contains("1 item ends as pending (--fail-on)"), "\(run.err)")
        let report = try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any]
        let items = try #require(report?["items"] as? [[String: Any]])
        let waiting = items.filter { $0["reasonCode"] as? String == "needsInput" }
        #expect(waiting.count == 1)
        #expect(waiting.first?["state"] as? String == "pending")
        #expect((waiting.first?["reason"] as? String)?.contains("pass --bundle-id") == true)
        let given = try await sandbox.run(
            ["migrate", Self.android, "--bundle-id", "com.example.app", "--fail-on", "pending"])
        #expect(given.status == 0, "\(given.err)")
    }

    @Test("--on-conflict fail makes a plan with a conflict exit 1: the real run would stop")
    func onConflictFailGatesAPlan() async throws {
        let store = try await sandbox.initStore(device: "ios")
        try await sandbox.set(store, "credentials", "another-password", ["--service", "auth", "--username", "someone"])
        let plan = try await sandbox.run(
            [
                "migrate", Self.plist, "--bundle-id", "com.example.sampleapp", "--store", store, "--dry-run",
                "--on-conflict", "fail",
            ])
        #expect(plan.status == 1)
        #expect(plan.err.contains("1 conflict: with --on-conflict fail the run would stop"))
        let skip = try await sandbox.run(
            ["migrate", Self.plist, "--bundle-id", "com.example.sampleapp", "--store", store, "--dry-run"])
        #expect(skip.status == 0)
    }
}

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 14, item 13: `migrate` on a terminal. The passphrase of a `linux` store is asked once per run (it also
/// answers the passcode prompts of the items that need one), no prompt shares a line with progress, and progress
/// shows only when the run takes over a second, as a bar with a count and a rate.
@Suite("migrate on a terminal", .serialized)
struct MigrateProgressTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// Runs `migrate` on a new pseudo-terminal (stdin and stderr), its report going to a file.
    func spawn(_ arguments: [String]) throws -> (PseudoTerminal, pid_t, report: String) {
        let binary = try #require(CLIBinary.url)
        let terminal = try PseudoTerminal()
        let report = sandbox.path("report-\(UUID().uuidString).json")
        return (terminal, try terminal.spawn(binary.path, ["migrate"] + arguments, stdout: report), report)
    }

    /// The bar as it is drawn: `migrating [====>   ]  120/500 items, 85 items/s`.
    static var bar: Regex<(Substring, Substring, Substring, Substring)> {
        /migrating \[[=> ]{24}\] +(\d+)\/(\d+) items, (\d+|-) items\/s/
    }

    @Test("a passphrase store asks its passphrase once, and that answers every passcode-protected item")
    func passphraseOncePerRun() async throws {
        let store = sandbox.path("store.db")
        let file = try sandbox.writeSecret("passphrase", "correct horse")
        #expect(try await sandbox.run(["store", "init", "--store", store, "--passphrase-file", file]).status == 0)
        let (terminal, pid, reportPath) = try spawn(
            [sample("react-native-keychain/ios/keychain.plist"), "--store", store, "--format", "json"])
        try #require(terminal.waitFor("Passphrase for \(store): "), "\(terminal.transcript)")
        try #require(terminal.waitForEchoOff())
        terminal.type(Array("correct horse\n".utf8))
        let status = terminal.drain(until: pid)
        #expect(status >> 8 == 1, "the sample's biometric items are blocked on linux: \(terminal.transcript)")
        let transcript = terminal.transcript
        #expect(transcript.components(separatedBy: "Passphrase for").count == 2, "\(transcript)")
        #expect(!transcript.contains("Passcode for"), "\(transcript)")
        // A prompt starts its own line: nothing (progress, a note) runs into it.
        #expect(transcript.hasPrefix("Passphrase for \(store): "))
        let report = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reportPath))) as? [String: Any])
        let items = try #require(report["items"] as? [[String: Any]])
        let guarded = items.filter { item in
            let target = item["target"] as? [String: Any]
            return item["action"] as? String == "create"
                && (target?["accessControl"] as? String).map { $0 != "none" } == true
        }
        #expect(guarded.count == 3, "pin, passcode-only and api.example.com need the passcode")
        for item in guarded { #expect(item["result"] as? String == "verified", "\(item)") }
    }

    @Test(
        "a run that takes over a second draws a bar with a count and a rate, from one second on, ending with a newline")
    func barForALongRun() async throws {
        // A dump large enough to take over a second and a half on this machine: a run that ends sooner, without a
        // bar, is retried with four times the items, into a new store.
        var count = 5000
        var run: (terminal: PseudoTerminal, firstDrawn: TimeInterval, elapsed: TimeInterval, status: Int32)?
        while run == nil {
            let store = try await sandbox.initStore("store-\(count).db", device: "ios")
            let dump = try ConcurrentMigrateTests.dump(run: "long-\(count)", count: count, in: sandbox)
            let started = Date()
            let (terminal, pid, _) = try spawn([dump, "--store", store])
            let drew = terminal.waitFor("migrating [", seconds: 300, unlessExits: pid)
            let firstDrawn = Date().timeIntervalSince(started)
            let status = terminal.drain(until: pid)
            let elapsed = Date().timeIntervalSince(started)
            if drew, elapsed > 1.5 {
                run = (terminal, firstDrawn, elapsed, status)
            } else {
                #expect(!drew || elapsed > 1.0, "a bar in a run of \(elapsed) s: \(terminal.transcript)")
                // The bar's second counts from the start of the writes, after the dump is read.
                try #require(drew || elapsed < 2.0, "no bar in a run of \(elapsed) s: \(terminal.transcript)")
                try #require(count < 500_000, "\(count) items still take under a second and a half")
                count *= 4
            }
        }
        let (terminal, firstDrawn, elapsed, status) = try #require(run)
        #expect(status == 0, "\(terminal.transcript)")
        #expect(firstDrawn >= 1.0, "the bar appeared \(firstDrawn) s after the start")
        // The bar, then the verdict after the report.
        let full = terminal.transcript
        let verdict = try #require(full.range(of: "verdict: "), "\(full.suffix(300))")
        #expect(full[verdict.lowerBound...].hasPrefix("verdict: \(count) secrets found: \(count) migrated"))
        let transcript = String(full[..<verdict.lowerBound])
        let lines = transcript.split(separator: "\r", omittingEmptySubsequences: true)
        let drawn = lines.compactMap { try? Self.bar.prefixMatch(in: $0) }
        #expect(!drawn.isEmpty)
        #expect(drawn.allSatisfy { $0.output.2 == "\(count)" })
        #expect(drawn.contains { $0.output.3 != "-" }, "a rate is shown")
        // Redrawn in place, then ended with the total and a newline.
        #expect(
            transcript.hasSuffix("] \(count)/\(count) items, \(drawn.last!.output.3) items/s\u{1B}[K\r\n"),
            "\(transcript.suffix(200))")
        #expect(lines.allSatisfy { $0.hasPrefix("migrating [") || $0 == "\n" }, "only the bar is on stderr")
        // Fewer redraws than items: at most ten a second.
        #expect(drawn.count <= Int(elapsed * 10) + 2)
    }

    @Test("a quick run shows no progress at all")
    func noBarForAQuickRun() async throws {
        let store = try await sandbox.initStore(device: "ios")
        let dump = try ConcurrentMigrateTests.dump(run: "quick", count: 5, in: sandbox)
        let (terminal, pid, report) = try spawn([dump, "--store", store])
        #expect(terminal.drain(until: pid) == 0, "\(terminal.transcript)")
        // The verdict only: no bar.
        #expect(terminal.transcript.hasPrefix("verdict: 5 secrets found: 5 migrated"), "\(terminal.transcript)")
        #expect(!terminal.transcript.contains("migrating ["))
        #expect(try String(contentsOfFile: report, encoding: .utf8).contains("create (verified)"))
    }
}

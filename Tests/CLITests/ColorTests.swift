import Foundation
import Testing

/// Issue 31: no colour marked the rows that need attention. On a terminal the action of each row is coloured;
/// never when stdout is not a terminal, with `--no-color`, with `NO_COLOR` set to anything, or with `TERM=dumb`
/// (clig.dev, no-color.org).
@Suite("Colour on a terminal only")
struct ColorTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let escape = "\u{1B}["

    /// `migrate` of the react-native-keychain Android sample on a terminal 100 columns wide: what stdout shows.
    func onTerminal(_ extra: [String] = [], environment: [String: String] = [:], stdout: Bool = true) throws -> String {
        let binary = try #require(CLIBinary.url)
        let terminal = try PseudoTerminal()
        terminal.resize(columns: 100)
        let out = sandbox.path("out-\(UUID().uuidString)")
        let pid = try terminal.spawn(
            binary.path, ["migrate", sample("react-native-keychain/android/shared_prefs")] + extra,
            stdout: stdout ? nil : out, stderr: sandbox.path("err-\(UUID().uuidString)"),
            environment: ["COLUMNS": "", "NO_COLOR": "", "TERM": "xterm"].merging(environment) { $1 })
        #expect(terminal.drain(until: pid) == 0, "\(terminal.transcript)")
        if stdout { return terminal.transcript.replacingOccurrences(of: "\r\n", with: "\n") }
        return try String(contentsOfFile: out, encoding: .utf8)
    }

    @Test("on a terminal: each action coloured by what it means, the layout counted without the escapes")
    func coloured() throws {
        let text = try onTerminal()
        #expect(text.contains("\u{1B}[32mcreate\u{1B}[0m"), "what will be migrated, green")
        #expect(text.contains("\u{1B}[33mblocked, pending\u{1B}[0m"), "what waits, yellow")
        #expect(text.contains("\u{1B}[33msealed\u{1B}[0m"))
        let plain = text.replacing(/\x{1B}\[[0-9;]*m/, with: "")
        #expect(plain.split(separator: "\n").allSatisfy { $0.count <= 100 || $0.split(separator: " ").count == 1 })
        let uncoloured = try onTerminal(["--no-color"])
        #expect(plain == uncoloured, "the same text, without the escapes")
    }

    @Test("no colour with --no-color, NO_COLOR set, TERM=dumb, or stdout not a terminal")
    func uncoloured() async throws {
        #expect(!(try onTerminal(["--no-color"])).contains(Self.escape))
        #expect(!(try onTerminal(environment: ["NO_COLOR": "1"])).contains(Self.escape))
        #expect(!(try onTerminal(environment: ["TERM": "dumb"])).contains(Self.escape))
        #expect(!(try onTerminal(stdout: false)).contains(Self.escape))
        let piped = try await sandbox.run(["migrate", sample("react-native-keychain/android"), "--bundle-id", "x"])
        #expect(!piped.out.contains(Self.escape) && !piped.err.contains(Self.escape))
    }
}

import Foundation
import Testing

/// Issue 31 (text a person reads): piped into `less` or `head`, the layout was lost. The width is `COLUMNS`'s;
/// else stdout's terminal's, else stderr's, else the controlling terminal's (`/dev/tty`); else no limit.
@Suite("The text's width: COLUMNS, then stdout's, stderr's or the controlling terminal's")
struct WidthRuleTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let arguments = ["migrate", sample("react-native-keychain/ios/keychain.plist"), "--bundle-id", "app"]

    /// The widest line of `text` that holds more than one token (a single long token may be wider than any width).
    static func widest(_ text: String) -> Int {
        text.split(separator: "\n").filter { $0.split(separator: " ").count > 1 }.map(\.count).max() ?? 0
    }

    /// The tool run on a terminal `columns` wide, stdout and stderr on it or sent to files (COLUMNS empty unless
    /// `environment` sets it); its stdout.
    func runOnTerminal(
        columns: Int, stdout: Bool, stderr: Bool, environment: [String: String] = [:]
    ) throws
        -> String
    {
        let binary = try #require(CLIBinary.url)
        let terminal = try PseudoTerminal()
        terminal.resize(columns: columns)
        let out = sandbox.path("out-\(UUID().uuidString)")
        let pid = try terminal.spawn(
            binary.path, Self.arguments, stdout: stdout ? nil : out, stderr: stderr ? nil : sandbox.path("err"),
            environment: ["COLUMNS": "", "NO_COLOR": "1"].merging(environment) { $1 })
        #expect(terminal.drain(until: pid) == 0, "\(terminal.transcript)")
        if stdout { return terminal.transcript.replacingOccurrences(of: "\r\n", with: "\n") }
        return try String(contentsOfFile: out, encoding: .utf8)
    }

    @Test("without a terminal there is no limit")
    func noTerminal() async throws {
        let result = try await sandbox.run(Self.arguments)
        #expect(Self.widest(result.out) > 100)
    }

    @Test("stdout on a terminal: its width")
    func stdoutTerminal() throws {
        let out = try runOnTerminal(columns: 70, stdout: true, stderr: true)
        #expect(Self.widest(out) <= 70)
        #expect(Self.widest(out) > 60, "\(out)")
    }

    @Test("stdout piped, stderr on a terminal: stderr's width")
    func stderrTerminal() throws {
        let out = try runOnTerminal(columns: 70, stdout: false, stderr: true)
        #expect(Self.widest(out) <= 70, "\(out)")
        #expect(Self.widest(out) > 60)
    }

    @Test("stdout and stderr to files, a controlling terminal: its width")
    func controllingTerminal() throws {
        let out = try runOnTerminal(columns: 70, stdout: false, stderr: false)
        #expect(Self.widest(out) <= 70, "\(out)")
        #expect(Self.widest(out) > 60)
    }

    @Test("COLUMNS wins over every terminal")
    func columnsWins() throws {
        let out = try runOnTerminal(columns: 70, stdout: false, stderr: true, environment: ["COLUMNS": "120"])
        #expect(Self.widest(out) > 70)
        #expect(Self.widest(out) <= 120)
    }
}

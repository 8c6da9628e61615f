import ApexDumps
import ApexTestSupport
import Foundation
import Testing

/// The text other keychain tools print for people is not a dump. Read from the real-world fixtures (see
/// Fixtures/real-world/SOURCES.md), each is refused as of an unknown format, and the error says which tool's output
/// it looks like and what to give instead; before, it said only "unknown format". The error holds fixed words only,
/// never the file's text.
@Suite("Keychain tools' text output")
struct KnownTextOutputTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/real-world")

    @Test(
        "Keychain-Dumper's listing and objection's table and dump_raw output are named, with what to give instead",
        arguments: [
            ("keychain-dumper-output-owasp-mastg-snippet.txt", "Keychain-Dumper's text output"),
            ("keychain-dumper-output-lagncrash-ctf-signal.txt", "Keychain-Dumper's text output"),
            ("objection-ios-keychain-dump-table-owasp-mastg.txt", "objection's keychain table"),
            ("objection-ios-keychain-dump_raw-issue491-redacted.txt", "objection's ios keychain dump_raw output"),
        ])
    func namesTheTool(_ file: String, _ tool: String) throws {
        let path = Self.folder.appendingPathComponent(file).path
        let error = try #require(throws: DumpError.self) { try DumpReader.read(path: path) }
        #expect(error.kind == .notADump)
        #expect(error.message.hasPrefix("unknown format: "))
        #expect(error.message.contains("; it looks like \(tool)"), "\(error.message)")
        #expect(error.message.contains("ios keychain dump --json FILE"))
        // Nothing of the file: its first line past the tool's fixed words, or any value.
        #expect(!error.message.contains("SmJSWxEs") && !error.message.contains("push.apple.com"))
    }

    @Test("other text is only of an unknown format")
    func otherText() throws {
        let folder = try ScratchFolder("text-output")
        let path = folder.path("notes.txt")
        try Data("Service: a list of things to buy\nmilk\n".utf8).write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: DumpError.self) { try DumpReader.read(path: path) }
        #expect(error.kind == .notADump)
        #expect(!error.message.contains("looks like"))
        // A text that speaks of these tools, quoting their words (the fixtures' SOURCES.md), is not their output.
        let sources = Self.folder.appendingPathComponent("SOURCES.md").path
        let prose = try #require(throws: DumpError.self) { try DumpReader.read(path: sources) }
        #expect(prose.kind == .notADump)
        #expect(!prose.message.contains("looks like"), "\(prose.message)")
    }
}

import Foundation
import Testing

/// README's "## On iOS" block is the compiled sample `samples/StartupMigration/MigrateOnIOS.swift` (which
/// StartupMigrationSampleTests runs on the emulated iPhone keychain): a block that drifts from it no longer shows
/// code that compiles.
@Suite("README: the On iOS block")
struct ReadmeOnIOSSnippetTests {
    @Test("the block is MigrateOnIOS.swift, line for line")
    func blockIsTheCompiledSample() throws {
        let readme = try Repository.text("README.md")
        let section = try #require(
            Markdown.section(readme, heading: "## On iOS"), "README.md has no '## On iOS' section")
        let blocks = Markdown.fencedBlocks(section.lines.joined(separator: "\n"))
        let block = try #require(
            blocks.first { $0.info == "swift" && $0.lines.contains("import ApexKeychainApple") },
            "the section has no swift block that imports ApexKeychainApple")
        var code = Markdown.lines(try Repository.text("samples/StartupMigration/MigrateOnIOS.swift"))
        while code.last?.isEmpty == true { code.removeLast() }
        #expect(block.lines.count == code.count, "the block has \(block.lines.count) lines, the sample \(code.count)")
        for (offset, (shown, compiled)) in zip(block.lines, code).enumerated() where shown != compiled {
            Issue.record(
                "README.md:\(section.firstLine + block.firstLine - 1 + offset): '\(shown)' is '\(compiled)' in the sample"
            )
            break
        }
    }
}

import Foundation
import Testing

/// README's start-up migration block is the compiled sample `samples/StartupMigration/MigrateAtLaunch.swift`
/// (which StartupMigrationSampleTests builds and runs): a block that drifts from it no longer shows code that
/// compiles.
@Suite("README: the start-up migration block")
struct ReadmeStartupSnippetTests {
    @Test("the block is MigrateAtLaunch.swift from its first import down, line for line")
    func blockIsTheCompiledSample() throws {
        let readme = try Repository.text("README.md")
        let section = try #require(
            Markdown.section(readme, heading: "## Migrating at app start-up"),
            "README.md has no '## Migrating at app start-up' section")
        let blocks = Markdown.fencedBlocks(section.lines.joined(separator: "\n"))
        let block = try #require(
            blocks.first { $0.info == "swift" && $0.lines.contains("import ApexMigration") },
            "the section has no swift block that imports ApexMigration")
        let sample = Markdown.lines(try Repository.text("samples/StartupMigration/MigrateAtLaunch.swift"))
        let start = try #require(sample.firstIndex { $0.hasPrefix("import ") })
        var code = Array(sample[start...])
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

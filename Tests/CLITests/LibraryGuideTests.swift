import Foundation
import Testing

@testable import LibraryGuide

/// docs/LIBRARY.md's Swift blocks are files the build compiles: the manifest of samples/ConsumerApp (which
/// scripts/consumer-app builds) and the files of samples/LibraryGuide (a target this test target depends on). A
/// block that drifts from its file no longer shows code that compiles.
@Suite("docs/LIBRARY.md: the Swift blocks are compiled")
struct LibraryGuideTests {
    /// The file of each Swift block of the guide, in the guide's order.
    static let files = [
        "samples/ConsumerApp/Package.swift",
        "samples/LibraryGuide/OpenStore.swift",
        "samples/LibraryGuide/KeepToken.swift",
        "samples/LibraryGuide/KeepBehindPasscode.swift",
        "samples/LibraryGuide/MigrateDumps.swift",
        "samples/LibraryGuide/FirstLaunchWithoutPasscode.swift",
    ]

    /// The lines of a sample file from its first `import` down, without the blank lines at its end.
    static func code(of path: String) throws -> [String] {
        let lines = Markdown.lines(try Repository.text(path))
        let start = try #require(lines.firstIndex { $0.hasPrefix("import ") }, "\(path) has no import")
        var code = Array(lines[start...])
        while code.last?.isEmpty == true { code.removeLast() }
        return code
    }

    @Test("each swift block is its sample file from the first import down, line for line")
    func blocksAreTheCompiledSamples() throws {
        let blocks = Markdown.fencedBlocks(try Repository.text("docs/LIBRARY.md")).filter { $0.info == "swift" }
        #expect(
            blocks.count == Self.files.count, "the guide has \(blocks.count) swift blocks, \(Self.files.count) files")
        for (block, path) in zip(blocks, Self.files) {
            let code = try Self.code(of: path)
            #expect(
                block.lines.count == code.count, "docs/LIBRARY.md:\(block.firstLine): \(path) has \(code.count) lines")
            for (offset, (shown, compiled)) in zip(block.lines, code).enumerated() where shown != compiled {
                Issue.record("docs/LIBRARY.md:\(block.firstLine + offset): '\(shown)' is '\(compiled)' in \(path)")
                break
            }
        }
    }

    @Test(
        "the app's test of \"In an app's tests\" passes: migrated at the first launch without a passcode, then complete"
    )
    func firstLaunchWithoutPasscodeRuns() async throws {
        try await firstLaunchWithoutPasscode { passed, what in #expect(passed, Comment(rawValue: what)) }
    }

    @Test("every file of samples/LibraryGuide is one of the guide's blocks")
    func everySampleFileIsShown() throws {
        let folder = Repository.root.appendingPathComponent("samples/LibraryGuide")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        #expect(Set(names.map { "samples/LibraryGuide/\($0)" }) == Set(Self.files.dropFirst()))
    }
}

/// Issue 31: the README and the guide told apps to depend on `from: "0.1.0"`, which resolves nothing while no
/// release is tagged. Until one is, every URL dependency they show follows a branch or a revision.
@Suite("a dependency by URL names what resolves today")
struct URLDependencyTests {
    @Test("every .package(url:) that README, the guide and the consumer app show uses branch: or revision:")
    func urlDependenciesResolve() throws {
        for path in ["README.md", "docs/LIBRARY.md", "samples/ConsumerApp/Package.swift"] {
            let lines = try Repository.text(path).split(separator: "\n", omittingEmptySubsequences: false)
            for (number, line) in lines.enumerated() where line.contains(".package(url:") {
                #expect(
                    line.contains("branch:") || line.contains("revision:"),
                    "\(path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
    }
}

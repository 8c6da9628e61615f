import Foundation
import Testing

/// Issue 31: the README's examples left a store and its key file in the repository root, and its second store
/// example could not run after the first (`store init` of a store that exists). Run in order, as a reader types
/// them, each succeeds and everything they write is under `scratch/`, which git ignores.
@Suite("README: the examples run in order and leave nothing untracked")
struct ReadmeExamplesTests {
    /// The shell lines of the README's blocks that call `apex-keychain` (or prepare for it), in order: those of
    /// "A real migration" after the build, of "From an encrypted iPhone backup" and of "The embedded store".
    static func exampleLines() throws -> [String] {
        let readme = try Repository.text("README.md")
        var lines: [String] = []
        for heading in ["## A real migration", "## From an encrypted iPhone backup", "## The embedded store"] {
            let section = try #require(Markdown.section(readme, heading: heading), "no '\(heading)'")
            let text = section.lines.joined(separator: "\n")
            for block in Markdown.fencedBlocks(text) where block.info.isEmpty {
                let code = block.lines.filter { !$0.isEmpty }
                guard code.contains(where: { $0.contains("apex-keychain ") && !$0.contains("swift build") }) else {
                    continue
                }
                lines += code
            }
        }
        return lines
    }

    @Test("each example line exits 0 in a clean checkout's layout, and all it writes is under the ignored scratch/")
    func examplesRunClean() async throws {
        let lines = try Self.exampleLines()
        #expect(lines.contains { $0.hasPrefix("apex-keychain migrate ") })
        #expect(lines.contains { $0.contains("store set") })
        let binary = try #require(CLIBinary.url)
        let sandbox = try Sandbox()
        try FileManager.default.createSymbolicLink(
            atPath: sandbox.path("samples"), withDestinationPath: Repository.root.appendingPathComponent("samples").path
        )
        for line in lines {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", line]
            process.currentDirectoryURL = URL(fileURLWithPath: sandbox.path(""))
            var environment = ProcessInfo.processInfo.environment
            environment["PATH"] =
                binary.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            environment["TOKEN"] = "sample-readme-token"
            process.environment = environment
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "README: \(line)")
        }
        let written = try FileManager.default.contentsOfDirectory(atPath: sandbox.path(""))
            .filter { $0 != "samples" && !$0.hasPrefix(".") }
        #expect(written == ["scratch"], "the examples wrote \(written)")
        let ignored = try Repository.text(".gitignore").split(separator: "\n")
        #expect(ignored.contains("/scratch/"))
    }
}

import Foundation
import Testing

/// README's "## Layout" section against the folders of the repository: every folder it names exists, and every
/// top-level folder (hidden ones and `.build` aside) and every folder of `Sources/` and `Importers/` is named.
@Suite("README: Layout")
struct ReadmeLayoutTests {
    /// The folders the section names: its code spans that end with `/`, without the slash.
    static func namedFolders() throws -> (folders: [(line: Int, path: String)], section: Int) {
        let readme = try Repository.text("README.md")
        let section = try #require(
            Markdown.section(readme, heading: "## Layout"), "README.md has no '## Layout' section")
        var folders: [(Int, String)] = []
        for (offset, line) in section.lines.enumerated() {
            for span in Markdown.codeSpans(line) where span.hasSuffix("/") {
                folders.append((section.firstLine + offset, String(span.dropLast())))
            }
        }
        return (folders, section.firstLine)
    }

    /// The folders the section must name: the top-level folders git tracks files in (the folders on disk when
    /// git can't say), and the folders of `Sources/` and `Importers/`.
    static func expectedFolders() -> [String] {
        var topLevel: Set<String>
        if let tracked = Repository.trackedFiles() {
            topLevel = Set(
                tracked.compactMap { path in
                    let parts = path.split(separator: "/", maxSplits: 1)
                    return parts.count == 2 ? String(parts[0]) : nil
                })
        } else {
            topLevel = Set(Repository.subfolders(of: ""))
        }
        topLevel = topLevel.filter { !$0.hasPrefix(".") && $0 != ".build" }
        var expected = topLevel.sorted()
        for parent in ["Sources", "Importers"] {
            expected += Repository.subfolders(of: parent).map { "\(parent)/\($0)" }
        }
        return expected
    }

    @Test("every folder the Layout section names exists")
    func namedFoldersExist() throws {
        let (folders, _) = try Self.namedFolders()
        #expect(!folders.isEmpty)
        for (line, path) in folders {
            #expect(
                Repository.isFolder(path),
                "README.md:\(line): the Layout section names `\(path)/`, which is not a folder")
        }
    }

    @Test("every top-level folder, and every folder of Sources/ and Importers/, is in the Layout section")
    func everyFolderIsNamed() throws {
        let (folders, section) = try Self.namedFolders()
        let named = Set(folders.map(\.path))
        let expected = Self.expectedFolders()
        #expect(expected.contains("Sources/ApexKeychain") && expected.contains("Importers/ExpoSecureStore"))
        for path in expected where !named.contains(path) {
            Issue.record("README.md:\(section): the Layout section does not name `\(path)/`; add a line for it")
        }
    }
}

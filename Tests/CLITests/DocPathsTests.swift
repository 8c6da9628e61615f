import Foundation
import Testing

/// The files and folders that `docs/ARCHITECTURE.md` and `docs/CLI.md` name exist: a map that points to a moved
/// or renamed file fails here.
@Suite("docs/: every path named exists")
struct DocPathsTests {
    /// The top-level folders and files a path in the docs may start with.
    static let roots = ["Sources/", "Importers/", "Tests/", "docs/", "samples/", "scripts/", "Fuzz/"]
    static let topLevelFiles: Set<String> = ["Package.swift", "README.md", "CHANGELOG.md"]

    @Test(
        "code spans that are repository paths, and bare Swift file names, exist",
        arguments: [
            "docs/ARCHITECTURE.md", "docs/CLI.md",
        ])
    func pathsExist(page: String) throws {
        let text = try Repository.text(page)
        let swiftFiles = Self.swiftFileNames()
        var checked = 0
        for (index, line) in Markdown.lines(text).enumerated() {
            // A span with `<…>` is a pattern (`Importers/<Library>/`), not a path.
            for span in Markdown.codeSpans(line) where !span.contains("<") {
                if Self.topLevelFiles.contains(span) || Self.roots.contains(where: { span.hasPrefix($0) }) {
                    checked += 1
                    let exists =
                        span.hasSuffix("/") ? Repository.isFolder(String(span.dropLast())) : Repository.exists(span)
                    #expect(exists, "\(page):\(index + 1): `\(span)` does not exist")
                } else if span.range(of: "^[A-Za-z0-9_+.-]+\\.swift$", options: .regularExpression) != nil {
                    checked += 1
                    #expect(swiftFiles.contains(span), "\(page):\(index + 1): no file `\(span)` in the repository")
                }
            }
        }
        #expect(checked > 0)
    }

    @Test("relative links resolve", arguments: ["docs/ARCHITECTURE.md", "docs/CLI.md"])
    func linksResolve(page: String) throws {
        let text = try Repository.text(page)
        let folder = (page as NSString).deletingLastPathComponent
        for (index, line) in Markdown.lines(text).enumerated() {
            var rest = line[...]
            while let range = rest.range(of: "\\]\\(([^)#]+)\\)", options: .regularExpression) {
                let target = String(rest[range].dropFirst(2).dropLast())
                rest = rest[range.upperBound...]
                if target.contains("://") { continue }
                #expect(
                    Repository.exists("\(folder)/\(target)"), "\(page):\(index + 1): the link to \(target) is broken")
            }
        }
    }

    /// The names of the Swift files of the package's folders (`.build` left out).
    static func swiftFileNames() -> Set<String> {
        var names: Set<String> = []
        for root in ["Sources", "Importers", "Tests", "samples", "Fuzz"] {
            let url = Repository.root.appendingPathComponent(root)
            guard let walker = FileManager.default.enumerator(atPath: url.path) else { continue }
            while let path = walker.nextObject() as? String {
                if path.hasPrefix(".build") || path.contains("/.build") {
                    walker.skipDescendants()
                    continue
                }
                if path.hasSuffix(".swift") { names.insert((path as NSString).lastPathComponent) }
            }
        }
        return names
    }
}

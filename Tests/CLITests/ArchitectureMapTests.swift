import Foundation
import Testing

/// `docs/ARCHITECTURE.md`'s "Layers" table says what each module imports; `Package.swift` is the authority. These
/// tests compare the two, so that the map can't drift from the code: a row whose imports, folder or system
/// libraries differ from the target's, a library product with no row, or a migration or importer file the page
/// never names fails here, naming the target or the file.
@Suite("docs/ARCHITECTURE.md: the layer table is Package.swift's")
struct ArchitectureMapTests {
    @Test("every row's imports, folder and system libraries are its target's in Package.swift")
    func rowsMatchThePackage() throws {
        let targets = try PackageManifest.targets(Repository.text("Package.swift"))
        let rows = try LayerTable.rows(Repository.text("docs/ARCHITECTURE.md"))
        #expect(targets.count > 10, "Package.swift read: \(targets.map(\.name))")
        #expect(rows.count > 5, "the Layers table read: \(rows.map(\.module))")
        let differences = LayerTable.differences(rows, targets)
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
    }

    @Test("every library product's target has a row, and so does the CLI")
    func everyProductHasARow() throws {
        let manifest = try Repository.text("Package.swift")
        let rows = Set(try LayerTable.rows(Repository.text("docs/ARCHITECTURE.md")).map(\.module))
        let libraries = PackageManifest.libraryProductTargets(manifest)
        #expect(!libraries.isEmpty)
        for target in libraries + ["apex-keychain"] {
            #expect(rows.contains(target), "docs/ARCHITECTURE.md's Layers table has no row for `\(target)`")
        }
    }

    @Test("every Swift file of ApexMigration and of the importers is named on the page")
    func everyMigrationFileIsNamed() throws {
        let spans = Set(Markdown.lines(try Repository.text("docs/ARCHITECTURE.md")).flatMap(Markdown.codeSpans))
        var files: [String] = []
        for folder in ["Sources/ApexMigration", "Importers"] {
            let url = Repository.root.appendingPathComponent(folder)
            let walker = try #require(FileManager.default.enumerator(atPath: url.path))
            while let path = walker.nextObject() as? String {
                if path.hasSuffix(".swift") { files.append("\(folder)/\(path)") }
            }
        }
        #expect(files.count > 20, "\(files)")
        for file in files {
            let name = (file as NSString).lastPathComponent
            let named = spans.contains(name) || spans.contains(file) || spans.contains { $0.hasSuffix("/" + name) }
            #expect(named, "docs/ARCHITECTURE.md never names `\(file)` (by its file name or its path)")
        }
    }

    // MARK: The checks themselves

    static let smallManifest = """
        let package = Package(
            name: "Small",
            products: [
                .library(name: "Core", targets: ["Core"]),
                .library(name: "Readers", targets: ["Readers"]),  // a comment with "Quoted" and ] and )
                .executable(name: "tool", targets: ["tool"]),
            ],
            targets: [
                .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3"),
                .target(name: "Core", path: "Sources/Core"),
                .target(name: "Wrapper", dependencies: ["CSQLite"], path: "Sources/Wrapper"),
                .target(
                    name: "Readers", dependencies: ["Core", "Wrapper"],
                    path: "Sources/Readers"),
                .executableTarget(name: "tool", dependencies: ["Readers", "Core"], path: "Sources/tool"),
                .testTarget(name: "CoreTests", dependencies: ["Core"]),
            ]
        )
        """

    static func smallTable(readers: String, readersLibraries: String = "SQLite (through `Wrapper`)") -> String {
        """
        # Architecture

        ## Layers

        | Module (product) | Folder | Imports from this package | System libraries |
        |---|---|---|---|
        | `Core` (the core) | `Sources/Core/` | nothing | none |
        | `Wrapper` (internal) | `Sources/Wrapper/` | nothing | SQLite: the one wrapper (`Connection.swift`) |
        | `Readers` | `Sources/Readers/` | \(readers) | \(readersLibraries) |
        | `tool` (the CLI) | `Sources/tool/` | `Readers`, `Core` (its `package` helpers) | none |

        ## Next
        """
    }

    @Test("Package.swift is read: targets, their dependencies and folders, comments and strings left alone")
    func manifestIsRead() {
        let targets = Dictionary(
            uniqueKeysWithValues: PackageManifest.targets(Self.smallManifest).map { ($0.name, $0) })
        #expect(targets.keys.sorted() == ["CSQLite", "Core", "CoreTests", "Readers", "Wrapper", "tool"])
        #expect(targets["Readers"]?.dependencies == ["Core", "Wrapper"])
        #expect(targets["Readers"]?.path == "Sources/Readers")
        #expect(targets["Core"]?.dependencies == [])
        #expect(targets["CSQLite"]?.kind == .systemLibrary)
        #expect(targets["tool"]?.kind == .executable)
        #expect(targets["CoreTests"]?.kind == .test)
        #expect(PackageManifest.libraryProductTargets(Self.smallManifest) == ["Core", "Readers"])
    }

    @Test("a table that matches has no difference; remarks in parentheses name no import")
    func matchingTable() {
        let rows = LayerTable.rows(Self.smallTable(readers: "`Core`, `Wrapper`"))
        #expect(rows.map(\.module) == ["Core", "Wrapper", "Readers", "tool"])
        #expect(rows.last?.imports == ["Readers", "Core"])
        #expect(LayerTable.differences(rows, PackageManifest.targets(Self.smallManifest)) == [])
    }

    @Test("a row with an import too many or too few fails, naming the target and the difference")
    func wrongImports() {
        let targets = PackageManifest.targets(Self.smallManifest)
        let extra = LayerTable.differences(
            LayerTable.rows(Self.smallTable(readers: "`Core`, `Wrapper`, `tool`")), targets)
        #expect(extra == ["`Readers`: the map lists `tool`, which Package.swift does not give it"])
        let missing = LayerTable.differences(LayerTable.rows(Self.smallTable(readers: "`Core`")), targets)
        #expect(missing == ["`Readers`: Package.swift gives it `Wrapper`, which the map does not list"])
    }

    @Test("a row for no target, a wrong folder or a wrong system library fails")
    func wrongRows() {
        let targets = PackageManifest.targets(Self.smallManifest)
        let table = Self.smallTable(readers: "`Core`, `Wrapper`")
        let unknown = table.replacingOccurrences(of: "| `Core` (the core) |", with: "| `Kernel` (the core) |")
        #expect(
            LayerTable.differences(LayerTable.rows(unknown), targets) == [
                "`Kernel`: no such target in Package.swift"
            ])
        let folder = table.replacingOccurrences(of: "`Sources/Readers/`", with: "`Sources/Reader/`")
        #expect(
            LayerTable.differences(LayerTable.rows(folder), targets) == [
                "`Readers`: the map's folder is `Sources/Reader/`, Package.swift's `Sources/Readers/`"
            ])
        // A system library named that the target can't reach, and one it imports directly that the row leaves out.
        let unreachable = LayerTable.rows(Self.smallTable(readers: "`Core`, `Wrapper`", readersLibraries: "libxml2"))
        #expect(
            LayerTable.differences(unreachable, targets) == [
                "`Readers`: the map names libxml2, which no dependency of the target reaches (`CLibXML2`)"
            ])
        let direct = table.replacingOccurrences(of: "SQLite: the one wrapper", with: "none: the one wrapper")
        #expect(
            LayerTable.differences(LayerTable.rows(direct), targets) == [
                "`Wrapper`: Package.swift gives it the system library `CSQLite`, which the map does not name (SQLite)"
            ])
    }
}

/// A small reader of `Package.swift` as text: its `.target`, `.executableTarget`, `.testTarget` and
/// `.systemLibrary` entries (name, string dependencies, path) and its library products. It reads the package as
/// it is written here: a target's dependencies are the string literals of its list, so a
/// `.target(name: "X", condition: …)` counts as `X` whatever its condition (`DependencyGraph` in
/// ApplePlatformTests.swift reads the conditions); `.product(…)` forms would need more.
enum PackageManifest {
    struct Target: Equatable {
        enum Kind: Equatable { case regular, executable, test, systemLibrary }
        var name: String
        var kind: Kind
        var dependencies: [String]
        var path: String?
    }

    static func targets(_ manifest: String) -> [Target] {
        let code = withoutComments(manifest)
        let kinds: [(String, Target.Kind)] = [
            (".target(", .regular), (".executableTarget(", .executable), (".testTarget(", .test),
            (".systemLibrary(", .systemLibrary),
        ]
        var targets: [Target] = []
        for (opening, kind) in kinds {
            for body in calls(opening, in: code) {
                guard let name = stringArgument("name", in: body) else { continue }
                let dependencies = listArgument("dependencies", in: body).map(strings) ?? []
                targets.append(
                    Target(name: name, kind: kind, dependencies: dependencies, path: stringArgument("path", in: body)))
            }
        }
        return targets
    }

    /// The targets of the `.library` products, in order.
    static func libraryProductTargets(_ manifest: String) -> [String] {
        calls(".library(", in: withoutComments(manifest)).flatMap { listArgument("targets", in: $0).map(strings) ?? [] }
    }

    /// `text` without its `//` comments (a `//` inside a string literal stays).
    static func withoutComments(_ text: String) -> String {
        var result = ""
        var inString = false
        var characters = text[...]
        while let character = characters.first {
            if !inString, characters.hasPrefix("//") {
                characters = characters.drop { $0 != "\n" }
                continue
            }
            if character == "\"" { inString.toggle() }
            if inString, character == "\\", characters.count > 1 {
                result.append(contentsOf: characters.prefix(2))
                characters = characters.dropFirst(2)
                continue
            }
            result.append(character)
            characters = characters.dropFirst()
        }
        return result
    }

    /// The argument text of every call that begins with `opening` (which ends with its `(`), up to its matching `)`.
    static func calls(_ opening: String, in code: String) -> [Substring] {
        var bodies: [Substring] = []
        var rest = code[...]
        while let range = rest.range(of: opening) {
            let body = balanced(rest[range.upperBound...])
            bodies.append(body)
            rest = rest[body.endIndex...]
        }
        return bodies
    }

    /// `text` up to (not including) the bracket that closes the one opened just before it.
    static func balanced(_ text: Substring) -> Substring {
        var depth = 0
        var inString = false
        for index in text.indices {
            let character = text[index]
            if character == "\"" { inString.toggle() }
            guard !inString else { continue }
            switch character {
            case "(", "[": depth += 1
            case ")", "]":
                if depth == 0 { return text[..<index] }
                depth -= 1
            default: break
            }
        }
        return text
    }

    /// The string literal given as `label:` at the top level of `body`.
    static func stringArgument(_ label: String, in body: Substring) -> String? {
        guard let range = topLevelLabel(label, in: body) else { return nil }
        let rest = body[range.upperBound...].drop { $0 == " " || $0 == "\n" }
        guard rest.first == "\"" else { return nil }
        return String(rest.dropFirst().prefix { $0 != "\"" })
    }

    /// The contents of the array literal given as `label:` at the top level of `body`.
    static func listArgument(_ label: String, in body: Substring) -> Substring? {
        guard let range = topLevelLabel(label, in: body) else { return nil }
        let rest = body[range.upperBound...].drop { $0 == " " || $0 == "\n" }
        guard rest.first == "[" else { return nil }
        return balanced(rest.dropFirst())
    }

    /// Where `label:` is, outside any nested call, array or string of `body`.
    static func topLevelLabel(_ label: String, in body: Substring) -> Range<Substring.Index>? {
        var depth = 0
        var inString = false
        var index = body.startIndex
        while index < body.endIndex {
            let character = body[index]
            if character == "\"" {
                inString.toggle()
            } else if !inString {
                switch character {
                case "(", "[": depth += 1
                case ")", "]": depth -= 1
                default:
                    let isStart = index == body.startIndex || !(body[body.index(before: index)].isLetter)
                    if depth == 0, isStart, body[index...].hasPrefix(label + ":") {
                        return index..<body.index(index, offsetBy: label.count + 1)
                    }
                }
            }
            index = body.index(after: index)
        }
        return nil
    }

    /// The string literals of `text`, in order.
    static func strings(_ text: Substring) -> [String] {
        text.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
            .map { String($0.element) }
    }
}

/// The "Layers" table of `docs/ARCHITECTURE.md`, and how it is compared with the package's targets.
enum LayerTable {
    struct Row {
        /// The module: the first code span of the first column.
        var module: String
        /// The folder's code span.
        var folder: String?
        /// The modules of the third column: its code spans outside parentheses ("nothing" has none).
        var imports: [String]
        /// The fourth column without its parenthesised remarks.
        var systemLibraries: String
        /// The line of the row (1-based).
        var line: Int
    }

    /// The system-library targets of the package, and the word a row's last column names each by.
    static let systemLibraryWords = [
        "CSQLite": "SQLite", "CSodium": "libsodium", "CLibXML2": "libxml2", "CGlibc": "glibc",
    ]

    static func rows(_ page: String) -> [Row] {
        guard let section = Markdown.section(page, heading: "## Layers") else { return [] }
        var rows: [Row] = []
        for (offset, line) in section.lines.enumerated() {
            guard let cells = Markdown.cells(line), cells.count >= 4, !cells[0].hasPrefix("-"),
                let module = Markdown.codeSpans(cells[0]).first
            else { continue }
            rows.append(
                Row(
                    module: module, folder: Markdown.codeSpans(cells[1]).first,
                    imports: Markdown.codeSpans(withoutRemarks(cells[2])), systemLibraries: withoutRemarks(cells[3]),
                    line: section.firstLine + offset))
        }
        return rows
    }

    /// `text` without what is in parentheses (at any depth).
    static func withoutRemarks(_ text: String) -> String {
        var depth = 0
        var result = ""
        for character in text {
            if character == "(" {
                depth += 1
            } else if character == ")" {
                depth = max(0, depth - 1)
            } else if depth == 0 {
                result.append(character)
            }
        }
        return result
    }

    /// What differs between the rows and the targets, one sentence per difference, each naming its target.
    static func differences(_ rows: [Row], _ targets: [PackageManifest.Target]) -> [String] {
        let byName = Dictionary(targets.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var differences: [String] = []
        for row in rows {
            guard let target = byName[row.module] else {
                differences.append("`\(row.module)`: no such target in Package.swift")
                continue
            }
            let packageImports = Set(target.dependencies.filter { byName[$0]?.kind != .systemLibrary })
            let mapImports = Set(row.imports)
            for name in mapImports.subtracting(packageImports).sorted() {
                differences.append("`\(row.module)`: the map lists `\(name)`, which Package.swift does not give it")
            }
            for name in packageImports.subtracting(mapImports).sorted() {
                differences.append("`\(row.module)`: Package.swift gives it `\(name)`, which the map does not list")
            }
            if let folder = row.folder, let path = target.path, folder != path + "/" {
                differences.append("`\(row.module)`: the map's folder is `\(folder)`, Package.swift's `\(path)/`")
            }
            // The system libraries: each one the target depends on directly is named; each one named is reached
            // (directly or through the package's modules).
            let reached = reachable(from: target.name, byName)
            for (module, word) in systemLibraryWords.sorted(by: { $0.key < $1.key }) {
                let named = mentions(row.systemLibraries, word)
                if target.dependencies.contains(module), !named {
                    differences.append(
                        "`\(row.module)`: Package.swift gives it the system library `\(module)`, which the map does not name (\(word))"
                    )
                } else if named, !reached.contains(module) {
                    differences.append(
                        "`\(row.module)`: the map names \(word), which no dependency of the target reaches (`\(module)`)"
                    )
                }
            }
        }
        return differences
    }

    /// Whether `text` names `word` as a word of its own (`SQLite`, not the `SQLite` of `ApexSQLite`).
    static func mentions(_ text: String, _ word: String) -> Bool {
        text.range(of: "(?<![A-Za-z])\(word)(?![A-Za-z])", options: .regularExpression) != nil
    }

    /// Every target `name` depends on, directly or not.
    static func reachable(from name: String, _ targets: [String: PackageManifest.Target]) -> Set<String> {
        var seen: Set<String> = []
        var queue = targets[name]?.dependencies ?? []
        while let next = queue.popLast() {
            guard seen.insert(next).inserted else { continue }
            queue += targets[next]?.dependencies ?? []
        }
        return seen
    }
}

import Foundation
import Testing

/// The house rules that hold for the whole repository: no source file over 500 lines, and one definition of
/// `SQLITE_TRANSIENT` (SQLite's "copy what is bound" destructor, which Swift code must spell by hand).
@Suite("house rules")
struct HouseRulesTests {
    /// The longest a source file may be.
    static let maxLines = 500

    @Test("no Swift file under Sources/, Importers/ or samples/ is over 500 lines")
    func noLongFiles() throws {
        let files = Self.swiftFiles(under: ["Sources", "Importers", "samples"])
        #expect(files.count > 100, "\(files.count) files found")
        var long: [String] = []
        for file in files {
            let text = try Repository.text(file)
            if let problem = Self.tooLong(file, text) { long.append(problem) }
        }
        #expect(long.isEmpty, "\(long.joined(separator: "\n"))")
    }

    @Test("SQLITE_TRANSIENT is defined in exactly one file")
    func oneTransientDefinition() throws {
        // This file is left out: its own tests below spell the definitions they recognise.
        let files = Self.swiftFiles(under: ["Sources", "Importers", "samples", "Tests", "Fuzz"])
            .filter { $0 != "Tests/CLITests/HouseRulesTests.swift" }
        var defining: [String] = []
        for file in files where Self.definesTransient(try Repository.text(file)) {
            defining.append(file)
        }
        #expect(defining == ["Sources/ApexSQLite/Connection.swift"], "defined in: \(defining)")
    }

    // MARK: The checks themselves

    @Test("a file of 501 lines is too long, naming it; one of 500 is not")
    func lineLimit() {
        let lines = (1...500).map { "let line\($0) = \($0)" }
        #expect(Self.tooLong("Sources/A/Ok.swift", lines.joined(separator: "\n") + "\n") == nil)
        #expect(Self.tooLong("Sources/A/Ok.swift", lines.joined(separator: "\n")) == nil)
        let long = (lines + ["let one = 1"]).joined(separator: "\n") + "\n"
        #expect(Self.tooLong("Sources/A/Long.swift", long) == "Sources/A/Long.swift: 501 lines (at most 500)")
    }

    @Test("a definition of SQLITE_TRANSIENT is recognised in its usual spellings, a use is not")
    func transientSpellings() {
        #expect(
            Self.definesTransient("package let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)"))
        #expect(Self.definesTransient("let transient = unsafeBitCast( -1 , to: sqlite3_destructor_type.self)"))
        #expect(Self.definesTransient("let SQLITE_TRANSIENT = sqlite3_destructor_type(bitPattern: -1)"))
        #expect(Self.definesTransient("private var SQLITE_TRANSIENT: sqlite3_destructor_type? = nil"))
        #expect(!Self.definesTransient("sqlite3_bind_text(statement, 1, text, -1, sqliteTransient)"))
        #expect(!Self.definesTransient("/// `SQLITE_TRANSIENT`: the macro doesn't import"))
    }

    /// "PATH: N lines (at most 500)" when `text` has more than ``maxLines`` lines, else nil.
    static func tooLong(_ path: String, _ text: String) -> String? {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        if text.hasSuffix("\n") { lines -= 1 }
        return lines > maxLines ? "\(path): \(lines) lines (at most \(maxLines))" : nil
    }

    /// Whether `text` defines SQLite's transient destructor: the bit pattern -1 made a `sqlite3_destructor_type`,
    /// or a constant or variable named `SQLITE_TRANSIENT`.
    static func definesTransient(_ text: String) -> Bool {
        let patterns = [
            "unsafeBitCast\\(\\s*-1\\s*,\\s*to:\\s*sqlite3_destructor_type",
            "sqlite3_destructor_type\\(\\s*bitPattern:\\s*-1",
            "\\b(let|var)\\s+SQLITE_TRANSIENT\\b",
        ]
        return patterns.contains { text.range(of: $0, options: .regularExpression) != nil }
    }

    /// The Swift files under `folders` (relative to the root), as relative paths; `.build` folders left out.
    static func swiftFiles(under folders: [String]) -> [String] {
        var files: [String] = []
        for folder in folders {
            let url = Repository.root.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(atPath: url.path) else { continue }
            while let path = walker.nextObject() as? String {
                if (path as NSString).lastPathComponent == ".build" {
                    walker.skipDescendants()
                    continue
                }
                if path.hasSuffix(".swift") { files.append("\(folder)/\(path)") }
            }
        }
        return files.sorted()
    }
}

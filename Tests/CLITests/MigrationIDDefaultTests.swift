import Foundation
import Testing

/// `MigrationID` has no default, so two independent migrations never share a ledger by accident: the compiler
/// makes every `Migration(id:…)` name one, and this test keeps the library from offering one (a parameter's
/// default, or a ready-made id an app could pick up without choosing).
@Suite("MigrationID: no default")
struct MigrationIDDefaultTests {
    /// The Swift files of ApexMigration, relative to the repository's root.
    static func librarySources() throws -> [String] {
        let folder = Repository.root.appendingPathComponent("Sources/ApexMigration")
        let enumerator = try #require(FileManager.default.enumerator(atPath: folder.path))
        return enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
            .map { "Sources/ApexMigration/\($0)" }.sorted()
    }

    @Test("no parameter, property or constant of ApexMigration gives a MigrationID by default")
    func noDefault() throws {
        let sources = try Self.librarySources()
        #expect(sources.contains("Sources/ApexMigration/Applying/MigrationID.swift"))
        let defaults: [Regex<Substring>] = [
            #/:\s*MigrationID\??\s*=/#, #/static\s+(?:let|var)\s+\w+\s*(?::\s*MigrationID)?\s*=\s*MigrationID\(/#,
            #/migrationID:\s*String/#,
        ]
        for path in sources {
            for (number, line) in Markdown.lines(try Repository.text(path)).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//") else { continue }
                for pattern in defaults where code.contains(pattern) {
                    Issue.record("\(path):\(number + 1): '\(code)' gives a migration id by default")
                }
            }
        }
        let migration = try Repository.text("Sources/ApexMigration/Migration.swift")
        #expect(migration.contains("id: MigrationID, importers: [any Importer]"), "Migration's init takes an id")
    }
}

import Foundation
import Testing

/// The helpers that only this package's importers, command-line tool and benchmark use are `package`, not `public`:
/// an app that depends on the library products doesn't see them (samples/ConsumerApp is such an app).
@Suite("ApexMigration: helpers stay out of an app's view")
struct PackageAccessTests {
    /// The files whose every declaration is `package` (record claims, the react-native-sensitive-info shapes, app
    /// identity, note text).
    static let packageFiles = [
        "Sources/ApexMigration/Importing/RecordClaims.swift",
        "Sources/ApexMigration/Importing/AppIdentity.swift",
    ]

    /// The declarations, in other files, that are `package`: the run's timings and the run that returns them.
    static let packageDeclarations = [
        ("Sources/ApexMigration/Applying/Applier.swift", "struct MigrationTimings"),
        ("Sources/ApexMigration/Migration.swift", "func timedRun("),
    ]

    @Test("the helper files declare nothing public", arguments: packageFiles)
    func helperFileHasNoPublicDeclaration(path: String) throws {
        for (number, line) in Markdown.lines(try Repository.text(path)).enumerated()
        where line.trimmingCharacters(in: .whitespaces).hasPrefix("public ") {
            Issue.record("\(path):\(number + 1): '\(line)' is public; an app has no use for it")
        }
    }

    @Test("timings and timedRun are package, with their members", arguments: packageDeclarations)
    func declarationIsPackage(path: String, declaration: String) throws {
        let lines = Markdown.lines(try Repository.text(path))
        let found = lines.filter {
            $0.contains(declaration) && !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//")
        }
        #expect(!found.isEmpty, "\(path) declares no '\(declaration)'")
        for line in found where line.contains("public ") {
            Issue.record("\(path): '\(line)' is public; an app has no use for it")
        }
        if declaration.hasPrefix("struct ") {
            // The struct's members, down to its closing brace.
            let start = try #require(lines.firstIndex { $0.contains(declaration) })
            for line in lines[start...].prefix(while: { $0 != "}" }) where line.contains("public ") {
                Issue.record("\(path): '\(line)' is public; an app has no use for it")
            }
        }
    }
}

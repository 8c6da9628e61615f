import Foundation
import Testing

/// SQLite's C module is imported only by its wrapper, the benchmark's raw floors and the system library test:
/// every other target speaks ApexSQLite's vocabulary. (A target that lists ApexSQLite could import the C module
/// through it, so the package's dependencies alone don't keep this.)
@Suite struct ImportBoundaryTests {
    /// The files that may import `CSQLite`, by their path from the package root (a folder ends with "/").
    static let allowed = [
        "Sources/ApexSQLite/", "Tests/ApexSQLiteTests/", "Tests/SystemLibraryTests/",
        "Sources/apex-keychain-bench/FloorSide.swift", "Sources/apex-keychain-bench/FloorSide+Diagnostics.swift",
        "Sources/apex-keychain-bench/BulkFloor.swift", "Sources/apex-keychain-bench/ReadFloors.swift",
    ]

    @Test("no file outside ApexSQLite and the benchmark's raw floors imports CSQLite")
    func onlyTheWrapperImportsTheCModule() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var offenders: [String] = []
        var scanned = 0
        for folder in ["Sources", "Tests", "Importers", "samples", "Fuzz"] {
            let base = root.appendingPathComponent(folder)
            guard let files = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else {
                continue
            }
            for case let file as URL in files where file.pathExtension == "swift" {
                let path = String(file.path.dropFirst(root.path.count + 1))
                scanned += 1
                guard !Self.allowed.contains(where: { path == $0 || ($0.hasSuffix("/") && path.hasPrefix($0)) })
                else { continue }
                let text = try String(contentsOf: file, encoding: .utf8)
                let imports = text.split(separator: "\n").contains {
                    $0.trimmingCharacters(in: .whitespaces).hasPrefix("import CSQLite")
                }
                if imports { offenders.append(path) }
            }
        }
        #expect(scanned > 100, "the sources were not found from \(root.path)")
        #expect(offenders.isEmpty, "import CSQLite outside ApexSQLite: \(offenders.sorted())")
    }
}

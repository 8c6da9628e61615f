import Foundation
import Testing

/// A test that can't run on a machine says why: `scripts/test` prints the reasons of the skipped tests, so a machine
/// without `chattr` or `sqlite3` shows in the run's output instead of passing quietly.
@Suite("skipped tests say why")
struct SkipReasonTests {
    /// The package's root, from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The text of each `.enabled(...)` and `.disabled(...)` trait in `source`, between its parentheses.
    static func conditionTraits(in source: String) -> [Substring] {
        var found: [Substring] = []
        for marker in [".enabled(", ".disabled("] {
            var searchStart = source.startIndex
            while let range = source.range(of: marker, range: searchStart..<source.endIndex) {
                var depth = 1
                var index = range.upperBound
                var inString = false
                while index < source.endIndex, depth > 0 {
                    let character = source[index]
                    if character == "\"" { inString.toggle() }
                    if !inString {
                        if character == "(" { depth += 1 }
                        if character == ")" { depth -= 1 }
                    }
                    index = source.index(after: index)
                }
                found.append(source[range.upperBound..<source.index(before: index)])
                searchStart = index
            }
        }
        return found
    }

    /// Whether a trait's arguments end with a reason: a string literal after the condition's last top-level comma.
    static func hasReason(_ arguments: Substring) -> Bool {
        var depth = 0
        var inString = false
        var lastComma: Substring.Index?
        for index in arguments.indices {
            switch arguments[index] {
            case "\"": inString.toggle()
            case "(" where !inString: depth += 1
            case ")" where !inString: depth -= 1
            case "," where !inString && depth == 0: lastComma = index
            default: break
            }
        }
        guard let lastComma else { return false }
        let last = arguments[arguments.index(after: lastComma)...].trimmingCharacters(in: .whitespacesAndNewlines)
        return last.count >= 2 && last.hasPrefix("\"") && last.hasSuffix("\"")
    }

    @Test("the check tells a trait with a reason from one without")
    func checkWorks() {
        let source = """
            @Test("a", .enabled(if: FileManager.default.isExecutableFile(atPath: "/bin/sh"), "needs /bin/sh"))
            @Test("b", .enabled(if: available))
            @Suite("c", .disabled(if: f(x, y)))
            @Test("d", .enabled(if: g("a, b"), "needs g, h and i"))
            @Test("e", .enabled(if: g("a, b")))
            """
        let traits = Self.conditionTraits(in: source)
        #expect(traits.count == 5)
        #expect(traits.map(Self.hasReason) == [true, false, true, false, false])
    }

    @Test("every .enabled(if:) and .disabled(if:) trait of the tests gives its reason")
    func everyConditionHasAReason() throws {
        let tests = Self.root.appendingPathComponent("Tests")
        let files = try #require(FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil))
        var checked = 0
        for case let file as URL in files where file.pathExtension == "swift" {
            guard file.lastPathComponent != "SkipReasonTests.swift" else { continue }
            let source = try String(contentsOf: file, encoding: .utf8)
            for trait in Self.conditionTraits(in: source) {
                checked += 1
                #expect(
                    Self.hasReason(trait),
                    "\(file.path.dropFirst(Self.root.path.count + 1)): .enabled/.disabled(\(trait)) gives no reason")
            }
        }
        #expect(checked > 0, "no condition traits found under Tests/: the search is broken")
    }
}

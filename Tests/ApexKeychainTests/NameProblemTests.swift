import ApexKeychain
import Testing

/// The storage model's rule for keys and services, as importers ask it before they plan an item.
@Suite("name rule")
struct NameProblemTests {
    @Test("a name is empty, longer than 256 UTF-16 code units, holds U+0000, or is taken")
    func boundaries() {
        #expect(NameProblem(of: "") == .empty)
        #expect(NameProblem(of: String(repeating: "k", count: 256)) == nil)
        #expect(NameProblem(of: String(repeating: "k", count: 257)) == .tooLong)
        // Counted as the TypeScript API counts: an emoji outside the BMP is two code units.
        #expect(NameProblem(of: String(repeating: "😀", count: 128)) == nil)
        #expect(NameProblem(of: String(repeating: "😀", count: 128) + "k") == .tooLong)
        #expect(NameProblem(of: "a\u{0}b") == .containsNUL)
        #expect(NameProblem(of: "com.example.app") == nil)
    }

    @Test("the core refuses exactly the names the rule names")
    func coreAgrees() async throws {
        let kc = try Keychain(
            KeychainOptions(service: "s"), database: InMemoryKeychainDatabase(), device: SimulatedDevice())
        for key in ["", String(repeating: "k", count: 257), "a\u{0}b", "fine", String(repeating: "😀", count: 128)] {
            let refused: Bool
            do {
                try await kc.setItem(key, "v")
                refused = false
            } catch {
                refused = true
            }
            #expect(refused == (NameProblem(of: key) != nil), "\(key.utf16.count) code units")
        }
    }
}

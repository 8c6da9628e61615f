import ApexDumps
import Foundation
import Testing

/// Inputs the fuzzers found: each once crashed a reader; now each is a clear error naming the file.
@Suite("Fuzz findings")
struct FuzzFindingsTests {
    static func fixture(_ name: String) throws -> Data {
        let url = try #require(Bundle.module.url(forResource: "Fixtures/fuzz-findings/\(name)", withExtension: nil))
        return try Data(contentsOf: url)
    }

    @Test(
        "a binary plist holding a set is refused as malformed, not handed to Foundation (which crashes on it)",
        arguments: ["set-in-offset-table.bplist", "set-of-one-string.bplist"])
    func binaryPlistWithSet(name: String) throws {
        let data = try Self.fixture(name)
        #expect(throws: DumpError.self) { try IOSPlistReader.read(data, path: name) }
        do {
            _ = try IOSPlistReader.read(data, path: name)
        } catch {
            #expect(error.kind == .malformed)
            #expect(error.path == name)
            #expect(error.message.contains("set"))
        }
    }

    @Test("the binary samples still read after the check")
    func binarySamplesStillRead() throws {
        let plist = try PropertyListSerialization.data(
            fromPropertyList: [["class": "genp", "svce": "s", "acct": "a", "v_Data": Data("x".utf8), "pdmn": "ck"]],
            format: .binary, options: 0)
        #expect(try IOSPlistReader.read(plist, path: "ok.plist").count == 1)
    }
}

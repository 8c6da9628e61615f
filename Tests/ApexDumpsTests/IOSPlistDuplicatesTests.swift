import Foundation
import Testing

@testable import ApexDumps

/// Class arrays given twice at the top level (issue 28): the items of every copy are read.
extension IOSPlistReaderTests {
    @Test("two genp arrays at the top level: the items of both are read, each array's named")
    func duplicateClassArrays() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>genp</key><array><dict><key>svce</key><string>first</string></dict></array>
            <key>inet</key><array><dict><key>srvr</key><string>example.com</string></dict></array>
            <key>genp</key><array><dict><key>svce</key><string>second</string></dict>
            <dict><key>svce</key><string>third</string></dict></array>
            </dict></plist>
            """
        let records = try IOSPlistReader.read(Data(xml.utf8), path: "in/dump.plist")
        #expect(
            records.map(\.location) == [
                "genp array 1 item 1", "genp array 2 item 1", "genp array 2 item 2", "inet item 1",
            ])
        #expect(records.map(\.service) == [.string("first"), .string("second"), .string("third"), nil])
        #expect(records.map(\.itemClass) == ["genp", "genp", "genp", "inet"])
    }

    @Test("a second class array that is not an array is an error naming it, as the first would be")
    func duplicateClassArrayOfWrongKind() throws {
        let xml = """
            <plist version="1.0"><dict>
            <key>genp</key><array><dict><key>svce</key><string>first</string></dict></array>
            <key>genp</key><string>oops</string>
            </dict></plist>
            """
        let error = try #require(throws: DumpError.self) {
            try IOSPlistReader.read(Data(xml.utf8), path: "in/dump.plist")
        }
        #expect(error.kind == .malformed)
        #expect(error.message.hasPrefix("genp is a string, expected an array of items"), "\(error.message)")
    }
}

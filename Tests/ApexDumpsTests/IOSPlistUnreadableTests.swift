import Foundation
import Testing

@testable import ApexDumps

/// A `pdmn`, `sync` or `accc` a dump holds but can't be read: that item's protection is unknown (issue 28).
extension IOSPlistReaderTests {
    /// An XML plist of one good item and one item for each attribute that can't be read.
    static let unreadableProtectionPlist = """
        <plist version="1.0"><array>
        <dict><key>class</key><string>genp</string><key>svce</key><string>good</string><key>pdmn</key><string>ak</string><key>sync</key><integer>0</integer></dict>
        <dict><key>class</key><string>genp</string><key>svce</key><string>pdmn</string><key>pdmn</key><integer>7</integer></dict>
        <dict><key>class</key><string>genp</string><key>svce</key><string>sync</string><key>pdmn</key><string>ak</string><key>sync</key><integer>2</integer></dict>
        <dict><key>class</key><string>genp</string><key>svce</key><string>accc</string><key>pdmn</key><string>ak</string><key>accc</key><data>AAEC</data></dict>
        <dict><key>class</key><string>genp</string><key>svce</key><string>accc-text</string><key>pdmn</key><string>ak</string><key>accc</key><string>nothing like an access control</string></dict>
        </array></plist>
        """

    @Test("a pdmn number, a sync of 2 or an accc that does not decode is that item's problem, not the dump's")
    func unreadableProtectionIsPerItem() throws {
        let records = try IOSPlistReader.read(Data(Self.unreadableProtectionPlist.utf8), path: "in/dump.plist")
        #expect(records.map(\.service) == ["good", "pdmn", "sync", "accc", "accc-text"].map { .string($0) })
        #expect(records[0].protection == "ak")
        #expect(records[1].protection == nil)
        #expect(records[2].synchronizable == false)
        #expect(records[3].accessControl == nil)
        #expect(records[4].accessControl == nil)
        #expect(records[0].unreadable.isEmpty && records[0].unreadableProtection == nil)
        #expect(records[1].unreadable == ["pdmn": "pdmn is a number, expected a string"])
        #expect(records[2].unreadable == ["sync": "sync is a number other than 0 or 1"])
        #expect(records[3].unreadable.keys.sorted() == ["accc"])
        #expect(records[3].extra["accc"] == "hex:000102")
        #expect(records[4].unreadable == ["accc": "accc is text that is not an access-control description"])
        #expect(records[4].extra["accc"] == "nothing like an access control")
        #expect(
            records[1].unreadableProtection == "the item's protection is unknown: pdmn is a number, expected a string")
        // Damaged Base64 in one of them is that item's problem too.
        let damaged = Self.unreadableProtectionPlist.replacingOccurrences(
            of: "<data>AAEC</data>", with: "<data>A</data>")
        let read = try IOSPlistReader.read(Data(damaged.utf8), path: "in/dump.plist")
        #expect(read[3].unreadable["accc"]?.hasPrefix("accc is <data> that is not valid Base64") == true)
    }

    /// A `pdmn`, `sync` or `accc` that can't be read: the item's protection is unknown, the dump reads.
    static let unreadableProtection: [(name: String, data: Data, key: String, message: String)] = {
        let item = ["class": "genp", "v_Data": Data(secret.utf8)] as [String: Any]
        func with(_ key: String, _ value: Any) -> Data { xml([item.merging([key: value]) { $1 }]) }
        return [
            ("sync 2", with("sync", 2), "sync", "sync is a number other than 0 or 1"),
            ("sync text", with("sync", "yes"), "sync", "sync is a string, expected 0, 1 or a boolean"),
            ("pdmn not UTF-8", with("pdmn", Data([0xFF])), "pdmn", "pdmn is data that is not UTF-8 text"),
            ("pdmn a number", with("pdmn", 7), "pdmn", "pdmn is a number, expected a string"),
            ("accc a number", with("accc", 1), "accc", "accc is a number, expected data or text"),
            ("accc bad DER", with("accc", Data([0x31, 0x84, 0xFF, 0xFF, 0xFF, 0xFF])), "accc", "accc: DER length"),
            (
                "accc bad text", with("accc", "<SecAccessControlRef: 0x1234>"), "accc",
                "accc is text that is not an access-control description"
            ),
            (
                "accc <data> not Base64", xmlItems([xmlItem(data: "accc", "MQ=")]), "accc",
                "accc is <data> that is not valid Base64"
            ),
        ]
    }()

    @Test(
        "a pdmn, sync or accc that can't be read is the item's: its protection is unknown, named, the dump reads",
        arguments: unreadableProtection.indices)
    func unreadableProtectionAttribute(index: Int) throws {
        let (name, data, key, message) = Self.unreadableProtection[index]
        let records = try IOSPlistReader.read(data, path: "in/dump.plist")
        #expect(records.count == 1, "\(name)")
        #expect(records.first?.unreadable.keys.sorted() == [key], "\(name)")
        #expect(
            records.first?.unreadable[key]?.hasPrefix(message) == true, "\(name): \(records.first?.unreadable ?? [:])")
        #expect(records.first?.unreadableProtection?.contains(message) == true, "\(name)")
        #expect(records.first?.itemClass == "genp", "\(name)")
    }
}

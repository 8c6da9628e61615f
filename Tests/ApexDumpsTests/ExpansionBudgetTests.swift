import Foundation
import Testing

@testable import ApexDumps

/// Binary plists whose shared objects would expand a small file into far more items, values and bytes than it
/// holds (issue 28): each is refused, naming the file and what is wrong, before it is read out.
@Suite("expansion budget")
struct ExpansionBudgetTests {
    /// `count` references to one item `{class: genp, svce: s}`: the file holds the item once.
    static func repeatedItem(_ count: Int) -> Data {
        TinyBinaryPlist.build(
            [
                [0xAF, 0x12] + TinyBinaryPlist.bigEndian(count, 4)
                    + Array(repeating: [0, 1], count: count).flatMap { $0 },
                [0xD2, 0, 2, 0, 4, 0, 3, 0, 5], [0x55] + Array("class".utf8), [0x54] + Array("genp".utf8),
                [0x54] + Array("svce".utf8), [0x51, 0x73],
            ], refSize: 2)
    }

    /// One item whose attribute `tags` is a chain of `levels` arrays, each holding the next twice: 2^levels
    /// values from a file of a few hundred bytes.
    static func sharedChain(levels: Int, items: Int = 1) -> Data {
        var objects: [[UInt8]] = [
            [0xAF, 0x10, UInt8(items)] + Array(repeating: 1, count: items), [0xD2, 2, 3, 4, 5],
            [0x55] + Array("class".utf8), [0x54] + Array("tags".utf8), [0x54] + Array("genp".utf8),
        ]
        for level in 0..<levels { objects.append([0xA2, UInt8(6 + level), UInt8(6 + level)]) }
        objects.append([0x51, 0x78])
        return TinyBinaryPlist.build(objects)
    }

    /// `items` distinct items `{class: genp, v_Data: shared}` whose `v_Data` is one `<data>` of `size` bytes.
    static func sharedValue(items: Int, size: Int) -> Data {
        // 0 the array, 1 "class", 2 "genp", 3 "v_Data", 4 the data, then the items.
        var objects: [[UInt8]] = [
            [0xAF, 0x11] + TinyBinaryPlist.bigEndian(items, 2)
                + (0..<items).flatMap { TinyBinaryPlist.bigEndian(5 + $0, 2) },
            [0x55] + Array("class".utf8), [0x54] + Array("genp".utf8), [0x56] + Array("v_Data".utf8),
            [0x4F, 0x12] + TinyBinaryPlist.bigEndian(size, 4) + (0..<size).map { UInt8(truncatingIfNeeded: $0) },
        ]
        for _ in 0..<items { objects.append([0xD2, 0, 1, 0, 3, 0, 2, 0, 4]) }
        return TinyBinaryPlist.build(objects, refSize: 2)
    }

    static func error(_ data: Data, _ path: String = "in/dump.plist") throws -> DumpError {
        try #require(throws: DumpError.self) { try IOSPlistReader.read(data, path: path) }
    }

    @Test("one item referred to over and over is refused: far more items than a file of its size holds")
    func repeatedItemIsRefused() throws {
        // 100 000 items from 200 KB: every real item takes more bytes than a reference to it.
        let error = try Self.error(Self.repeatedItem(100_000))
        #expect(error.kind == .malformed)
        #expect(error.path == "in/dump.plist")
        #expect(error.message.contains("far more items than a keychain dump of its size"), "\(error.message)")
        // A few references to one item still read (no real dump has them, but they cost nothing).
        #expect(try IOSPlistReader.read(Self.repeatedItem(3), path: "few.plist").count == 3)
    }

    @Test("the 5 MB file of 5 million references to one item is refused at the real limits")
    func repeatedItemAtRealSize() throws {
        let data = Self.repeatedItem(2_500_000)
        let error = try Self.error(data)
        // Its size would allow 1.3 million items; the run's limit is lower.
        #expect(
            error.message
                == "the run's dumps would hold more than \(DumpLimits.maxItemsPerRun) items together, the limit for one run, and it is refused"
        )
    }

    @Test("a container reached twice inside an attribute is refused, naming the item and the attribute")
    func sharedContainerInAttribute() throws {
        // 2^12 values from a few dozen bytes; well within any value budget, and still refused.
        let error = try Self.error(Self.sharedChain(levels: 12))
        #expect(error.kind == .malformed)
        #expect(error.path == "in/dump.plist")
        #expect(error.message.hasPrefix("item 1: tags reaches the same container twice"), "\(error.message)")
        // A chain that never meets a container twice reads.
        var objects: [[UInt8]] = [
            [0xA1, 1], [0xD2, 2, 3, 4, 5], [0x55] + Array("class".utf8), [0x54] + Array("tags".utf8),
            [0x54] + Array("genp".utf8), [0xA2, 6, 7], [0x51, 0x78], [0xA1, 6],
        ]
        let records = try IOSPlistReader.read(TinyBinaryPlist.build(objects), path: "fine.plist")
        #expect(records.first?.extra["tags"] == #"["x", ["x"]]"#)
        // The same scalar twice in a container is Apple's sharing of equal values: read.
        objects[5] = [0xA2, 6, 6]
        let equal = try IOSPlistReader.read(TinyBinaryPlist.build(objects), path: "fine.plist")
        #expect(equal.first?.extra["tags"] == #"["x", "x"]"#)
    }

    @Test("one value shared by every item may not make a small file a large store")
    func sharedValueBytes() throws {
        // 64 KiB of data as the value of 300 items: 19 MiB written out of a 66 KB file.
        let error = try Self.error(Self.sharedValue(items: 300, size: 64 << 10))
        #expect(error.kind == .malformed)
        #expect(error.message.hasPrefix("the file refers to the same objects over and over"), "\(error.message)")
        #expect(error.message.contains("times the file's size"), "\(error.message)")
        // A few items sharing one value read.
        #expect(try IOSPlistReader.read(Self.sharedValue(items: 3, size: 64 << 10), path: "few.plist").count == 3)
    }

    /// One item whose attribute `tags` is an array of `count` references to one string of `size` bytes: a
    /// scalar repeated, which a real dump may hold, and about `count × size` bytes written out of a file of
    /// `count + size` bytes.
    static func sharedString(count: Int, size: Int) -> Data {
        TinyBinaryPlist.build(
            [
                [0xA1, 1], [0xD2, 2, 3, 4, 5], [0x55] + Array("class".utf8), [0x54] + Array("tags".utf8),
                [0x54] + Array("genp".utf8),
                [0xAF, 0x11] + TinyBinaryPlist.bigEndian(count, 2) + Array(repeating: 6, count: count),
                [0x5F, 0x11] + TinyBinaryPlist.bigEndian(size, 2) + Array(repeating: UInt8(ascii: "x"), count: size),
            ])
    }

    /// An XML plist of `count` distinct items.
    static func items(_ count: Int, prefix: String) -> Data {
        let items = (0..<count).map { "<dict><key>svce</key><string>\(prefix)-\($0)</string></dict>" }
        return Data(("<plist version=\"1.0\"><array>" + items.joined() + "</array></plist>").utf8)
    }

    @Test("the items of a run are counted together: the file that takes them past the run's budget is named")
    func itemsPerRun() throws {
        let folder = try DumpScratch()
        for index in 1...12 { try folder.write(String(format: "dump-%02d.plist", index), Self.items(3, prefix: "s")) }
        // A SharedPreferences file's entries count too.
        try folder.write("zz/shared_prefs/RN_KEYCHAIN.xml", DumpTestFiles.sharedPreferences)
        var budget = ExpansionBudget.run(items: 20)
        let error = try #require(throws: DumpError.self) {
            try DumpReader.scan(paths: [folder.path], standardInput: nil, budget: &budget)
        }
        #expect(error.kind == .malformed)
        #expect(error.path == folder.path + "/dump-07.plist")
        #expect(
            error.message
                == "the run's dumps would hold more than 20 items together, the limit for one run, and it is refused")
        // Within the budget, the run reads, and keeps what it did not spend.
        var enough = ExpansionBudget.run(items: 37)
        #expect(try DumpReader.scan(paths: [folder.path], standardInput: nil, budget: &enough).dumps.count == 13)
        #expect(enough.items == 0)
        var short = ExpansionBudget.run(items: 36)
        let last = try #require(throws: DumpError.self) {
            try DumpReader.scan(paths: [folder.path], standardInput: nil, budget: &short)
        }
        #expect(last.path == folder.path + "/zz/shared_prefs/RN_KEYCHAIN.xml")
    }

    @Test("the values of a run are counted together, each file's within its own budget")
    func valuesPerRun() throws {
        let folder = try DumpScratch()
        for index in 1...12 { try folder.write(String(format: "dump-%02d.plist", index), Self.items(3, prefix: "s")) }
        // Each file: 3 items of 1 attribute, 6 values.
        var budget = ExpansionBudget.run(values: 40)
        let error = try #require(throws: DumpError.self) {
            try DumpReader.scan(paths: [folder.path], standardInput: nil, budget: &budget)
        }
        #expect(error.path == folder.path + "/dump-07.plist")
        #expect(error.message.contains("more than 40 values together, the limit for one run"), "\(error.message)")
    }

    @Test("a folder of files that each expand a shared chain stops at the first, naming it")
    func folderOfSharedChains() throws {
        let folder = try DumpScratch()
        for index in 1...12 {
            try folder.write(String(format: "chain-%02d.plist", index), Self.sharedChain(levels: 24))
        }
        let error = try #require(throws: DumpError.self) { try DumpReader.scan(paths: [folder.path]) }
        #expect(error.path == folder.path + "/chain-01.plist")
        #expect(error.message.hasPrefix("item 1: tags reaches the same container twice"), "\(error.message)")
    }

    @Test("the bytes of a run are counted together: small files sharing one value don't add up to a large store")
    func bytesPerRun() throws {
        // Each file is a few KB and writes out about 1 MiB, within its own budget (16 times its size and 1 MiB).
        let tags = Self.sharedString(count: 700, size: 1500)
        let data = Self.sharedValue(items: 300, size: 3000)
        #expect(try IOSPlistReader.read(tags, path: "tags.plist").first?.extra["tags"]?.utf8.count ?? 0 > 1_000_000)
        #expect(try IOSPlistReader.read(data, path: "data.plist").count == 300)
        let folder = try DumpScratch()
        for index in 1...40 {
            try folder.write(String(format: "dump-%02d.plist", index), index.isMultiple(of: 2) ? data : tags)
        }
        // The run's files share one 1 MiB: the second is refused, naming it.
        let error = try #require(throws: DumpError.self) { try DumpReader.scan(paths: [folder.path]) }
        #expect(error.kind == .malformed)
        #expect(error.path == folder.path + "/dump-02.plist")
        #expect(
            error.message
                == "the run's dumps would write out more keys and values than 16 times their size and 1 MiB together, and it is refused"
        )
        // Files that write out less than their size read, however many.
        let plain = try DumpScratch()
        for index in 1...40 { try plain.write(String(format: "dump-%02d.plist", index), Self.items(3, prefix: "s")) }
        #expect(try DumpReader.scan(paths: [plain.path]).dumps.count == 40)
    }

    @Test("the bytes a run writes out are capped, the file that passes the cap named")
    func bytesPerRunCap() throws {
        let folder = try DumpScratch()
        let value = String(repeating: "v", count: 200_000)
        for index in 1...8 {
            let plist =
                "<plist version=\"1.0\"><array><dict><key>svce</key><string>\(index)-\(value)</string></dict>"
                + "</array></plist>"
            try folder.write(String(format: "dump-%02d.plist", index), plist)
        }
        var budget = ExpansionBudget.run(bytes: 1 << 20)
        let error = try #require(throws: DumpError.self) {
            try DumpReader.scan(paths: [folder.path], standardInput: nil, budget: &budget)
        }
        #expect(error.path == folder.path + "/dump-06.plist")
        #expect(
            error.message
                == "the run's dumps would write out more than 1 MiB of keys and values together, the limit for one run, and it is refused"
        )
    }

    /// A pipe holding `data`, its writing end closed: what a run reads as its standard input.
    static func standardInput(_ data: Data) throws -> Int32 {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let written = data.withUnsafeBytes { write(ends[1], $0.baseAddress, data.count) }
        close(ends[1])
        try #require(written == data.count)
        return ends[0]
    }

    @Test("a dump read from the standard input spends the run's budget with the files")
    func standardInputShareTheRun() throws {
        let folder = try DumpScratch()
        let file = try folder.write("dump.plist", Self.items(3, prefix: "f"))
        for (paths, refused) in [(["-", file], file), ([file, "-"], DumpReader.standardInputName)] {
            let input = try Self.standardInput(Self.items(3, prefix: "s"))
            defer { close(input) }
            var budget = ExpansionBudget.run(items: 5)
            let error = try #require(throws: DumpError.self) {
                try DumpReader.scan(paths: paths, standardInput: input, budget: &budget)
            }
            #expect(error.path == refused, "\(paths)")
            #expect(
                error.message
                    == "the run's dumps would hold more than 5 items together, the limit for one run, and it is refused"
            )
        }
        // Within the run's budget, both read, and the run keeps what they left.
        let input = try Self.standardInput(Self.items(3, prefix: "s"))
        defer { close(input) }
        var budget = ExpansionBudget.run(items: 7)
        let scan = try DumpReader.scan(paths: ["-", file], standardInput: input, budget: &budget)
        #expect(scan.dumps.map(\.path) == [DumpReader.standardInputName, file])
        #expect(budget.items == 1)
    }
}

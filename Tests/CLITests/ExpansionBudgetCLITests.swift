import Foundation
import Testing

/// A binary plist that refers to one item over and over, in a folder: the run stops with 65 at once, naming the
/// file and what is wrong, instead of reading out millions of items (issue 28).
@Suite("expansion budget (CLI)")
struct ExpansionBudgetCLITests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// `count` references to one item `{class: genp, svce: s}`, with 4-byte offsets and 2-byte references.
    static func repeatedItem(_ count: Int) -> Data {
        let objects: [[UInt8]] = [
            [0xAF, 0x12] + bigEndian(count, 4) + Array(repeating: [0, 1], count: count).flatMap { $0 },
            [0xD2, 0, 2, 0, 4, 0, 3, 0, 5], [0x55] + Array("class".utf8), [0x54] + Array("genp".utf8),
            [0x54] + Array("svce".utf8), [0x51, 0x73],
        ]
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let table = bytes.count
        for offset in offsets { bytes += bigEndian(offset, 4) }
        bytes += [0, 0, 0, 0, 0, 0, 4, 2] + bigEndian(objects.count, 8) + bigEndian(0, 8) + bigEndian(table, 8)
        return Data(bytes)
    }

    static func bigEndian(_ value: Int, _ width: Int) -> [UInt8] {
        (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    @Test("inspect and migrate refuse the file (65), naming it and what is wrong")
    func repeatedItemIsRefused() async throws {
        try FileManager.default.createDirectory(atPath: sandbox.path("dumps"), withIntermediateDirectories: true)
        try sandbox.write("dumps/keychain.plist", Self.repeatedItem(200_000))
        for command in ["inspect", "migrate"] {
            let result = try await sandbox.run([command, "dumps"])
            #expect(result.status == 65, "\(command): \(result.err)")
            #expect(
                result.err
                    == "apex-keychain: dumps/keychain.plist: the file refers to the same objects over and over: read out, it would hold far more items than a keychain dump of its size, and it is refused\n",
                "\(command)")
            #expect(result.out == "", "\(command)")
        }
    }

    /// One item whose attribute `tags` is an array of 700 references to one string of 1500 bytes: 2 KB that
    /// write out about 1 MiB, within what one file of its size may.
    static func sharedString() -> Data {
        let objects: [[UInt8]] = [
            [0xA1, 1], [0xD2, 2, 3, 4, 5], [0x55] + Array("class".utf8), [0x54] + Array("tags".utf8),
            [0x54] + Array("genp".utf8), [0xAF, 0x11] + bigEndian(700, 2) + Array(repeating: 6, count: 700),
            [0x5F, 0x11] + bigEndian(1500, 2) + Array(repeating: UInt8(ascii: "x"), count: 1500),
        ]
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let table = bytes.count
        for offset in offsets { bytes += bigEndian(offset, 4) }
        bytes += [0, 0, 0, 0, 0, 0, 4, 1] + bigEndian(objects.count, 8) + bigEndian(0, 8) + bigEndian(table, 8)
        return Data(bytes)
    }

    @Test("standard input and the files share the run's bytes: the file past them is refused (65), named")
    func standardInputSharesTheRun() async throws {
        try sandbox.write("one.plist", Self.sharedString())
        try sandbox.write("two.plist", Self.sharedString())
        let alone = try await sandbox.run(["inspect", "-"], stdin: Self.sharedString())
        #expect(alone.status == 0, "\(alone.err)")
        let files = try await sandbox.run(["inspect", "one.plist", "two.plist"])
        #expect(files.status == 65)
        #expect(
            files.err
                == "apex-keychain: two.plist: the run's dumps would write out more keys and values than 16 times their size and 1 MiB together, and it is refused\n"
        )
        let result = try await sandbox.run(["inspect", "-", "one.plist"], stdin: Self.sharedString())
        #expect(result.status == 65)
        #expect(
            result.err
                == "apex-keychain: one.plist: the run's dumps would write out more keys and values than 16 times their size and 1 MiB together, and it is refused\n"
        )
        #expect(result.out == "")
    }
}

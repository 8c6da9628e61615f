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
}

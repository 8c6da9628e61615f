import ApexDumps
import Foundation
import Testing

@Suite struct HexTests {
    @Test("every byte value is two lower-case digits, in order; nothing for no bytes; a slice reads its own bytes")
    func lowercase() {
        let all = Data((0...255).map { UInt8($0) } + (0...255).reversed().map { UInt8($0) })
        #expect(Hex.lowercase(all) == all.map { String(format: "%02x", $0) }.joined())
        #expect(Hex.lowercase(Data()) == "")
        let slice = all[250..<260]
        #expect(Hex.lowercase(slice) == "fafbfcfdfefffffefdfc")
        #expect(Hex.lowercase(Data([0xAB])) == "ab")
        #expect(Hex.lowercase(Array(all)) == Hex.lowercase(all))
    }
}

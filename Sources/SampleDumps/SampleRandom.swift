import Foundation

/// A seeded generator (SplitMix64): the same seed gives the same bytes on every machine and every run, so the
/// samples are reproducible. Never used for anything secret; the samples hold made-up values only.
struct SampleRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// `count` pseudo-random bytes.
    mutating func bytes(_ count: Int) -> Data {
        var out = Data(capacity: count)
        while out.count < count {
            var word = next()
            for _ in 0..<min(8, count - out.count) {
                out.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return out
    }
}

/// Fixed dates, so that regenerating the samples changes nothing.
enum SampleDates {
    /// 2024-03-01T09:30:00Z, the first item's creation date.
    static let base = Date(timeIntervalSince1970: 1_709_285_400)

    /// `base` plus whole hours and seconds.
    static func at(hours: Int, seconds: Int = 0) -> Date {
        base.addingTimeInterval(TimeInterval(hours * 3600 + seconds))
    }
}

extension Data {
    /// Lower-case hex.
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

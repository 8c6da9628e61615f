import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A failure of the benchmark itself (not a measurement).
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds.
enum Clock {
    static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), in nanoseconds.
    static func threadCPUNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// The process's CPU time, every thread's (`CLOCK_PROCESS_CPUTIME_ID`), in nanoseconds: what a stage costs
    /// whatever the disk's latency and the machine's other load.
    static func processCPUNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// The CPU time (user and system) of the child processes waited for so far, in seconds.
    static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The time the machine's cores wanted to run and the hypervisor ran another guest instead ("steal" in
    /// `/proc/stat`, summed over the cores), in seconds; nil where it can't be read. On a shared virtual machine
    /// it is why one binary's wall-clock time moves from run to run.
    static func stolenSeconds() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return nil }
        // cpu  user nice system idle iowait irq softirq steal ...
        let fields = line.split(separator: " ")
        guard fields.count > 8, let steal = Double(fields[8]) else { return nil }
        return steal / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Seconds elapsed since `start` (a value of ``nanoseconds()``).
    static func seconds(since start: UInt64) -> Double {
        Double(nanoseconds() - start) / 1e9
    }
}

/// SplitMix64: a small seeded generator, so that every run picks the same keys and values.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The names both sides use: one service, one access group, keys `item-000000` … .
enum Names {
    static let service = "apex-bench"
    static let accessGroup = "bench.group"

    static func key(_ index: Int) -> String {
        let digits = String(index)
        return "item-" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }
}

/// The values written: a few printable ASCII strings of the chosen size (ASCII, so the UTF-8 size is the
/// character count and `getItem` can return them as strings).
func makeValues(count: Int, size: Int, rng: inout SplitMix64) -> [String] {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    return (0..<count).map { _ in
        String(decoding: (0..<size).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }, as: UTF8.self)
    }
}

/// The peak resident set size (`VmHWM` of /proc/self/status), as the kernel prints it.
func peakRSS() -> String {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return "unknown" }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let value = line.dropFirst("VmHWM:".count).trimmingCharacters(in: .whitespaces)
        if let kib = Double(value.split(separator: " ").first ?? "") {
            return "\(value) (\(format(kib / 1024, decimals: 1)) MiB)"
        }
        return value
    }
    return "unknown"
}

/// The median of some samples (the mean of the middle two for an even count).
func median(_ samples: [Double]) -> Double {
    precondition(!samples.isEmpty)
    let sorted = samples.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// `value` with a fixed number of decimals.
func format(_ value: Double, decimals: Int) -> String {
    String(format: "%.\(decimals)f", value)
}

/// `text` padded on the left (numbers) or on the right (words) to `width` characters.
func pad(_ text: String, _ width: Int, right: Bool = true) -> String {
    let fill = String(repeating: " ", count: max(0, width - text.count))
    return right ? fill + text : text + fill
}

/// A line on standard error (progress), flushed at once.
func progress(_ message: String) {
    FileHandle.standardError.write(Data("[bench] \(message)\n".utf8))
}

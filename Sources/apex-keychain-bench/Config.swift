import Foundation

/// What to measure, from the command line.
struct Config: Sendable {
    var sizes = [1_000, 10_000, 100_000]
    var operations = 2_000
    var rounds = 20
    var listRuns = 5
    var valueSize = 64
    var seed: UInt64 = 0x00C0_FFEE
    var directory: String?
    var keep = false
    var only: [Operation] = Operation.allCases

    enum Parsed {
        case run(Config)
        case help
        case failure(String)
    }

    static let help = """
        usage: apex-keychain-bench [options]

        Times setItem, getItem, getItemInfo and getAllKeys through the public Keychain API on an embedded
        SQLiteKeychainDatabase store (device profile `linux`, key file), at several store sizes, beside a floor:
        the same SQL statements on a second SQLite file of the same schema, issued through the raw sqlite3 C API
        with reused prepared statements, plus one XChaCha20-Poly1305 seal (set) or open (get) per item.

        Both stores run WAL with synchronous=FULL, so every set pays an fsync on both sides.

        options:
          --sizes N,N,...    store sizes to measure, in items (default 1000,10000,100000)
          --quick            the same as --sizes 1000,10000
          --ops N            set/get/info operations timed per size and operation (default 2000)
          --rounds N         the ops are split into N rounds, alternating API and floor; the median round is
                             reported (default 20: fsync latency drifts, so short alternating rounds)
          --list-runs N      getAllKeys calls timed per size and side (default 5; reported per key listed)
          --value-size N     bytes per value (default 64)
          --seed N           seed of the key and value generator (default 12648430)
          --dir PATH         where to create the two stores (default: a new directory under the temp directory)
          --keep             keep the stores afterwards (default: removed)
          --only OP,OP,...   measure only these of setItem,getItem,getItemInfo,getAllKeys (e.g. for perf)
          -h, --help         show this help

        verdict: "ok" when API µs/op ≤ 2.0 × floor µs/op, else "SLOW". A per-op cost is "flat" when µs/op at
        the largest size ≤ 1.5 × µs/op at the smallest.
        """

    static func parse(_ arguments: [String]) -> Parsed {
        var config = Config()
        var index = 0
        func value() -> String? {
            index += 1
            return index < arguments.count ? arguments[index] : nil
        }
        func positive(_ text: String?, max: Int = Int.max) -> Int? {
            guard let text, let number = Int(text), number >= 1, number <= max else { return nil }
            return number
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "-h", "--help":
                return .help
            case "--quick":
                config.sizes = [1_000, 10_000]
            case "--sizes":
                guard let text = value() else { return .failure("--sizes needs a list, e.g. 1000,10000") }
                let parts = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
                guard !parts.isEmpty, parts.allSatisfy({ ($0 ?? 0) >= 1 && ($0 ?? 0) <= 10_000_000 }) else {
                    return .failure("--sizes: '\(text)' is not a list of sizes between 1 and 10000000")
                }
                config.sizes = Array(Set(parts.compactMap { $0 })).sorted()
            case "--ops":
                guard let n = positive(value(), max: 10_000_000) else {
                    return .failure("--ops needs a positive number")
                }
                config.operations = n
            case "--rounds":
                guard let n = positive(value(), max: 1_000) else { return .failure("--rounds needs a positive number") }
                config.rounds = n
            case "--list-runs":
                guard let n = positive(value(), max: 1_000) else {
                    return .failure("--list-runs needs a positive number")
                }
                config.listRuns = n
            case "--value-size":
                guard let n = positive(value(), max: 1 << 20) else {
                    return .failure("--value-size needs a number between 1 and 1048576")
                }
                config.valueSize = n
            case "--seed":
                guard let text = value(), let seed = UInt64(text) else { return .failure("--seed needs a number") }
                config.seed = seed
            case "--dir":
                guard let path = value() else { return .failure("--dir needs a path") }
                config.directory = path
            case "--only":
                guard let text = value() else { return .failure("--only needs a list of operations") }
                let parts = text.split(separator: ",").map { Operation(rawValue: String($0)) }
                guard !parts.isEmpty, parts.allSatisfy({ $0 != nil }) else {
                    return .failure("--only: '\(text)' is not a list of setItem,getItem,getItemInfo,getAllKeys")
                }
                config.only = Operation.allCases.filter { parts.contains($0) }
            case "--keep":
                config.keep = true
            default:
                return .failure("unknown option '\(argument)' (see --help)")
            }
            index += 1
        }
        if config.rounds > config.operations {
            return .failure("--rounds (\(config.rounds)) must not exceed --ops (\(config.operations))")
        }
        return .run(config)
    }
}

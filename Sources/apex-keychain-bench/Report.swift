import Foundation

/// The printed report: the table, the flatness lines, the diagnostics.
enum Report {
    static let slowRatio = 2.0
    static let flatRatio = 1.5

    static func header(_ config: Config, directory: URL) -> String {
        """
        apex-keychain-bench: Keychain API on SQLiteKeychainDatabase (device linux, key file) vs a raw sqlite3+libsodium floor
        sizes \(config.sizes.map(String.init).joined(separator: ",")); \(config.operations) set/get/info ops per size and side \
        in \(config.rounds) rounds (median round reported); getAllKeys \(config.listRuns) runs per size and side; \
        values \(config.valueSize) B; seed \(config.seed)
        stores in \(directory.path); both WAL, synchronous=FULL (every set commit fsyncs on both sides)
        """
    }

    static func table(_ rows: [Measurement]) -> String {
        let widths = [9, 12, 14, 14, 7, 7]
        let titles = ["size", "operation", "API µs/op", "floor µs/op", "ratio", "verdict"]
        var lines = [
            zip(titles, widths).enumerated().map { pad($1.0, $1.1, right: $0 >= 2 && $0 <= 4) }.joined(separator: "  ")
        ]
        lines.append(String(repeating: "-", count: widths.reduce(0, +) + 2 * (widths.count - 1)))
        for row in rows {
            let decimals = row.operation == .getAllKeys ? 3 : 1
            let cells = [
                pad(String(row.size), widths[0], right: false),
                pad(row.operation.rawValue + (row.operation == .getAllKeys ? "*" : ""), widths[1], right: false),
                pad(format(row.api, decimals: decimals), widths[2]),
                pad(format(row.floor, decimals: decimals), widths[3]),
                pad(format(row.ratio, decimals: 2), widths[4]),
                pad(row.ratio <= slowRatio ? "ok" : "SLOW", widths[5], right: false),
            ]
            lines.append(cells.joined(separator: "  "))
        }
        lines.append("* getAllKeys: µs per key listed (one call lists the whole store).")
        lines.append("verdict: ok when ratio ≤ \(format(slowRatio, decimals: 1)), else SLOW.")
        return lines.joined(separator: "\n")
    }

    static func rounds(_ rows: [Measurement]) -> String {
        var lines = ["spread of the rounds, min / median / max µs/op (API | floor):"]
        for row in rows {
            let decimals = row.operation == .getAllKeys ? 3 : 1
            func spread(_ samples: [Double]) -> String {
                [samples.min() ?? 0, median(samples), samples.max() ?? 0].map { format($0, decimals: decimals) }
                    .joined(separator: " / ")
            }
            lines.append(
                "  \(pad(String(row.size), 7, right: false)) \(pad(row.operation.rawValue, 12, right: false)) "
                    + "\(spread(row.apiRounds)) | \(spread(row.floorRounds))")
        }
        return lines.joined(separator: "\n")
    }

    static func flatness(_ rows: [Measurement], sizes: [Int]) -> String {
        guard let smallest = sizes.first, let largest = sizes.last, smallest != largest else {
            return "flatness: needs at least two sizes"
        }
        var lines = [
            "flatness (µs/op at \(largest) ÷ µs/op at \(smallest); flat when ≤ \(format(flatRatio, decimals: 1))):"
        ]
        for operation in Operation.allCases {
            guard let low = rows.first(where: { $0.size == smallest && $0.operation == operation }),
                let high = rows.first(where: { $0.size == largest && $0.operation == operation })
            else { continue }
            let apiGrowth = high.api / low.api
            let floorGrowth = high.floor / low.floor
            let decimals = operation == .getAllKeys ? 3 : 1
            lines.append(
                "  \(pad(operation.rawValue, 12, right: false)) API \(format(low.api, decimals: decimals)) → "
                    + "\(format(high.api, decimals: decimals)) \(operation.unit): ×\(format(apiGrowth, decimals: 2)) "
                    + "\(apiGrowth <= flatRatio ? "flat" : "NOT FLAT")   (floor ×\(format(floorGrowth, decimals: 2)) "
                    + "\(floorGrowth <= flatRatio ? "flat" : "not flat"))")
        }
        return lines.joined(separator: "\n")
    }

    static func diagnostics(_ diagnostics: [Diagnostics], rows: [Measurement]) -> String {
        var lines = ["diagnostics:"]
        for d in diagnostics {
            let set = rows.first { $0.size == d.size && $0.operation == .setItem }
            let list = rows.first { $0.size == d.size && $0.operation == .getAllKeys }
            var line =
                "  \(d.size): populate API \(format(d.populateAPISeconds, decimals: 2)) s, floor "
                + "\(format(d.populateFloorSeconds, decimals: 2)) s; floor set with synchronous=NORMAL "
                + "\(format(d.floorSetNoFsync, decimals: 1)) µs/op"
            if let set {
                line +=
                    " (so fsync ≈ \(format(set.floor - d.floorSetNoFsync, decimals: 1)) µs of the floor's "
                    + "\(format(set.floor, decimals: 1)); API − floor = \(format(set.api - set.floor, decimals: 1)) µs/op)"
            }
            lines.append(line)
            if let set, set.floor > 0 {
                let share = 100 * max(0, set.floor - d.floorSetNoFsync) / set.floor
                lines.append(
                    "  \(d.size): fsync is ≈\(format(share, decimals: 0))% of the floor's set; the store sets synchronous=FULL "
                        + "itself, so the API side can't be measured without it and the set ratio is mostly fsync vs fsync"
                )
            }
            lines.append(
                "  \(d.size): WAL after population truncated: API \(d.apiTruncated ? "yes" : "NO (a reader held it)"), floor "
                    + "\(d.floorTruncated ? "yes" : "NO"); -wal size after the measurements: API \(d.apiWAL / 1024) KiB, "
                    + "floor \(d.floorWAL / 1024) KiB")
            if let list {
                lines.append(
                    "  \(d.size): getAllKeys µs/key: API \(format(list.api, decimals: 3)); floor SELECT acct "
                        + "\(format(list.floor, decimals: 3)); the store's SELECT of all 18 columns, raw "
                        + "\(format(d.selectAllColumnsPerKey, decimals: 3)); UTF-16 sort of the keys as listed "
                        + "\(format(d.sortPerKey, decimals: 3)), of the keys shuffled \(format(d.shuffledSortPerKey, decimals: 3))"
                )
            }
        }
        return lines.joined(separator: "\n")
    }
}

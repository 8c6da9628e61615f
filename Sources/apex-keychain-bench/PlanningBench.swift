import ApexDumps
import ApexKeychain
import ApexMigration
import Foundation

/// `apex-keychain-bench planning`: the plan of many items of one dump that share a target key and value (issue
/// 28: each was compared with every earlier one, so 100 KB of them took minutes), against a floor measured in the
/// same run: the plan of as many items of one dump, each under a key of its own (a pass over the items with one
/// look-up each). Linear planning keeps the ratio near 1 at any size; a quadratic one makes it grow with the size.
enum PlanningBench {
    /// Generic-password records become string items of the same service and account: the shape of a dump whose
    /// records all map to one target key, without an importer's own mapping in the figure.
    struct RecordImporter: Importer {
        var library: SourceLibrary { .expoSecureStore }

        func importItems(from dumps: [Dump], options: ImportOptions) throws(ImportError) -> [SourceItem] {
            var items: [SourceItem] = []
            for dump in dumps {
                guard case .keychain(let records) = dump.content else { continue }
                for record in records {
                    guard let service = record.service?.text, let account = record.account?.text,
                        case .data(let data) = record.value
                    else { continue }
                    items.append(
                        SourceItem(
                            library: library, platform: .ios,
                            origin: SourceOrigin(path: dump.path, format: dump.format, location: record.location),
                            source: SourceDescription(itemClass: "genp", service: service, account: account),
                            value: .value(data),
                            target: TargetItem(
                                service: service, key: account, kind: .string,
                                options: SetOptions(accessible: .afterFirstUnlock))))
                }
            }
            return items
        }
    }

    /// A dump of `count` records in one service, with one value: all under one account (`equal`), or each under
    /// its own.
    static func dump(_ count: Int, equal: Bool) -> Dump {
        let records = (0..<count).map { index in
            KeychainRecord(
                location: "item \(index + 1)", itemClass: "genp", service: .string("vault"),
                account: .string(equal ? "token" : "token-\(index)"), value: .data(Data("same-value".utf8)),
                protection: "ck")
        }
        return Dump(path: "planning.plist", format: .iosPlist, content: .keychain(records))
    }

    /// The seconds one plan of `dump` takes, into an empty in-memory keychain (as a dry run plans).
    static func plan(_ dump: Dump) async throws -> (seconds: Double, conflicts: Int) {
        let migration = Migration(
            id: MigrationBench.migrationID, importers: [RecordImporter()], source: .dumps([dump]),
            target: MigrationTarget(database: InMemoryKeychainDatabase(), device: SimulatedDevice()))
        let started = Clock.nanoseconds()
        let plan = try await migration.plan()
        return (Clock.seconds(since: started), plan.count(.conflict))
    }

    static func run(sizes: [Int], runs: Int) async throws {
        print(
            "apex-keychain-bench planning: one dump's items that share a target key and value, against as many items "
                + "with a key each (the floor), planned one after the other in each of \(runs) rounds; the ratio is "
                + "the median of the rounds' own ratios, [their range]")
        print("")
        print(pad("items", 8) + pad("equal ms", 11) + pad("floor ms", 11) + pad("ratio", 7) + "  range")
        var verdicts: [String] = []
        for size in sizes {
            progress("planning \(size) items")
            let (equal, floor) = (dump(size, equal: true), dump(size, equal: false))
            var ratios: [Double] = []
            var times: [(Double, Double)] = []
            for _ in 0..<max(runs, 1) {
                let measured = try await plan(equal)
                guard measured.conflicts == size else {
                    throw BenchError("the plan of \(size) equal items has \(measured.conflicts) conflicts")
                }
                let base = try await plan(floor)
                ratios.append(measured.seconds / base.seconds)
                times.append((measured.seconds, base.seconds))
            }
            let ratio = median(ratios)
            let range = "\(format(ratios.min() ?? 0, decimals: 2))–\(format(ratios.max() ?? 0, decimals: 2))"
            print(
                pad(String(size), 8) + pad(format(median(times.map(\.0)) * 1000, decimals: 1), 11)
                    + pad(format(median(times.map(\.1)) * 1000, decimals: 1), 11) + pad(format(ratio, decimals: 2), 7)
                    + "  [\(range)]")
            if size == sizes.max() {
                verdicts.append(
                    "planning \(size) equal items in linear time: \(format(ratio, decimals: 2)) × the floor [\(range)]; "
                        + "target ≤ 3 ×" + (ratio <= 3 ? " ok" : " SLOW"))
            }
        }
        print("")
        for verdict in verdicts { print(verdict) }
    }
}

import ApexDumps
import ApexMigration
import ApexNettle
import ExpoSecureStoreImporter
import Foundation
import ReactNativeEncryptedStorageImporter
import ReactNativeKeychainImporter
import ReactNativeSensitiveInfoImporter
import SampleDumps

/// `apex-keychain-bench backup`: the whole in-process `inspect` of an encrypted iPhone backup against its floor,
/// the key derivation alone, measured in the same run.
///
/// The backup (written once, in a temporary folder, with `SampleDumps`' writers) holds N generic passwords: about
/// half expo-secure-store's (`app:no-auth`, every 50th `app:auth`; the key in `acct` and `gena`), half
/// react-native-keychain's (a service each), in the classes the password opens (`ak`, `ck`, `dk`: 6–8), and every
/// tenth (of both kinds) in a ThisDeviceOnly class (9–11), sealed with the phone's key as well. Its keybag derives the password's
/// key with a phone's default rounds: 10,000,000 of PBKDF2-HMAC-SHA256 (`DPIC`) and then 10,000 of
/// PBKDF2-HMAC-SHA1 (`ITER`).
///
/// - measured: `DumpReader.scan(paths:backups:)` (the keybag opened, `Manifest.db` and the keychain's file
///   decrypted in memory, every item opened), `Migration.collect` with the importers `inspect` runs, and the
///   inventory report as `inspect` makes it, written as JSON to a discarded sink;
/// - floor: the two steps of the key derivation alone (Nettle's PBKDF2-HMAC-SHA256, then PBKDF2-HMAC-SHA1 of its
///   output), for the same password and salts. Nothing can open the backup faster: the rest of the work is the
///   ratio's distance from 1.
///
/// The two alternate, which goes first swapping every round; the ratio is the median of the rounds' own ratios,
/// with their range (this VM's speed drifts from one second to the next).
enum BackupBench {
    /// What to measure.
    struct Options {
        var items = 5_000
        var runs = 3
        /// `DPIC`: a phone's default. `--rounds` lowers it for a quick run.
        var rounds: UInt32 = 10_000_000
        /// `ITER`: a phone's default.
        var iterations: UInt32 = 10_000
    }

    static let usage = "usage: apex-keychain-bench backup [--items N] [--runs N] [--rounds N]\n"
    static let target = 1.1
    /// The made-up password of the generated backup (never printed).
    private static let password = "bench-backup-password"

    /// Parses the arguments after `backup`: the options, or a message for standard error.
    static func parse(_ arguments: [String]) -> Result<Options, BenchError> {
        var options = Options()
        var arguments = arguments[...]
        while let argument = arguments.popFirst() {
            let limit =
                switch argument {
                case "--items": 1_000_000
                case "--runs": 1_000
                case "--rounds": Int(UInt32.max)
                default: 0
                }
            guard limit > 0 else { return .failure(BenchError("unknown option '\(argument)'")) }
            guard let text = arguments.popFirst(), let count = Int(text), count > 0, count <= limit else {
                return .failure(BenchError("\(argument) needs a count from 1 to \(limit)"))
            }
            switch argument {
            case "--items": options.items = count
            case "--runs": options.runs = count
            default: options.rounds = UInt32(count)
            }
        }
        return .success(options)
    }

    /// The backup's items: the index's kind decides the library, the protection class and the names.
    static func items(_ count: Int) -> [BackupKeychainWriter.Item] {
        (0..<count).map { index in
            let padded = String(repeating: "0", count: max(0, 6 - String(index).count)) + String(index)
            let protectionClass = UInt32([9, 18].contains(index % 20) ? 9 + index / 20 % 3 : 6 + index / 2 % 3)
            if index % 2 == 0 {
                let key = "key-\(padded)"
                return BackupKeychainWriter.Item(
                    service: index % 50 == 48 ? "app:auth" : "app:no-auth", account: key,
                    value: Array("sample-value-\(padded)".utf8), generic: Array(key.utf8),
                    accessGroup: "A1B2C3D4E5.com.example.expoapp", protectionClass: protectionClass)
            }
            return BackupKeychainWriter.Item(
                service: "service-\(padded)", account: "user-\(padded)",
                value: Array("sample-password-\(padded)".utf8), accessGroup: "A1B2C3D4E5.com.example.sampleapp",
                protectionClass: protectionClass)
        }
    }

    /// One round: the measured side's parts, and the floor.
    struct Round {
        /// `DumpReader.scan(paths:backups:)`, the importers, the report, its JSON: seconds each.
        var open: Double, collect: Double, report: Double, json: Double
        var floor: Double
        var whole: Double { open + collect + report + json }
    }

    static func run(_ options: Options) throws {
        let parent = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "apex-backup-bench-\(getpid())")
        defer { try? FileManager.default.removeItem(at: parent) }
        let folder = parent.appendingPathComponent("backup")
        let items = Self.items(options.items)
        let sealed = items.filter { $0.protectionClass >= 9 }.count
        progress("writing a backup of \(options.items) items (DPIC \(options.rounds), ITER \(options.iterations))")
        var started = Clock.nanoseconds()
        try BackupFolderWriter.write(
            to: folder, password: password, items: items, iterations: options.iterations,
            passwordIterations: options.rounds)
        let written = Clock.seconds(since: started)
        let manifest = try BackupManifest(plist: Data(contentsOf: folder.appendingPathComponent("Manifest.plist")))
        guard let salt = manifest.keybag.passwordSalt, let rounds = manifest.keybag.passwordIterations,
            rounds == options.rounds, manifest.keybag.iterations == options.iterations
        else { throw BenchError("the written keybag has not the rounds asked for") }
        let floorInput = (salt: salt, rounds: Int(rounds), salt2: manifest.keybag.salt, iterations: options.iterations)

        print(
            "apex-keychain-bench backup: `inspect` of an encrypted backup (\(options.items) keychain items, \(sealed) of "
                + "them ThisDeviceOnly) in process, against its floor, the key derivation alone (Nettle's PBKDF2: "
                + "\(rounds) rounds of HMAC-SHA256, then \(options.iterations) of HMAC-SHA1), in each of "
                + "\(options.runs) rounds; the ratio is the median of the rounds' own ratios, [their range]")
        print("backup written in \(format(written, decimals: 2)) s")
        print("")
        print(
            pad("round", 6) + pad("inspect ms", 12) + pad("floor ms", 11) + pad("ratio", 7) + "   beyond the floor: "
                + "open − floor, importers, report, JSON (ms)")
        var results: [Round] = []
        for index in 0..<options.runs {
            var round = Round(open: 0, collect: 0, report: 0, json: 0, floor: 0)
            for measured in index % 2 == 0 ? [true, false] : [false, true] {
                if measured {
                    try inspect(folder, expected: items.count - sealed, sealed: sealed, into: &round)
                } else {
                    started = Clock.nanoseconds()
                    var first = Nettle.pbkdf2SHA256(
                        password: Array(password.utf8), salt: floorInput.salt, iterations: floorInput.rounds,
                        length: 32)
                    var key = Nettle.pbkdf2SHA1(
                        password: first, salt: floorInput.salt2, iterations: Int(floorInput.iterations), length: 32)
                    round.floor = Clock.seconds(since: started)
                    Nettle.wipe(&first)
                    Nettle.wipe(&key)
                }
            }
            results.append(round)
            print(
                pad(String(index + 1), 6) + pad(format(round.whole * 1000, decimals: 1), 12)
                    + pad(format(round.floor * 1000, decimals: 1), 11)
                    + pad(format(round.whole / round.floor, decimals: 3), 7) + "   "
                    + [round.open - round.floor, round.collect, round.report, round.json]
                    .map { format($0 * 1000, decimals: 1) }.joined(separator: ", "))
        }
        // The same items in a backup whose derivation is one round of each step: what opening costs beside it,
        // measured directly rather than as the difference of two runs of a second each.
        let cheap = parent.appendingPathComponent("one-round")
        try BackupFolderWriter.write(to: cheap, password: password, items: items, iterations: 1, passwordIterations: 1)
        var rest: [Double] = []
        for _ in 0..<options.runs {
            var round = Round(open: 0, collect: 0, report: 0, json: 0, floor: 0)
            try inspect(cheap, expected: items.count - sealed, sealed: sealed, into: &round)
            rest.append(round.open)
        }
        let defaults = options.items >= 5_000 && options.rounds == Options().rounds
        let ratios = results.map { $0.whole / $0.floor }
        let ratio = median(ratios)
        let range = "\(format(ratios.min() ?? 0, decimals: 3))–\(format(ratios.max() ?? 0, decimals: 3))"
        print("")
        print(
            "inspect of a \(options.items)-item backup: \(format(ratio, decimals: 3)) × the key derivation [\(range)] "
                + "(median \(format(median(results.map(\.whole)) * 1000, decimals: 0)) ms against "
                + "\(format(median(results.map(\.floor)) * 1000, decimals: 0)) ms); target ≤ \(format(target, decimals: 1)) ×"
                + (!defaults ? " at 5000 items and a phone's rounds" : ratio <= target ? " ok" : " SLOW"))
        print(
            "beyond the floor (medians): opening the backup \(milliseconds(results.map { $0.open - $0.floor })) ms "
                + "(\(milliseconds(rest)) ms in a backup of one round each: the keybag, Manifest.db, the keychain's "
                + "file and every item), the importers \(milliseconds(results.map(\.collect))) ms, the report "
                + "\(milliseconds(results.map(\.report))) ms, its JSON \(milliseconds(results.map(\.json))) ms")
        print("peak RSS (VmHWM): \(peakRSS())")
    }

    /// The median of `seconds`, in milliseconds with one decimal.
    private static func milliseconds(_ seconds: [Double]) -> String { format(median(seconds) * 1000, decimals: 1) }

    /// The measured side of one round, its parts timed one after the other; checks what it found.
    private static func inspect(_ folder: URL, expected: Int, sealed: Int, into round: inout Round) throws {
        var started = Clock.nanoseconds()
        // As `inspect` reads it: the folder through DumpReader, a dump of format ios-encrypted-backup.
        let access = BackupAccess(password: { _ in Array(Self.password.utf8) })
        let dump = try DumpReader.scan(paths: [folder.path], backups: access).dumps[0]
        round.open = Clock.seconds(since: started)
        guard case .keychain(let records) = dump.content, records.count == expected,
            dump.sealed.values.reduce(0, +) == sealed, !dump.notes.contains(where: { $0.contains("can't be read") })
        else {
            throw BenchError("the backup did not open its \(expected) items and \(sealed) sealed ones: \(dump.notes)")
        }
        started = Clock.nanoseconds()
        let (found, summaries) = try Migration.collect(importers: importers, dumps: [dump], options: ImportOptions())
        round.collect = Clock.seconds(since: started)
        guard found.count == expected else { throw BenchError("the importers found \(found.count) of \(expected)") }
        started = Clock.nanoseconds()
        let report = MigrationReport(inventory: found, dumps: summaries, includeLabels: false)
        round.report = Clock.seconds(since: started)
        started = Clock.nanoseconds()
        var bytes = 0
        try report.writeJSON { bytes += $0.count }
        round.json = Clock.seconds(since: started)
        guard report.items.count == expected, bytes > expected else {
            throw BenchError("the report lists \(report.items.count) of \(expected) items in \(bytes) bytes")
        }
    }

    /// The importers `inspect` runs, in its order (the command-line tool's `DumpInput.importers(from: nil)`).
    private static var importers: [any Importer] {
        [
            ExpoSecureStoreImporter(), ReactNativeSensitiveInfoImporter(), ReactNativeKeychainImporter(),
            ReactNativeEncryptedStorageImporter(),
        ]
    }
}

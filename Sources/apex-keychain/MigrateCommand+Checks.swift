import ApexKeychain
import ApexMigration

/// What `migrate` says beside its report: the warnings, and the exit-code gates.
extension MigrateCommand {
    /// What the report leaves out that the user may not expect: items of libraries `--from` left out, dumps in
    /// which no library's items were found, and `--service-map` sources no item has (almost always a typo).
    func warnings(_ report: MigrationReport, marks: DumpMarks) -> [String] {
        var warnings: [String] = []
        if let library {
            var others: [String: Int] = [:]
            for item in report.items where item.source.library != library {
                others[item.source.library.rawValue, default: 0] += 1
            }
            for (other, count) in others.sorted(by: { $0.key < $1.key }) {
                warnings.append("--from \(library.rawValue): \(count) \(other) item(s) found and skipped")
            }
        }
        warnings += marks.warnings(report.sources)
        let services = report.items.compactMap(\.source.service)
        // Items that record no service (react-native-encrypted-storage's, Android plain-text files) take one the
        // importer implies, which the map may name: a source is used when such an item went to its target.
        let impliedTargets = Set(
            report.items.lazy.filter { $0.source.service == nil || $0.source.service == "" }.compactMap(
                \.target?.service))
        for unmatched in importOptions.serviceMap.unmatched(by: services)
        where !impliedTargets.contains(importOptions.serviceMap[unmatched] ?? "") {
            warnings.append(
                "--service-map '\(DisplayText.escaped(unmatched))=…' matches no service of the dumps (services are compared "
                    + "byte for byte, as found)")
        }
        return warnings
    }

    /// Exit 1 (after the report was written) when an item ends as `--fail-on` names, or, for a dry run with
    /// `--on-conflict fail`, when an item conflicts: the real run would stop.
    func gate(_ report: MigrationReport, subject: String) throws(CLIError) {
        var named: [String] = []
        for ending in failOn {
            let count = report.items.lazy.filter { ending.matches($0, dryRun: report.dryRun) }.count
            // The ending is `--fail-on`'s own word, kept as it is spelt there: only the count is worded around it.
            if count > 0 {
                named.append(
                    named.isEmpty
                        ? "\(Console.counted(count, "item")) \(count == 1 ? "ends" : "end") as \(ending.rawValue)"
                        : "\(count) as \(ending.rawValue)")
            }
        }
        if !named.isEmpty {
            throw CLIError(.failure, "\(subject): \(named.joined(separator: ", ")) (--fail-on)")
        }
        if report.dryRun, onConflict == .fail, report.summary.conflict > 0 {
            throw CLIError(
                .failure,
                "\(subject): \(Console.counted(report.summary.conflict, "conflict")): with --on-conflict fail the run would stop"
            )
        }
    }

    /// The error of a run that left conflicts, blocked items or failed writes: what was migrated, then what was
    /// not, each count once (only those that are not zero).
    static func runProblems(_ s: MigrationReport.Summary, subject: String) -> CLIError {
        // Migrated: written and read back equal (a write that was not verified counts as failed).
        var migrated = Console.counted(s.verified, "item") + " migrated"
        // Items an earlier run migrated are in place too: a second run would otherwise read as a loss.
        if s.exists > 0 { migrated += " (\(s.exists) already there)" }
        let left = [
            (s.conflict, Console.counted(s.conflict, "conflict")), (s.blocked, "\(s.blocked) blocked"),
            (s.failed, "\(s.failed) failed"),
        ].filter { $0.0 > 0 }.map(\.1)
        return CLIError(.failure, "\(subject): \(migrated); not migrated: \(left.joined(separator: ", "))")
    }

    /// ``Remedy/removeHolder`` as the command that removes the item under `target`'s key from `store`.
    static func removeHolder(_ target: MigrationReport.ItemTarget, store: String) -> String {
        var words = ["apex-keychain", "store", "remove", "--store", store, "--service", target.service]
        if let group = target.accessGroup { words += ["--access-group", group] }
        words.append(target.key)
        return
            "; to migrate this one in its place, remove that item first (\(words.map(shellWord).joined(separator: " "))), then run again"
    }

    /// `word` as a shell reads it back: as it is when it holds only safe characters, else in single quotes.
    static func shellWord(_ word: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+=,")
        if !word.isEmpty, word.allSatisfy(safe.contains) { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

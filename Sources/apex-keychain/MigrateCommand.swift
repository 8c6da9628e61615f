import ApexDumps
import ApexKeychain
import ApexKeychainStore
import ApexMigration
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `apex-keychain migrate`: plans the migration of the dumps' items, or runs it into a store.
struct MigrateCommand: RunnableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "migrate",
            abstract: "Plan the migration of keychain dumps, or run it.",
            discussion: """
                Finds the items that react-native-keychain, expo-secure-store, react-native-sensitive-info and \
                react-native-encrypted-storage wrote in the dumps and decides, for each, one action: create, exists, conflict, blocked, sealed, \
                shadowed or skipped. Without --store, or with --dry-run, nothing is written anywhere: the plan \
                is printed, made for the device named by --device (default: the dumps' platform, ios or \
                android). With --store, each 'create' is written into the store, read back and compared; a \
                second run finds them all 'exists'. A protection the device can't give is 'blocked', never \
                weakened. With --on-conflict fail, a conflict stops the run before anything is written, and \
                the plan is printed.

                The report goes to stdout (and with --report, to a file too); it never holds a secret value, \
                and usernames and labels only with --include-labels. Progress goes to stderr when it is a \
                terminal and the run takes over a second, and so does a line for each file of a folder that \
                is not a keychain dump and is skipped (--strict makes it an error); --quiet leaves only errors \
                there. '-' reads a dump from stdin. An encrypted iPhone backup's folder is read with its \
                password (--backup-password-file, else asked on the terminal); --app keeps one app's items.

                  apex-keychain migrate app-data/ --bundle-id com.example.app
                  apex-keychain migrate keychain.plist --store app.db --format json --report report.json
                  apex-keychain migrate Backup/00008110-… --backup-password-file pw.txt --app com.example.app

                Exit codes: 0 done, or the plan was made; 1 some items conflict, are blocked or failed (the rest \
                were migrated), or with --on-conflict fail a conflict stopped the run before anything was \
                written (a plan with a conflict exits 1 too), or an item ends as --fail-on names; 64 usage error; \
                65 a malformed dump, a named file that is not a keychain dump, or with --strict a skipped one; \
                66 an input that does not exist or can't be read, or no keychain dump in the paths; 73, 74, 77 \
                the store's errors (77 also a wrong backup password); 75 the target can't be written now, or a \
                backup's password can't be asked, run again later.
                """,
            arguments: [dumpPathArgument],
            options: [
                Self.store, Self.dryRun, Self.from, Self.device, Self.serviceMap, Self.bundleID, Self.migrationID,
                Self.onConflict,
                Self.failOn, Self.androidBiometryAcceptsPasscode, Self.format, Self.report, Self.reportFormat,
                Self.includeLabels,
                Self.quiet, strictOption, noColorOption,
                StoreOptions.keyFile, StoreOptions.passphraseFile, BackupOptions.passwordFile, BackupOptions.app,
            ])
    }

    /// `--store <store>`: optional here (without it, a plan only).
    static let store = OptionDefinition.option(
        "store", help: "The store to migrate into. Without it, nothing is written: the plan is printed.")
    /// `--dry-run`.
    static let dryRun = OptionDefinition.flag(
        "dry-run", help: "Print the plan against the store without writing anything.")
    /// `--from <library>`: `auto` or a library.
    static let from = OptionDefinition.choice(
        "from", of: SourceLibrary.self, valueName: "library", help: "The library whose items are migrated.",
        extra: [Self.automatic], defaultValue: Self.automatic)
    /// The `--from` value that takes every library.
    static let automatic = "auto"
    /// `--device <profile>`.
    static let device = OptionDefinition.option(
        "device", valueName: "profile",
        help: "The device the plan is made for. (default: the dumps' platform; with --store, the "
            + "store's device, which it must match)",
        allowedValues: DeviceProfile.allCases.map(\.rawValue))
    /// `--service-map <from=to>`, repeatable.
    static let serviceMap = OptionDefinition.option(
        "service-map", valueName: "from=to",
        help: "Migrate the items of source service FROM (as found) into service TO; '=TO' maps the empty "
            + "service (react-native-keychain's Android default). Repeatable.",
        isRepeatable: true)
    /// `--bundle-id <id>`.
    static let bundleID = OptionDefinition.option(
        "bundle-id", valueName: "id",
        help: "The app's bundle identifier: react-native-keychain's default service on iOS. (default: the "
            + "store's, from 'store init --bundle-id'; else inferred from the access group, with a note)")
    /// `--migration-id <id>`.
    static let migrationID = OptionDefinition.option(
        "migration-id", valueName: "id",
        help: "The name of the migration whose records the run keeps in the store and reads: the MigrationID of "
            + "an app's start-up migration, with --dry-run, checks what it wrote; a real run under it goes on with "
            + "it, and once nothing is left marks it complete for the app too. (default: 'default'; an app's "
            + "migration names its own)")
    /// The migration `migrate` runs without `--migration-id`: the one earlier versions of the tool ran, whose
    /// records a store may hold.
    static let defaultMigrationID = MigrationID("default")!
    /// `--on-conflict <action>`.
    static let onConflict = OptionDefinition.choice(
        "on-conflict", of: MigrationPolicy.OnConflict.self, valueName: "action",
        help: "What a conflict does: skip leaves the item and migrates the rest; fail stops before "
            + "anything is written.",
        defaultValue: MigrationPolicy.OnConflict.skip.rawValue)
    /// `--fail-on <actions>`.
    static let failOn = OptionDefinition.option(
        "fail-on", valueName: "actions",
        help: "Exit 1 when any item ends in one of these (a comma list of "
            + FailOn.allCases.map(\.rawValue).joined(separator: ", ")
            + "), in a dry run too: a plan can gate a merge. 'pending' counts items a later run could still "
            + "migrate, not a dry run's writes to come.")

    /// What `--fail-on` can name.
    enum FailOn: String, CaseIterable, Sendable {
        case conflict, blocked, sealed, failed, pending

        /// Whether `item` of a report ends this way.
        func matches(_ item: MigrationReport.Item, dryRun: Bool) -> Bool {
            switch self {
            case .conflict: item.action == .conflict
            case .blocked: item.action == .blocked
            case .sealed: item.action == .sealed
            case .failed: item.result == .failed || item.result == .unverified
            case .pending: item.state == .pending && !(dryRun && item.action == .create)
            }
        }
    }

    /// `--android-biometry-accepts-passcode`.
    static let androidBiometryAcceptsPasscode = OptionDefinition.flag(
        "android-biometry-accepts-passcode",
        help: "react-native-keychain on Android: its biometric items also accepted the device "
            + "credential (version 10), so they become biometryAnyOrPasscode.")
    /// `--format <format>`.
    static let format = OptionDefinition.choice(
        "format", of: Format.self, help: "The report's format.", defaultValue: Format.text.rawValue)
    /// `--report <file>`.
    static let report = OptionDefinition.option(
        "report", valueName: "file",
        help: "Also write the report to this file, in the format its extension names (.json, .md; otherwise "
            + "text) or --report-format gives.")
    /// `--report-format <format>`.
    static let reportFormat = OptionDefinition.choice(
        "report-format", of: Format.self, valueName: "format",
        help: "The --report file's format. (default: from its extension: .json, .md or .markdown, else text)")
    /// `--include-labels`.
    static let includeLabels = OptionDefinition.flag(
        "include-labels", help: "Show usernames and labels in the report (never secrets).")
    /// `--quiet`.
    static let quiet = OptionDefinition.flag("quiet", short: "q", help: "Write nothing to stderr but errors.")

    /// The report's formats.
    enum Format: String, CaseIterable, Sendable {
        case text, json, markdown

        /// The format a report file's extension names: `.json`, `.md` or `.markdown`, else text.
        init(extensionOf path: String) {
            switch (path as NSString).pathExtension.lowercased() {
            case "json": self = .json
            case "md", "markdown": self = .markdown
            default: self = .text
            }
        }
    }

    /// The dumps to read.
    let paths: [String]
    /// The store to write into, or nil for a plan only.
    let store: StoreOptions?
    /// Whether to plan only, even with a store.
    let dryRun: Bool
    /// The library to migrate from; nil for every library.
    let library: SourceLibrary?
    /// The device profile named with `--device`.
    let device: DeviceProfile?
    /// What the importers are told.
    let importOptions: ImportOptions
    /// What a conflict does.
    let onConflict: MigrationPolicy.OnConflict
    /// The migration's name in the store (`--migration-id`).
    let migrationID: MigrationID
    /// The report's format.
    let format: Format
    /// The file the report is also written to.
    let reportFile: ReportFile?
    /// That file's format.
    let reportFormat: Format
    /// Whether usernames and labels are shown.
    let includeLabels: Bool
    /// Whether stderr gets only errors.
    let quiet: Bool
    /// Whether the text on stdout is coloured (a terminal, without `--no-color` or `NO_COLOR`).
    let color: Bool
    /// The endings that make the exit code 1 (`--fail-on`).
    let failOn: [FailOn]
    /// Whether a folder's file that is not a keychain dump is an error.
    let strict: Bool
    /// How an encrypted iPhone backup among the paths is read.
    let backups: BackupOptions

    init(_ values: ParsedValues) throws(CLIError) {
        paths = try values.values(dumpPathArgument)
        if try values.value(Self.store) != nil {
            store = try StoreOptions(values, store: Self.store)
        } else {
            store = nil
            for option in [StoreOptions.keyFile, StoreOptions.passphraseFile] where try values.value(option) != nil {
                throw .usage("'--\(option.name)' unlocks a store: it needs '--store'")
            }
        }
        dryRun = try values.flag(Self.dryRun)
        library =
            try values.value(Self.from) == Self.automatic ? nil : try values.enumeration(Self.from, SourceLibrary.self)
        device = try values.enumeration(Self.device, DeviceProfile.self)
        var serviceMap = ServiceMap()
        for mapping in try values.values(Self.serviceMap) {
            // FROM may be empty: `=TO` maps react-native-keychain's default Android service "".
            guard let equals = mapping.firstIndex(of: "="), mapping.index(after: equals) != mapping.endIndex else {
                throw .usage("invalid value '\(mapping)' for '--service-map <from=to>'; expected FROM=TO")
            }
            let source = String(mapping[..<equals])
            if serviceMap[source] != nil { throw .usage("'--service-map' names the service '\(source)' twice") }
            let target = String(mapping[mapping.index(after: equals)...])
            if Migration.isReservedService(target) {
                throw .usage(
                    "'--service-map \(mapping)': the service '\(target)' holds the migration's records; map to another "
                        + "service")
            }
            serviceMap[source] = target
        }
        let quiet = try values.flag(Self.quiet)
        backups = try BackupOptions(values, quiet: quiet)
        let givenBundleID = try values.value(Self.bundleID)
        if givenBundleID == "" { throw .usage("'--bundle-id' must not be empty") }
        if let app = backups.app, let givenBundleID, app != givenBundleID {
            throw .usage(
                "'--app \(app)' and '--bundle-id \(givenBundleID)' differ; --app is the app's bundle id, so give one "
                    + "of them")
        }
        let bundleID = givenBundleID ?? backups.app
        if let bundleID, Migration.isReservedService(bundleID) {
            throw .usage("'--bundle-id' can't be '\(bundleID)': that service holds the migration's records")
        }
        importOptions = ImportOptions(
            bundleID: bundleID, serviceMap: serviceMap,
            androidBiometryAcceptsPasscode: try values.flag(Self.androidBiometryAcceptsPasscode),
            libraries: library.map { [$0] })
        onConflict = try values.enumeration(Self.onConflict, MigrationPolicy.OnConflict.self) ?? .skip
        if let given = try values.value(Self.migrationID) {
            guard let id = MigrationID(given) else {
                throw .usage("'--migration-id': \(MigrationID.problem(of: given) ?? "not a migration id")")
            }
            migrationID = id
        } else {
            migrationID = Self.defaultMigrationID
        }
        format = try values.enumeration(Self.format, Format.self) ?? .text
        let report = try values.value(Self.report)
        if report == "" { throw .usage("'--report' must not be empty") }
        reportFile = report.map(ReportFile.init(path:))
        let reportFormat = try values.enumeration(Self.reportFormat, Format.self)
        if reportFormat != nil, report == nil {
            throw .usage("'--report-format' is the format of '--report <file>': it needs '--report'")
        }
        self.reportFormat = reportFormat ?? report.map(Format.init(extensionOf:)) ?? .text
        includeLabels = try values.flag(Self.includeLabels)
        self.quiet = quiet
        color = TerminalColor.enabled(noColor: try values.flag(noColorOption))
        strict = try values.flag(strictOption)
        var failOn: [FailOn] = []
        if let list = try values.value(Self.failOn) {
            for name in list.split(separator: ",", omittingEmptySubsequences: false) {
                let trimmed = name.trimmingCharacters(in: .whitespaces)
                guard let ending = FailOn(rawValue: trimmed) else {
                    let allowed = FailOn.allCases.map(\.rawValue)
                    let accepted = allowed.joined(separator: ", ")
                    // As for an option's value: the one meant, when one is near (never taken in its place).
                    let hint = Suggestion.value(for: trimmed, among: allowed).map { "did you mean '\($0)'? " } ?? ""
                    throw .usage(
                        "invalid value '\(trimmed)' in '--fail-on <actions>'; \(hint)expected a comma list of: \(accepted)"
                    )
                }
                if !failOn.contains(ending) { failOn.append(ending) }
            }
        }
        self.failOn = failOn
    }

    func run() async throws(CLIError) {
        try reportFile?.checkFolder()
        // The dumps, their items and the plan hold the secrets; they are released when `migrate()` returns,
        // before the report is written (and the memory they free is wiped: see main.swift).
        var (report, subject, storePath, marks) = try await migrate()
        report.stamp(toolVersion: RootCommand.version, store: storePath)
        if !quiet {
            for warning in warnings(report, marks: marks) { Console.writeError("warning: \(warning)\n") }
        }
        try output(report)
        KeptUntilExit.keep(report)
        // The verdict after a report a person reads, where it is seen even when stdout goes to a file or a pager.
        if format != .json, !quiet {
            Console.writeError(report.verdict.lines(width: TerminalWidth.current()).joined(separator: "\n") + "\n")
        }
        try gate(report, subject: subject)
        if !report.dryRun, report.hasProblems { throw Self.runProblems(report.summary, subject: subject) }
    }

    /// Reads the dumps and plans, or runs the migration: the report, and what the gate's messages name.
    /// - Returns: also what the dumps are beyond their items, for the warnings (a key file holds no items of its
    ///   own).
    private func migrate() async throws(CLIError)
        -> (MigrationReport, subject: String, store: String?, marks: DumpMarks)
    {
        let input = try DumpInput(
            paths: paths, strict: strict, quiet: quiet, library: library,
            ownFiles: (store?.files.map(\.path) ?? [])
                + (reportFile.flatMap { $0.holdsAnEarlierReport ? [$0.path] : nil } ?? []),
            backups: backups)
        let marks = input.marks(library: library)
        try reportFile?.checkNotAnInput(
            ReportFile.inputs(paths: paths, dumps: input.dumps.map(\.path), store: store),
            standardInput: paths.contains("-"))
        var policy = MigrationPolicy(onConflict: onConflict, importOptions: importOptions)
        // Every importer runs: items of a library --from leaves out are listed as skipped, not lost from view.
        let importers = DumpInput.importers(from: nil)
        guard let store else {
            let profile: DeviceProfile
            if let device { profile = device } else { profile = try input.defaultProfile() }
            let target = MigrationTarget(database: InMemoryKeychainDatabase(), device: profile.simulatedDevice)
            let migration = Migration(
                id: migrationID, importers: importers, source: .dumps(input.dumps), target: target, policy: policy)
            let planned = try await plan(migration, store: nil)
            // The dumps' records are not needed past the plan: released, and their memory returned to the system,
            // before its report is made.
            _ = consume migration
            _ = consume input
            FreedMemory.returnToSystem()
            return (report(planned, profile: profile), "the plan", nil, marks)
        }
        let opened = try store.open()
        let profile = opened.database.deviceProfile
        if let device, device != profile {
            throw .usage(
                "'--device \(device.rawValue)' differs from the device of \(opened.path) ('\(profile.rawValue)'); "
                    + "a store's device is set when it is created")
        }
        // The app's bundle id, unless given: the store's (`store init --bundle-id`), as its default service is.
        // A --bundle-id other than the one the store was made with (`store init --bundle-id`) is used, with a word.
        if let given = policy.importOptions.bundleID, let own = opened.database.bundleIdentifier, given != own, !quiet {
            Console.writeError(
                "warning: --bundle-id '\(DisplayText.escaped(given))' is not the bundle id of "
                    + "\(DisplayText.escaped(opened.path)) ('\(DisplayText.escaped(own))'): the app's default-service "
                    + "items go to service '\(DisplayText.escaped(given))', where 'store list' looks only with --service\n"
            )
        }
        if policy.importOptions.bundleID == nil { policy.importOptions.bundleID = opened.database.bundleIdentifier }
        let target = MigrationTarget(database: opened.database, device: opened.device)
        let migration = Migration(
            id: migrationID, importers: importers, source: .dumps(input.dumps), target: target, policy: policy)
        if dryRun {
            let planned = try await plan(migration, store: opened.path)
            _ = consume migration
            _ = consume input
            FreedMemory.returnToSystem()
            return (report(planned, profile: profile), "\(opened.path): the plan", opened.path, marks)
        }
        // Usernames for --include-labels, taken before the run: nothing but the report outlives it.
        var accounts: [String: String?] = [:]
        if includeLabels {
            let (items, _) = try input.items(importers: importers, options: policy.importOptions)
            for item in items { accounts[item.origin.path + "\u{0}" + item.origin.location] = item.source.account }
        }
        // One migration of a store at a time: a second one plans once the first is done, and finds its items.
        let lock: StoreLock
        do throws(StoreError) {
            lock = try StoreLock(store: store.storeURL) {
                if !quiet {
                    Console.writeError(
                        "waiting for another migration of \(DisplayText.escaped(opened.path)) to finish...\n")
                }
            }
        } catch {
            throw ErrorMapping.store(error, store: opened.path)
        }
        defer { withExtendedLifetime(lock) {} }
        var report: MigrationReport
        let progress = progressBar()
        var update: (@Sendable (MigrationProgress) -> Void)?
        if let progress { update = { progress.update(done: $0.done, total: $0.total) } }
        do throws(MigrationError) {
            defer { progress?.end() }
            report = try await migration.run(progress: update)
        } catch {
            if case .conflicts = error {
                // Show which items conflict: the plan, of a run that wrote nothing.
                var shown = self.report(try await plan(migration, store: opened.path), profile: profile)
                shown.stamp(toolVersion: RootCommand.version, store: opened.path)
                try output(shown)
            }
            throw ErrorMapping.migration(error, store: opened.path)
        }
        report.targetDevice = profile.rawValue
        for index in report.items.indices {
            guard let target = report.items[index].target, let reason = report.items[index].reason,
                reason.hasSuffix(Remedy.removeHolder)
            else { continue }
            report.items[index].reason =
                String(reason.dropLast(Remedy.removeHolder.count)) + Self.removeHolder(target, store: opened.path)
        }
        for index in report.items.indices where !accounts.isEmpty {
            let source = report.items[index].source
            if let account = accounts[source.path + "\u{0}" + source.location] {
                report.items[index].source.account = account
            }
        }
        return (report, opened.path, opened.path, marks)
    }

    /// The plan as a dry-run report.
    private func plan(_ migration: Migration, store: String?) async throws(CLIError) -> MigrationPlan {
        do throws(MigrationError) {
            return try await migration.plan()
        } catch {
            throw ErrorMapping.migration(error, store: store)
        }
    }

    /// The plan's report.
    private func report(_ plan: MigrationPlan, profile: DeviceProfile) -> MigrationReport {
        MigrationReport(plan: plan, device: profile.rawValue, includeLabels: includeLabels)
    }

    /// Writes the report to stdout, then to the report file when one was named: a report file that can't be
    /// written still leaves the report on stdout, and the error says what ran.
    private func output(_ report: MigrationReport) throws(CLIError) {
        if format == .json {
            try Console.write(streaming: { try report.writeJSON(to: $0) })
        } else {
            try Console.write(render(report, as: format, width: TerminalWidth.current(), color: color))
        }
        guard let reportFile else { return }
        do throws(CLIError) {
            try reportFile.write(render(report, as: reportFormat, width: nil, color: false))
        } catch {
            let what = report.dryRun ? "the dry run ran" : "the migration ran"
            throw CLIError(error.exitCode, "\(error.message); \(what), and its report is on stdout")
        }
    }

    /// The report in `format`; text fitted to `width` and coloured or not (a file's text is neither).
    private func render(_ report: MigrationReport, as format: Format, width: Int?, color: Bool) -> Data {
        switch format {
        case .json: report.json()
        case .text: report.textData(MigrationReport.TextStyle(width: width, color: color))
        case .markdown: report.markdownData()
        }
    }

    /// The progress bar on stderr while items are written, when stderr is a terminal and not `--quiet`.
    private func progressBar() -> ProgressBar? {
        guard !quiet, isatty(STDERR_FILENO) == 1 else { return nil }
        return ProgressBar()
    }
}

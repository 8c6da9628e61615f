import ApexDumps
import ApexKeychain
import ApexMigration
import Foundation

/// `apex-keychain inspect`: what the dumps hold, without values.
struct InspectCommand: RunnableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "inspect",
            abstract: "List the items of keychain dumps, without values.",
            discussion: """
                Reads each dump (an iOS keychain plist, SQLite export, objection JSON or encrypted iPhone \
                backup; Android SharedPreferences or DataStore files) and lists the items that react-native-keychain, \
                expo-secure-store, react-native-sensitive-info and react-native-encrypted-storage wrote in them: format, library, platform, \
                service, key and protection as found (an access control as its decoded flags; its DER only \
                with --verbose). Values are never shown; usernames only with --include-labels. Nothing is \
                written.

                A folder is searched for dumps by content, whatever the files' names; a file in it that is not \
                a keychain dump is skipped with a line on stderr ('skipped PATH: not a keychain dump'), or with \
                --strict is an error. '-' reads a dump from stdin:

                  adb exec-out run-as com.example.app cat shared_prefs/RN_KEYCHAIN.xml | apex-keychain inspect -

                An encrypted Finder/iTunes backup is read from its folder (the one with Manifest.plist) with its \
                password: --backup-password-file FILE, else asked on the terminal. Deriving its key takes \
                seconds. --app BUNDLE_ID keeps that app's items; --list-apps lists the apps instead:

                  apex-keychain inspect ~/Backups/00008110-… --backup-password-file pw.txt --list-apps

                --format json prints the migration report's shape with 'sources' and, per item, 'source' only.
                """,
            arguments: [dumpPathArgument],
            options: [
                Self.format, Self.includeLabels, Self.verbose, strictOption, noColorOption, BackupOptions.passwordFile,
                BackupOptions.app, Self.listApps,
            ])
    }

    /// The output formats.
    enum Format: String, CaseIterable, Sendable {
        case text, json
    }

    /// `--format <format>`.
    static let format = OptionDefinition.choice(
        "format", of: Format.self, help: "The output format.", defaultValue: Format.text.rawValue)
    /// `--include-labels`.
    static let includeLabels = OptionDefinition.flag(
        "include-labels", help: "Show usernames and labels (personal data, never secrets).")

    /// `--verbose`.
    static let verbose = OptionDefinition.flag(
        "verbose", help: "Show each protection's raw encoding too (an access control's DER as hex).")

    /// `--list-apps`.
    static let listApps = OptionDefinition.flag(
        "list-apps",
        help: "For encrypted iPhone backups: list the apps (from Manifest.plist and the keychain's access groups), "
            + "with how many keychain items each has, instead of the items.")

    /// The dumps to read.
    let paths: [String]
    /// How an encrypted iPhone backup among the paths is read.
    let backups: BackupOptions
    /// Whether to list a backup's apps instead of the items.
    let listsApps: Bool
    /// Whether to print JSON rather than text.
    let json: Bool
    /// Whether usernames are shown.
    let includeLabels: Bool
    /// Whether a folder's file that is not a keychain dump is an error.
    let strict: Bool
    /// Whether the text shows raw encodings beside what was decoded from them.
    let verbose: Bool
    /// Whether the text is coloured (a terminal, without `--no-color` or `NO_COLOR`).
    let color: Bool

    init(_ values: ParsedValues) throws(CLIError) {
        paths = try values.values(dumpPathArgument)
        json = try values.enumeration(Self.format, Format.self) == .json
        includeLabels = try values.flag(Self.includeLabels)
        strict = try values.flag(strictOption)
        verbose = try values.flag(Self.verbose)
        color = TerminalColor.enabled(noColor: try values.flag(noColorOption))
        backups = try BackupOptions(values, quiet: false)
        listsApps = try values.flag(Self.listApps)
        if listsApps, backups.app != nil {
            throw .usage("'--list-apps' lists every app of a backup; '--app' keeps one: give one of them")
        }
    }

    func run() async throws(CLIError) {
        if listsApps { return try listApps() }
        var (report, marks) = try inventory()
        report.stamp(toolVersion: RootCommand.version, store: nil)
        // As `migrate` does: a dump in which no library's items were found gets a warning saying why.
        for warning in marks.warnings(report.sources) { Console.writeError("warning: \(warning)\n") }
        if json {
            try Console.write(streaming: { try report.writeJSON(to: $0) })
        } else {
            let width = TerminalWidth.current()
            try Console.write(
                report.textData(MigrationReport.TextStyle(width: width, verbose: verbose, color: color)))
            // The verdict on stderr, as `migrate` writes it after a text report.
            Console.writeError(report.verdict.lines(width: width).joined(separator: "\n") + "\n")
        }
        KeptUntilExit.keep(report)
    }

    /// The dumps' items as a report. The dumps and items, which hold the secrets, are released when it returns,
    /// before anything is written (and the memory they free is wiped: see main.swift). The dumps go first, and
    /// their memory back to the system, before the report is made.
    /// - Returns: also what the dumps are beyond their items, for the warnings.
    private func inventory() throws(CLIError) -> (MigrationReport, DumpMarks) {
        let input = try DumpInput(paths: paths, strict: strict, quiet: false, backups: backups)
        let marks = input.marks(library: nil)
        // --app is the app's bundle id, as `migrate` takes it.
        let (items, summaries) = try input.items(
            importers: DumpInput.importers(from: nil), options: ImportOptions(bundleID: backups.app))
        _ = consume input
        FreedMemory.returnToSystem()
        return (MigrationReport(inventory: items, dumps: summaries, includeLabels: includeLabels), marks)
    }
}

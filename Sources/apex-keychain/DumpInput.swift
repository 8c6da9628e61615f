import ApexDumps
import ApexKeychain
import ApexKeychainStore
import ApexMigration
import ExpoSecureStoreImporter
import Foundation
import ReactNativeEncryptedStorageImporter
import ReactNativeKeychainImporter
import ReactNativeSensitiveInfoImporter

#if canImport(Glibc)
    import Glibc
#endif

/// The `<path> ...` argument of `inspect` and `migrate`.
let dumpPathArgument = ArgumentDefinition(
    name: "path",
    help: "A dump file, a folder searched for dumps (an app's data folder, say), or '-' for a dump on stdin. "
        + "Each file's format is told from its content; in a folder, files that are not keychain dumps are "
        + "skipped, with a line on stderr.",
    isRepeating: true)

/// `--strict` of `inspect` and `migrate`.
let strictOption = OptionDefinition.flag(
    "strict", help: "Make a file of a folder that is not a keychain dump an error (65) instead of skipping it.")

/// The dumps named on the command line, read, and the items the importers find in them.
struct DumpInput {
    /// The dumps, in the order of the paths.
    let dumps: [Dump]

    /// Reads every path: a file, a folder (searched), or `-` for stdin.
    ///
    /// A folder's files that are not keychain dumps are skipped, each with a line `skipped PATH: not a keychain
    /// dump` on stderr (unless `quiet`): files no reader knows or that hold no keychain data, and Android
    /// preferences files that no importer recognises (``recognises(_:library:)``; `library` is `--from`, which lets
    /// react-native-sensitive-info's importer take files whose name and content carry no mark of it). With
    /// `strict` the first such file is an error instead. A file of a folder that is one of `ownFiles` (the store,
    /// its key file, an earlier report: by device and inode) and is not a dump is left out without a word: the run's own
    /// files are no input.
    /// - Throws: 64 for `-` given twice, or with stdin a terminal; 66 for a path that does not exist or can't be
    ///   read, or paths that hold no dump; 65 for a malformed dump, a named file that is not a keychain dump, or
    ///   with `strict` a skipped one. The message names the file.
    ///
    /// An encrypted iPhone backup's folder among the paths is read with `backups` (its password from
    /// `--backup-password-file` or the terminal): 77 for a wrong or empty password, 75 with neither file nor
    /// terminal, 65 for an unencrypted or damaged backup.
    init(
        paths: [String], strict: Bool, quiet: Bool, library: SourceLibrary? = nil, ownFiles: [String] = [],
        backups: BackupOptions? = nil
    ) throws(CLIError) {
        let fromStandardInput = paths.filter { $0 == "-" }.count
        if fromStandardInput > 1 { throw .usage("'-' (a dump on stdin) can be given once") }
        if fromStandardInput == 1, isatty(STDIN_FILENO) == 1 {
            throw .usage(
                "'-' reads a dump from stdin, which is a terminal: pipe a dump in (adb exec-out run-as PACKAGE cat FILE | apex-keychain inspect -)"
            )
        }
        let scan: DumpScan
        let passwordFailure = BackupOptions.PasswordFailure()
        do throws(DumpError) {
            let access = (backups ?? BackupOptions(quiet: quiet)).access(failure: passwordFailure)
            scan = try DumpReader.scan(paths: paths, standardInput: STDIN_FILENO, backups: access)
        } catch {
            throw passwordFailure.error ?? Self.cliError(error)
        }
        var dumps: [Dump] = []
        var skipped: [DumpError] = []
        let own = Set(ownFiles.compactMap(FileIdentity.init(path:)))
        for entry in scan.entries {
            switch entry {
            case .skipped(let error):
                if !own.isEmpty, let file = FileIdentity(path: error.path), own.contains(file) { continue }
                skipped.append(error)
            case .dump(let dump, let inFolder):
                if case .preferences(let entries) = dump.content, !Self.recognises(dump, library: library) {
                    let error = DumpError(.notADump, path: dump.path, Self.unrecognised(entries, library: library))
                    guard inFolder else { throw Self.cliError(error) }
                    skipped.append(error)
                } else {
                    dumps.append(dump)
                }
            }
        }
        if strict, let first = skipped.first {
            throw CLIError(
                .dataError, "\(first.description) (--strict makes a file that is not a keychain dump an error)")
        }
        if !quiet {
            for error in skipped {
                Console.writeError("skipped \(DisplayText.escaped(error.path)): not a keychain dump\n")
            }
        }
        if dumps.isEmpty {
            let what = skipped.isEmpty ? "" : " (\(skipped.count) file(s) skipped: not keychain dumps)"
            throw CLIError(.noInput, "no keychain dump found in \(paths.joined(separator: ", "))\(what)")
        }
        self.dumps = dumps
    }

    /// Whether an Android preferences dump holds data of a library an importer knows (by content, or by name), or
    /// with `--from react-native-sensitive-info` or `--from react-native-encrypted-storage`, a file of string
    /// entries only that is no one else's.
    static func recognises(_ dump: Dump, library: SourceLibrary? = nil) -> Bool {
        ReactNativeKeychainImporter.recognises(dump) || ExpoSecureStoreImporter.recognises(dump)
            || ReactNativeSensitiveInfoImporter.recognises(dump, library: library)
            || ReactNativeEncryptedStorageImporter.recognises(dump, library: library)
    }

    /// Why a preferences file no importer recognises is not read, and, for a file of plain-text strings (which
    /// carry no library's mark), the libraries that write such files and the `--from` that reads it.
    static func unrecognised(_ entries: [PreferenceEntry], library: SourceLibrary?) -> String {
        let why =
            "not a keychain dump: an Android SharedPreferences file with no react-native-keychain, expo-secure-store or react-native-sensitive-info entries, no FacebookConceal key, no EncryptedSharedPreferences keysets (react-native-encrypted-storage's), and not named as one of their files"
        let plain =
            !entries.isEmpty && entries.allSatisfy { if case .string = $0.value { true } else { false } }
        guard plain else { return why }
        let named = library.map { " (--from \($0.rawValue) does not read such a file)" } ?? ""
        return why
            + "; its entries are all plain-text strings\(named), as react-native-encrypted-storage (1.0.0, or 2.3.0–2.4.4 below API 23) and react-native-sensitive-info (4.x–5.5.8) write them: if one of them wrote it, migrate --from react-native-encrypted-storage or migrate --from react-native-sensitive-info reads it"
    }

    /// What the warnings about dumps without items need to know of the dumps (``DumpMarks``), taken before the
    /// dumps are released.
    func marks(library: SourceLibrary?) -> DumpMarks {
        DumpMarks(dumps: dumps, library: library)
    }

    /// A dump reader's error as the tool reports it.
    static func cliError(_ error: DumpError) -> CLIError {
        let exitCode: ExitCode =
            switch error.kind {
            case .unreadable: .noInput
            case .malformed, .unsupported, .notADump: .dataError
            case .wrongPassword: .permissionDenied
            }
        return CLIError(exitCode, error.description)
    }

    /// The importers, in order of precedence: expo-secure-store, react-native-sensitive-info, react-native-keychain,
    /// then react-native-encrypted-storage (no record is claimed by two of them: ``RecordClaims``; the order only
    /// decides a record found twice).
    static func importers(from library: SourceLibrary?) -> [any Importer] {
        let all: [any Importer] = [
            ExpoSecureStoreImporter(), ReactNativeSensitiveInfoImporter(), ReactNativeKeychainImporter(),
            ReactNativeEncryptedStorageImporter(),
        ]
        guard let library else { return all }
        return all.filter { $0.library == library }
    }

    /// Every importer's items, each source record claimed once (the first importer wins), and a summary of
    /// each dump, as the migration collects them (``Migration/collect(importers:dumps:options:)``).
    /// - Throws: 65 when an importer can't use its data at all (a bad key file).
    func items(importers: [any Importer], options: ImportOptions) throws(CLIError) -> ([SourceItem], [DumpSummary]) {
        do throws(ImportError) {
            return try Migration.collect(importers: importers, dumps: dumps, options: options)
        } catch {
            throw CLIError(.dataError, error.description)
        }
    }

    /// The device profile of the dumps' platform: `ios` or `android`.
    /// - Throws: a usage error when the dumps come from both platforms.
    func defaultProfile() throws(CLIError) -> DeviceProfile {
        let platforms = Set(dumps.map(\.format.platform))
        if platforms.count > 1 {
            throw .usage("the dumps come from both iOS and Android; name the device with '--device <profile>'")
        }
        return platforms.first == .android ? .android : .ios
    }
}

/// What the dumps are, beyond their items: which ones an importer recognised (a Facebook Conceal key file holds
/// no items of its own) and which are Conceal key files, for the warnings about dumps in which no library's items
/// were found.
struct DumpMarks: Sendable {
    /// The paths of the dumps an importer recognises (``DumpInput/recognises(_:library:)``).
    let recognised: Set<String>
    /// The paths of the dumps that are Facebook Conceal key files (react-native-keychain's `crypto.KEY_256.xml`).
    let concealKeyFiles: Set<String>

    init(dumps: [Dump], library: SourceLibrary?) {
        recognised = Set(dumps.lazy.filter { DumpInput.recognises($0, library: library) }.map(\.path))
        concealKeyFiles = Set(dumps.lazy.filter(ReactNativeKeychainImporter.isConcealKeyFile).map(\.path))
    }

    /// A warning for each dump in which no library's items were found: one no importer recognised, and a
    /// Facebook Conceal key file given without react-native-keychain's Android entries, the file it is the key of.
    func warnings(_ sources: [MigrationReport.Source]) -> [String] {
        let keychainEntries = sources.contains {
            $0.library == .reactNativeKeychain && $0.platform == .android
        }
        var warnings: [String] = []
        for source in sources where source.library == nil {
            let path = DisplayText.escaped(source.path)
            if concealKeyFiles.contains(source.path) {
                guard !keychainEntries else { continue }
                warnings.append(
                    "\(path): no library's items were found in it: it is the key of react-native-keychain's "
                        + "FacebookConceal entries, which are in react-native-keychain's SharedPreferences file "
                        + "(shared_prefs/RN_KEYCHAIN.xml); give that file beside it")
            } else if !recognised.contains(source.path) {
                warnings.append("\(path): no library's items were found in it (\(source.format.rawValue))")
            }
        }
        return warnings
    }
}

import ApexDumps
import ApexKeychain
import ApexKeychainStore
import ApexMigration
import ExpoSecureStoreImporter
import Foundation
import ReactNativeKeychainImporter

/// The `<path> ...` argument of `inspect` and `migrate`.
let dumpPathArgument = ArgumentDefinition(
    name: "path",
    help: "A dump file, or a folder searched for the files the importers know (an app's data folder, say). "
        + "Each file's format is told from its content.",
    isRepeating: true)

/// The dumps named on the command line, read, and the items the importers find in them.
struct DumpInput {
    /// The dumps, in the order of the paths.
    let dumps: [Dump]

    /// Reads every path.
    /// - Throws: 66 for a path that does not exist or can't be read, or that holds no dump; 65 for a
    ///   malformed dump or one of unknown format. The message names the file.
    init(paths: [String]) throws(CLIError) {
        do throws(DumpError) {
            dumps = try DumpReader.readAll(paths: paths)
        } catch {
            throw Self.cliError(error)
        }
        if dumps.isEmpty {
            throw CLIError(.noInput, "no dump files found in \(paths.joined(separator: ", "))")
        }
    }

    /// A dump reader's error as the tool reports it.
    static func cliError(_ error: DumpError) -> CLIError {
        let exitCode: ExitCode =
            switch error.kind {
            case .unreadable: .noInput
            case .malformed, .unsupported, .notADump: .dataError
            }
        return CLIError(exitCode, error.description)
    }

    /// The importers, in order of precedence: expo-secure-store first, then react-native-keychain.
    static func importers(from library: SourceLibrary?) -> [any Importer] {
        let all: [any Importer] = [ExpoSecureStoreImporter(), ReactNativeKeychainImporter()]
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


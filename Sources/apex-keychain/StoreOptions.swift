import ApexKeychain
import ApexKeychainStore
import Foundation

/// The `<key>` argument of the item commands.
let keyArgument = ArgumentDefinition(
    name: "key", help: "The item's key. Put '--' before a key that starts with '-'.")

/// The options every item command shares: which store, how to unlock it, and which service.
///
/// A store is unlocked by `--passphrase-file`, else by `--key-file`, else by its default key file
/// (`STORE.key`); a passphrase store without `--passphrase-file` asks for the passphrase on the terminal, once:
/// the passphrase that opened the store answers the `linux` device's passcode prompts of the whole run.
struct StoreOptions: Sendable {
    /// `--store <store>`, required by every store command.
    static let store = OptionDefinition.option("store", help: "The store file.", isRequired: true)
    /// `--service <service>`.
    static let service = OptionDefinition.option(
        "service",
        help: "The service whose items the command reads or writes. (default: the store's default service: the "
            + "--bundle-id given to 'store init', else 'apex-keychain' for linux, 'com.example.app' for the phone "
            + "profiles)")
    /// `--access-group <group>`.
    static let accessGroup = OptionDefinition.option(
        "access-group",
        help: "The access group of the items (the iOS and linux profiles; a migration keeps the group each item "
            + "had). (default: the store's default group: the team id and bundle id on the iOS profiles, 'local' "
            + "on linux)")
    /// `--key-file <key-file>`.
    static let keyFile = OptionDefinition.option(
        "key-file", help: "The key file that unlocks the store. (default: the store's path followed by '.key')")
    /// `--passphrase-file <passphrase-file>`.
    static let passphraseFile = OptionDefinition.option(
        "passphrase-file",
        help:
            "A file holding the store's passphrase, readable by its owner only (at most 1 KiB; one trailing newline is "
            + "not part of it). It also answers the device's passcode prompts. Without it, a passphrase store asks on "
            + "the terminal.")

    /// The options in the order the help shows them.
    static var definitions: [OptionDefinition] { [store, service, accessGroup, keyFile, passphraseFile] }

    /// The store file.
    var storeURL: URL
    /// The service named with `--service`; nil for the device's default.
    var service: String?
    /// The access group named with `--access-group`; nil for the device's default.
    var accessGroup: String?
    /// The key file named with `--key-file`.
    var keyFile: String?
    /// The passphrase file named with `--passphrase-file`.
    var passphraseFile: String?

    /// Reads the shared options of the store commands (``definitions``).
    /// - Throws: a usage error for an empty path, or for both `--key-file` and `--passphrase-file`.
    init(_ values: ParsedValues) throws(CLIError) {
        try self.init(values, store: Self.store)
        service = try values.value(Self.service)
        accessGroup = try values.value(Self.accessGroup)
        if accessGroup == "" { throw .usage("'--access-group' must not be empty") }
    }

    /// Reads the options that open a store for a command with its own `store` option and no `--service` or
    /// `--access-group` (`migrate`: its items name their services): the path, `--key-file`, `--passphrase-file`.
    /// - Throws: a usage error for an empty path, or for both `--key-file` and `--passphrase-file`.
    init(_ values: ParsedValues, store: OptionDefinition) throws(CLIError) {
        storeURL = try Self.storeURL(values, store: store)
        keyFile = try values.value(Self.keyFile)
        passphraseFile = try values.value(Self.passphraseFile)
        if keyFile != nil, passphraseFile != nil {
            throw .usage("'--key-file' and '--passphrase-file' can't be used together")
        }
        if keyFile == "" { throw .usage("'--key-file' must not be empty") }
        if passphraseFile == "" { throw .usage("'--passphrase-file' must not be empty") }
    }

    /// The store named by `--store`, as an absolute file URL.
    static func storeURL(_ values: ParsedValues, store: OptionDefinition = Self.store) throws(CLIError) -> URL {
        guard let path = try values.value(store), !path.isEmpty else { throw .usage("'--store' must not be empty") }
        return URL(fileURLWithPath: path)
    }

    /// The store's path as messages show it (absolute).
    var storePath: String { storeURL.path }

    /// Every file the store's options name, and what it is: the store with the files SQLite keeps beside it
    /// (`-wal`, `-shm`, `-journal`), its key file (the one beside it, which a run without `--key-file` opens, and
    /// the one named) and a passphrase file; whether or not they exist.
    var files: [InputFile] {
        var files = [InputFile(path: storePath, role: "the store")]
        files += InputFile.sqliteCompanions(of: storePath, "the store")
        let defaultKeyFile = SQLiteKeychainDatabase.defaultKeyFile(for: storeURL).path
        files.append(InputFile(path: defaultKeyFile, role: "the store's key file"))
        if let keyFile { files.append(InputFile(path: keyFile, role: "the store's key file")) }
        if let passphraseFile { files.append(InputFile(path: passphraseFile, role: "the passphrase file")) }
        return files
    }

    /// Opens the store and the keychain of the service.
    /// - Throws: the store's errors (65, 66, 74, 77), 75 when a passphrase is needed and there is no terminal,
    ///   64 for a bad service.
    func open() throws(CLIError) -> OpenedStore {
        let path = storePath
        let database: SQLiteKeychainDatabase
        let passcode: PasscodeSource
        if let passphraseFile {
            let passphrase = try Passphrase.read(file: passphraseFile, store: path)
            database = try Self.open(storeURL, .passphrase(passphrase))
            passcode = .given(passphrase)
        } else if let keyFile {
            database = try Self.open(storeURL, .keyFile(URL(fileURLWithPath: keyFile)))
            passcode = .none
        } else {
            let defaultKeyFile = SQLiteKeychainDatabase.defaultKeyFile(for: storeURL)
            do throws(StoreError) {
                database = try SQLiteKeychainDatabase(opening: storeURL, key: .keyFile(defaultKeyFile))
                passcode = .none
            } catch  where error.kind == .wrongKey && !FileManager.default.fileExists(atPath: defaultKeyFile.path) {
                // With no key file, a key file can only be refused because the store has a passphrase. It is
                // asked once per run: the same passphrase answers the device's passcode prompts.
                let passphrase = try Passphrase.ask(store: path)
                database = try Self.open(storeURL, .passphrase(passphrase))
                passcode = .given(passphrase)
            } catch {
                throw ErrorMapping.store(error, store: path)
            }
        }
        let device = database.makeDevice(passcode: passcode)
        if accessGroup != nil, case .android = device.state().platform {
            // The keychain would ignore it and use the one group Android has: say so instead of reading elsewhere.
            throw .usage(
                "'--access-group' has no meaning on the Android device profiles (Android has no access groups); "
                    + "\(path) models '\(database.deviceProfile.rawValue)'")
        }
        do throws(KeychainError) {
            let keychain = try Keychain(
                KeychainOptions(service: service, accessGroup: accessGroup), database: database, device: device)
            return OpenedStore(path: path, database: database, device: device, keychain: keychain)
        } catch {
            throw ErrorMapping.keychain(error, store: path)
        }
    }

    private static func open(_ url: URL, _ key: StoreKeySource) throws(CLIError) -> SQLiteKeychainDatabase {
        do throws(StoreError) {
            return try SQLiteKeychainDatabase(opening: url, key: key)
        } catch {
            throw ErrorMapping.store(error, store: url.path)
        }
    }
}

/// An open store, its device and the keychain of one service.
struct OpenedStore: Sendable {
    /// The store's path, for messages.
    let path: String
    /// The store.
    let database: SQLiteKeychainDatabase
    /// The device the store models.
    let device: any Device
    /// The keychain of the service the command names.
    let keychain: Keychain

    /// Runs keychain calls, reporting their errors as the store's.
    func perform<T>(_ body: (Keychain) async throws(KeychainError) -> T) async throws(CLIError) -> T {
        do throws(KeychainError) {
            return try await body(keychain)
        } catch {
            throw ErrorMapping.keychain(error, store: path)
        }
    }

    /// The error of a missing item: exit 1, naming the key, the service (and the access group, when it is not
    /// the device's default) and the store.
    func missingItem(_ key: String) -> CLIError {
        CLIError(.failure, "no item '\(key)' in \(place(keychain.service, keychain.accessGroup)) of \(path)")
    }

    /// "service 'S'", and "of access group 'G'" when `group` is not the device's default.
    func place(_ service: String, _ group: String) -> String {
        isDefaultGroup(group) ? "service '\(service)'" : "service '\(service)' of access group '\(group)'"
    }

    /// Whether `group` is the device's default access group, byte for byte.
    func isDefaultGroup(_ group: String) -> Bool { ExactText.equal(group, device.defaultAccessGroup) }
}

/// Where a store's passphrase comes from: a file, or the terminal.
enum Passphrase {
    /// The longest passphrase: 1 KiB.
    static let maximumLength = SQLiteKeychainDatabase.maximumPassphraseLength

    /// The passphrase in a file: its contents without one trailing newline.
    /// - Throws: 66 when the file can't be read, 77 when group or others can access it, 64 when the passphrase
    ///   is longer than ``maximumLength`` (the file is read no further) or empty.
    static func read(file: String, store: String) throws(CLIError) -> Data {
        var contents: Data
        let tooLarge = CLIError(
            .usage,
            "\(store): the passphrase file \(file) is too large: a passphrase is at most \(Console.byteCount(maximumLength)), "
                + "and one trailing newline")
        do throws(CLIError) {
            contents = try Console.readSecretFile(file, role: "passphrase file", limit: maximumLength + 1)
        } catch {
            throw error.exitCode == .usage ? tooLarge : CLIError(error.exitCode, "\(store): \(error.message)")
        }
        if contents.last == UInt8(ascii: "\n") { contents.removeLast() }
        guard contents.count <= maximumLength else {
            contents.resetBytes(in: 0..<contents.count)
            throw tooLarge
        }
        guard !contents.isEmpty else {
            throw CLIError(.usage, "\(store): the passphrase file \(file) holds an empty passphrase")
        }
        return contents
    }

    /// Asks for the passphrase of a store on the terminal.
    /// - Throws: 75 when there is no terminal, 77 for an empty answer.
    static func ask(store: String) throws(CLIError) -> Data {
        guard let answer = TerminalInput.readSecret(prompt: "Passphrase for \(store): ") else {
            throw CLIError(
                .temporaryFailure,
                "\(store): the store is locked with a passphrase and there is no terminal to ask for it; "
                    + "pass --passphrase-file FILE")
        }
        guard !answer.isEmpty else { throw CLIError(.permissionDenied, "\(store): the passphrase is empty") }
        guard answer.count <= maximumLength else {
            throw CLIError(.usage, "\(store): the passphrase typed is longer than \(Console.byteCount(maximumLength))")
        }
        return answer
    }

    /// Asks for the passphrase of a new store on the terminal, twice, without echo.
    /// - Throws: 75 when there is no terminal; 64 for an empty or too long answer, or two that differ.
    static func askNew(store: String) throws(CLIError) -> Data {
        let noTerminal = CLIError(
            .temporaryFailure,
            "\(store): there is no terminal to ask for the passphrase; pass --passphrase-file FILE")
        guard var first = TerminalInput.readSecret(prompt: "New passphrase for \(store): ") else { throw noTerminal }
        guard !first.isEmpty else { throw CLIError(.usage, "\(store): the passphrase is empty; nothing was written") }
        guard first.count <= maximumLength else {
            first.resetBytes(in: 0..<first.count)
            throw CLIError(
                .usage,
                "\(store): the passphrase typed is longer than \(Console.byteCount(maximumLength)); nothing was written"
            )
        }
        guard var second = TerminalInput.readSecret(prompt: "The same passphrase again: ") else {
            first.resetBytes(in: 0..<first.count)
            throw noTerminal
        }
        defer { second.resetBytes(in: 0..<second.count) }
        guard first == second else {
            first.resetBytes(in: 0..<first.count)
            throw CLIError(.usage, "\(store): the two passphrases typed differ; nothing was written")
        }
        return first
    }
}

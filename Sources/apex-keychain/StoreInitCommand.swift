import ApexKeychain
import ApexKeychainStore
import ApexMigration
import Foundation

/// `apex-keychain store init`: creates a store, unlocked by a new key file or by a passphrase.
struct StoreInitCommand: RunnableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "init",
            abstract: "Create a store.",
            discussion: """
                Creates the store file and, without --passphrase-file or --passphrase, a key file beside it (the \
                store's path followed by '.key', mode 0600) that later commands use to open it. Both are written \
                under temporary names and moved into place: an interrupted init leaves neither, and the next init \
                removes what it left. With --passphrase-file, the store is locked with that passphrase instead, \
                and the passphrase is also the passcode of the linux device. With --passphrase, the passphrase is \
                typed on the terminal, twice, without echo.

                The device profile decides which protections the store can give, as that device would: a write \
                the device can't protect as asked is refused, never weakened. --bundle-id names the app whose \
                keychain the store holds: it is the default service of the other store commands (react-native-\
                keychain's default service on iOS is the bundle identifier, so 'store list' then shows its items).
                """,
            options: [StoreOptions.store, Self.device, Self.bundleID, Self.passphraseFile, Self.passphrase])
    }

    /// `--device <profile>`.
    static let device = OptionDefinition.choice(
        "device", of: DeviceProfile.self, valueName: "profile", help: "The device the store models.",
        defaultValue: DeviceProfile.linux.rawValue)
    /// `--bundle-id <id>`.
    static let bundleID = OptionDefinition.option(
        "bundle-id", valueName: "id",
        help: "The app's bundle identifier, kept in the store: the default service of the store commands. "
            + "(default: 'apex-keychain' for linux, 'com.example.app' for the phone profiles)")
    /// `--passphrase-file <passphrase-file>`.
    static let passphraseFile = OptionDefinition.option(
        "passphrase-file",
        help: "Lock the store with the passphrase in this file, readable by its owner only (at most 1 KiB; one "
            + "trailing newline is not part of it) instead of a key file.")
    /// `--passphrase`.
    static let passphrase = OptionDefinition.flag(
        "passphrase",
        help: "Lock the store with a passphrase typed on the terminal (asked twice, without echo) instead of a key "
            + "file.")

    /// The store to create.
    let storeURL: URL
    /// The device it models.
    let device: DeviceProfile
    /// The passphrase file, or nil for a key file or a passphrase typed.
    let passphraseFile: String?
    /// Whether the passphrase is typed on the terminal.
    let asksForPassphrase: Bool
    /// The app's bundle identifier, or nil for the device's default service.
    let bundleID: String?

    init(_ values: ParsedValues) throws(CLIError) {
        storeURL = try StoreOptions.storeURL(values)
        device = try values.enumeration(Self.device, DeviceProfile.self) ?? .linux
        passphraseFile = try values.value(Self.passphraseFile)
        if passphraseFile == "" { throw .usage("'--passphrase-file' must not be empty") }
        asksForPassphrase = try values.flag(Self.passphrase)
        if asksForPassphrase, passphraseFile != nil {
            throw .usage("'--passphrase' and '--passphrase-file' can't be used together")
        }
        bundleID = try values.value(Self.bundleID)
        if let bundleID {
            switch NameProblem(of: bundleID) {
            case nil: break
            case .empty: throw .usage("'--bundle-id' must not be empty")
            case .tooLong, .containsNUL:
                throw .usage(
                    "'--bundle-id' must be at most \(NameProblem.maxLength) characters, without U+0000: it is a service name"
                )
            }
            if Migration.isReservedService(bundleID) {
                throw .usage(
                    "'--bundle-id' can't be '\(Migration.ledgerService)': that service holds the migration's records")
            }
        }
    }

    func run() async throws(CLIError) {
        let path = storeURL.path
        let source: StoreKeySource
        let keyLine: String
        if let passphraseFile {
            source = .passphrase(try Passphrase.read(file: passphraseFile, store: path))
            keyLine = "key:      passphrase"
        } else if asksForPassphrase {
            // Said before asking, so that a passphrase is not typed twice for a store that can't be created.
            if FileManager.default.fileExists(atPath: path) {
                throw ErrorMapping.store(
                    StoreError(.cannotCreate, path: path, "a file already exists there"), store: path)
            }
            source = .passphrase(try Passphrase.askNew(store: path))
            keyLine = "key:      passphrase"
        } else {
            let keyFile = SQLiteKeychainDatabase.defaultKeyFile(for: storeURL)
            source = .keyFile(keyFile)
            keyLine = "key file: \(keyFile.path)"
        }
        // The store holds keys and labels in the clear, and SQLite creates it (and later its -wal and -shm
        // files, which take its mode) with the process's umask: keep every file this process creates private.
        _ = umask(0o077)
        let service: String
        do throws(StoreError) {
            let database = try SQLiteKeychainDatabase.create(
                at: storeURL, key: source, device: device, bundleIdentifier: bundleID)
            service = database.makeDevice(passcode: .none).defaultService
        } catch {
            throw ErrorMapping.store(error, store: path)
        }
        try Console.write(
            "store:    \(path)\ndevice:   \(device.rawValue)\nservice:  \(DisplayText.escaped(service))\n\(keyLine)\n")
    }
}

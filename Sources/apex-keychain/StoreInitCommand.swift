import ApexKeychainStore
import Foundation

/// `apex-keychain store init`: creates a store, unlocked by a new key file or by a passphrase.
struct StoreInitCommand: RunnableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "init",
            abstract: "Create a store.",
            discussion: """
                Creates the store file and, without --passphrase-file, a key file beside it (the store's path \
                followed by '.key', mode 0600) that later commands use to open it. Both are written under \
                temporary names and moved into place: an interrupted init leaves neither, and the next init \
                removes what it left. With --passphrase-file, the \
                store is locked with that passphrase instead, and the passphrase is also the passcode of the \
                linux device.

                The device profile decides which protections the store can give, as that device would: a write \
                the device can't protect as asked is refused, never weakened.
                """,
            options: [StoreOptions.store, Self.device, Self.passphraseFile])
    }

    /// `--device <profile>`.
    static let device = OptionDefinition.choice(
        "device", of: DeviceProfile.self, valueName: "profile", help: "The device the store models.",
        defaultValue: DeviceProfile.linux.rawValue)
    /// `--passphrase-file <passphrase-file>`.
    static let passphraseFile = OptionDefinition.option(
        "passphrase-file",
        help: "Lock the store with the passphrase in this file, readable by its owner only (at most 1 KiB; one "
            + "trailing newline is not part of it) instead of a key file.")

    /// The store to create.
    let storeURL: URL
    /// The device it models.
    let device: DeviceProfile
    /// The passphrase file, or nil for a key file.
    let passphraseFile: String?

    init(_ values: ParsedValues) throws(CLIError) {
        storeURL = try StoreOptions.storeURL(values)
        device = try values.enumeration(Self.device, DeviceProfile.self) ?? .linux
        passphraseFile = values.value(Self.passphraseFile)
        if passphraseFile == "" { throw .usage("'--passphrase-file' must not be empty") }
    }

    func run() async throws(CLIError) {
        let path = storeURL.path
        let source: StoreKeySource
        let keyLine: String
        if let passphraseFile {
            source = .passphrase(try Passphrase.read(file: passphraseFile, store: path))
            keyLine = "key:      passphrase"
        } else {
            let keyFile = SQLiteKeychainDatabase.defaultKeyFile(for: storeURL)
            source = .keyFile(keyFile)
            keyLine = "key file: \(keyFile.path)"
        }
        // The store holds keys and labels in the clear, and SQLite creates it (and later its -wal and -shm
        // files, which take its mode) with the process's umask: keep every file this process creates private.
        _ = umask(0o077)
        do throws(StoreError) {
            _ = try SQLiteKeychainDatabase.create(at: storeURL, key: source, device: device)
        } catch {
            throw ErrorMapping.store(error, store: path)
        }
        try Console.write("store:    \(path)\ndevice:   \(device.rawValue)\n\(keyLine)\n")
    }
}

import ApexKeychain
import ApexKeychainStore
import ApexMigration
import Foundation

/// `apex-keychain store set`: stores the value read from stdin under a key.
struct StoreSetCommand: RunnableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "set",
            abstract: "Store the value read from stdin under a key.",
            discussion: """
                The value is all of stdin, byte for byte: nothing is trimmed, so a trailing newline is part of \
                the value. Use printf '%s' rather than echo, which adds one:

                  printf '%s' "$TOKEN" | apex-keychain store set --store app.db api-token

                The value never comes from the command line, and is at most 16 MiB; an empty stdin is refused \
                unless --allow-empty. When stdin is a terminal, the value is asked for there, without echo: one \
                line, without its newline. Valid UTF-8 without U+0000 is stored as a string, anything else as \
                bytes. With --username the item holds credentials: the key is 'credentials' or \
                'credentials:<server>', stdin is the password and the username is the label.

                The item replaces any item under the key, with all its attributes. A protection the store's \
                device can't give is refused (exit 1), never weakened. The migration's own service \
                ('apex-keychain.migration') is written only with --force.
                """,
            arguments: [keyArgument],
            extraArgumentsHint: "the value is read from stdin, never from the command line",
            options: StoreOptions.definitions + [
                Self.accessible, Self.accessControl, Self.authValidity, Self.synchronizable, Self.label, Self.username,
                Self.keyStorage, Self.bytes, Self.allowEmpty, Self.force,
            ])
    }

    /// `--accessible <accessible>`.
    static let accessible = OptionDefinition.choice(
        "accessible", of: Accessible.self, help: "When the item can be read.",
        defaultValue: Keychain.defaultAccessible.rawValue)
    /// `--access-control <access-control>`.
    static let accessControl = OptionDefinition.choice(
        "access-control", of: AccessControl.self, help: "Who must be present to read the item.",
        defaultValue: AccessControl.none.rawValue)
    /// `--auth-validity <seconds>`.
    static let authValidity = OptionDefinition.option(
        "auth-validity", valueName: "seconds",
        help: "How long one successful prompt keeps the items of this service and access control open.",
        defaultValue: "0")
    /// `--synchronizable`.
    static let synchronizable = OptionDefinition.flag(
        "synchronizable", help: "Let the item sync through iCloud Keychain (iOS profiles).")
    /// `--label <label>`.
    static let label = OptionDefinition.option(
        "label", help: "The item's label. Labels are not secret: 'info' shows them.")
    /// `--username <username>`.
    static let username = OptionDefinition.option(
        "username",
        help: "Store credentials with this username; the key must be 'credentials' or 'credentials:<server>'.")
    /// `--key-storage <key-storage>`.
    static let keyStorage = OptionDefinition.choice(
        "key-storage", of: KeyStorage.self, help: "Android profiles: where the item's key lives.")
    /// `--bytes`.
    static let bytes = OptionDefinition.flag("bytes", help: "Store stdin as bytes even when it is valid UTF-8.")
    /// `--allow-empty`.
    static let allowEmpty = OptionDefinition.flag(
        "allow-empty", help: "Store an empty value (an empty stdin is refused without it).")
    /// `--force`.
    static let force = OptionDefinition.flag(
        "force", help: "Write into the migration's records (service 'apex-keychain.migration') anyway.")

    /// Which store, how to unlock it, which service.
    let store: StoreOptions
    /// The item's key.
    let key: String
    /// The protection asked for; nil fields take the keychain's defaults.
    let accessible: Accessible?
    let accessControl: AccessControl?
    let authValidity: Int?
    let synchronizable: Bool
    let keyStorage: KeyStorage?
    /// The item's label (not with `--username`).
    let label: String?
    /// Credentials: the username, with stdin as the password.
    let username: String?
    /// Whether to store stdin as bytes even when it is valid UTF-8.
    let forceBytes: Bool
    /// Whether an empty value may be stored.
    let allowEmpty: Bool
    /// Whether the migration's records may be written.
    let force: Bool

    init(_ values: ParsedValues) throws(CLIError) {
        store = try StoreOptions(values)
        key = try values.argument(keyArgument) ?? ""
        accessible = try values.enumeration(Self.accessible, Accessible.self)
        accessControl = try values.enumeration(Self.accessControl, AccessControl.self)
        authValidity = try values.integer(Self.authValidity)
        synchronizable = try values.flag(Self.synchronizable)
        label = try values.value(Self.label)
        username = try values.value(Self.username)
        keyStorage = try values.enumeration(Self.keyStorage, KeyStorage.self)
        forceBytes = try values.flag(Self.bytes)
        allowEmpty = try values.flag(Self.allowEmpty)
        force = try values.flag(Self.force)
        try ReservedService.check(store.service, force: force, .write)
        if username != nil {
            if CredentialsKey(key) == nil {
                throw .usage("'--username' stores credentials: the key must be 'credentials' or 'credentials:<server>'")
            }
            if label != nil { throw .usage("'--label' can't be used with '--username': the username is the label") }
            if forceBytes { throw .usage("'--bytes' can't be used with '--username': a password is a string") }
        }
    }

    func run() async throws(CLIError) {
        let opened = try store.open()
        try ReservedService.check(opened.keychain.service, force: force, .write)
        let profile = opened.database.deviceProfile
        if keyStorage != nil, profile != .android, profile != .android10 {
            throw .usage(
                "'--key-storage' applies to the Android device profiles; \(opened.path) models '\(profile.rawValue)'")
        }
        var value = try readValue(place: opened.place(opened.keychain.service, opened.keychain.accessGroup))
        defer { value.resetBytes(in: 0..<value.count) }
        let android = keyStorage.map { AndroidOptions(keyStorage: $0) }
        let options = SetOptions(
            accessible: accessible, accessControl: accessControl, authValidity: authValidity,
            synchronizable: synchronizable ? true : nil, android: android, label: label)
        let key = key
        if let username, let credentials = CredentialsKey(key) {
            guard let password = String(validating: value, as: UTF8.self) else {
                throw .usage("the password read from stdin is not valid UTF-8")
            }
            let credentialsOptions = CredentialsOptions(
                server: credentials.server, accessible: options.accessible, accessControl: options.accessControl,
                authValidity: options.authValidity, synchronizable: options.synchronizable, android: android)
            try await opened.perform { keychain throws(KeychainError) in
                try await keychain.setCredentials(
                    Credentials(username: username, password: password), credentialsOptions)
            }
        } else if !forceBytes, let string = String(validating: value, as: UTF8.self), !string.utf8.contains(0) {
            try await opened.perform { keychain throws(KeychainError) in
                try await keychain.setItem(key, string, options)
            }
        } else {
            let bytes = value
            try await opened.perform { keychain throws(KeychainError) in
                try await keychain.setBytes(key, bytes, options)
            }
        }
    }
}

extension StoreSetCommand {
    /// The value: all of stdin or, when stdin is a terminal, one line typed there without echo.
    /// - Throws: a usage error for an empty value without `--allow-empty`, or a value over its limit; 74 when
    ///   stdin can't be read.
    func readValue(place: String) throws(CLIError) -> Data {
        var value: Data
        var typed = false
        let what = username != nil ? "Password" : "Value"
        if TerminalInput.standardInputIsTerminal,
            let line = TerminalInput.readSecret(
                prompt: "\(what) for '\(DisplayText.escaped(key))' in \(DisplayText.escaped(place)): ",
                from: .standardInput)
        {
            value = line
            typed = true
            if value.count > TerminalInput.maximumLineLength {
                value.resetBytes(in: 0..<value.count)
                throw .usage(
                    "the value typed is longer than \(Console.byteCount(TerminalInput.maximumLineLength)); "
                        + "pipe it in instead; nothing was written")
            }
        } else {
            value = try Console.readStandardInput(limit: SQLiteKeychainDatabase.maximumValueSize)
        }
        if value.isEmpty, !allowEmpty {
            throw .usage(
                "the value \(typed ? "typed" : "read from stdin") is empty; nothing was written "
                    + "(pass --allow-empty to store an empty value)")
        }
        return value
    }
}

/// `apex-keychain store remove`: removes one item.
struct StoreRemoveCommand: RunnableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "remove",
            abstract: "Remove an item.",
            discussion: """
                Removes the item under the key; a missing item is not an error. Prints nothing. The migration's \
                own records (service 'apex-keychain.migration') are removed only with --force.
                """,
            arguments: [keyArgument],
            options: StoreOptions.definitions + [Self.force])
    }

    /// `--force`.
    static let force = OptionDefinition.flag(
        "force", help: "Remove one of the migration's records (service 'apex-keychain.migration') anyway.")

    /// Which store, how to unlock it, which service.
    let store: StoreOptions
    /// The item's key.
    let key: String
    /// Whether the migration's records may be removed.
    let force: Bool

    init(_ values: ParsedValues) throws(CLIError) {
        store = try StoreOptions(values)
        key = try values.argument(keyArgument) ?? ""
        force = try values.flag(Self.force)
        try ReservedService.check(store.service, force: force, .remove)
    }

    func run() async throws(CLIError) {
        let key = key
        let opened = try store.open()
        try ReservedService.check(opened.keychain.service, force: force, .remove)
        try await opened.perform { keychain throws(KeychainError) in try await keychain.removeItem(key) }
    }
}

/// `apex-keychain store clear`: removes every item of a service.
struct StoreClearCommand: RunnableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "clear",
            abstract: "Remove every item of a service.",
            discussion: """
                Removes every item of the service that this package wrote (never another library's), and prints \
                how many it removed. When stdin is a terminal, it first asks for confirmation; --yes skips the \
                question. Without a terminal it asks nothing and removes nothing: pass --yes, so that a script \
                says what it means (a service with no item needs no --yes). The migration's own records (service \
                'apex-keychain.migration') are cleared only with --force.
                """,
            options: StoreOptions.definitions + [Self.yes, Self.force])
    }

    /// `--yes`.
    static let yes = OptionDefinition.flag(
        "yes", help: "Remove without asking (needed when stdin is not a terminal, as in CI).")
    /// `--force`.
    static let force = OptionDefinition.flag(
        "force", help: "Also clear the migration's records (service 'apex-keychain.migration').")

    /// Which store, how to unlock it, which service.
    let store: StoreOptions
    /// Whether to remove without asking.
    let yes: Bool
    /// Whether the migration's records may be cleared.
    let force: Bool

    init(_ values: ParsedValues) throws(CLIError) {
        store = try StoreOptions(values)
        yes = try values.flag(Self.yes)
        force = try values.flag(Self.force)
        try ReservedService.check(store.service, force: force, .clear)
    }

    func run() async throws(CLIError) {
        let opened = try store.open()
        let service = opened.keychain.service
        // The service, and the access group when it is not the default: what the question and the result name.
        let place = DisplayText.escaped(opened.place(service, opened.keychain.accessGroup))
        try ReservedService.check(service, force: force, .clear)
        let count = try await opened.perform { keychain throws(KeychainError) in try await keychain.getAllKeys() }.count
        let items = Console.counted(count, "item")
        // A read-only store can't be cleared: the write below says so at once, without a question first.
        if count > 0, !yes, !opened.database.isReadOnly {
            let question = "Remove \(items) from \(place) of \(DisplayText.escaped(opened.path))? [y/N] "
            guard TerminalInput.standardInputIsTerminal,
                let answer = TerminalInput.readAnswer(prompt: question, from: .standardInput)
            else {
                throw .usage(
                    "\(opened.path): 'store clear' would remove \(items) from \(place), and there is no "
                        + "terminal to confirm it; pass --yes")
            }
            guard ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased()) else {
                throw CLIError(.failure, "\(opened.path): not confirmed; nothing was removed")
            }
        }
        try await opened.perform { keychain throws(KeychainError) in try await keychain.clear() }
        try Console.write("removed \(items) from \(place)\n")
    }
}

/// The migration's own service (``Migration/ledgerService``, its records): the store commands that write or remove
/// items refuse it without `--force`. An item written there from outside can stop every later migration of the
/// store, or mark an app's start-up migration complete before it ran; without its records, a later migration can't
/// tell the items it wrote from other items.
enum ReservedService {
    /// What a command does to the service's items.
    enum Change {
        case write, remove, clear
    }

    /// Refuses `service` (a usage error, 64) when it is the migration's, byte for byte, unless `force`.
    static func check(_ service: String?, force: Bool, _ change: Change) throws(CLIError) {
        guard let service, !force, Migration.isReservedService(service) else { return }
        let why =
            change == .write
            ? "an item written there can stop later migrations of the store or mark one complete that never ran; "
                + "pass --force to write it anyway"
            : "without them a later migration can't tell the items it wrote from other items; pass --force to "
                + (change == .remove ? "remove it anyway" : "clear it anyway")
        throw .usage("the service '\(DisplayText.escaped(service))' holds the migration's records: \(why)")
    }
}

/// A key that names credentials: `credentials` or `credentials:<server>` (with a non-empty server).
struct CredentialsKey: Sendable, Equatable {
    /// The server, or nil for plain `credentials`.
    var server: String?

    /// The credentials a key names, or nil when it names none.
    init?(_ key: String) {
        if key == "credentials" {
            server = nil
        } else if key.hasPrefix("credentials:"), key.count > "credentials:".count {
            server = String(key.dropFirst("credentials:".count))
        } else {
            return nil
        }
    }
}

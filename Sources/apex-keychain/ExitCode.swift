import ApexKeychain

/// The exit codes of `apex-keychain`: the table of `docs/CLI.md`, named after `sysexits.h`.
///
/// Scripts depend on these numbers; change them only with a CHANGELOG entry.
enum ExitCode: Int32, Sendable {
    /// Done.
    case success = 0
    /// The item is missing, or the keychain refused (a prompt failed, the device can't give the protection).
    case failure = 1
    /// A usage error: unknown command or flag, a missing or bad argument, `INVALID_ARGUMENT` from the core.
    case usage = 64
    /// The file is not a store, or a damaged or truncated one, or a store of a newer version.
    case dataError = 65
    /// The store or a named input file does not exist or can't be read.
    case noInput = 66
    /// The store can't be created.
    case cannotCreate = 73
    /// An I/O error while reading or writing the store.
    case ioError = 74
    /// Temporary: the store or item can't be used now (locked, no terminal to ask for the passphrase).
    case temporaryFailure = 75
    /// The key file or passphrase is refused.
    case permissionDenied = 77
}

/// A failure of one command: what to print on stderr, and the exit code.
///
/// Every message names what it concerns (usually the store path) and the cause, and never holds a value, a
/// password or a passphrase: messages are built from paths, keys, services, option names and the library's
/// own messages, which follow the same rule.
struct CLIError: Error, Sendable, Equatable {
    /// The exit code.
    var exitCode: ExitCode
    /// The message, printed as `apex-keychain: <message>`.
    var message: String
    /// The command whose help a usage error points to (`apex-keychain store set`); filled in by the dispatcher
    /// for usage errors that don't name one.
    var helpCommand: String?

    /// Creates an error.
    init(_ exitCode: ExitCode, _ message: String, helpCommand: String? = nil) {
        self.exitCode = exitCode
        self.message = message
        self.helpCommand = helpCommand
    }

    /// A usage error (exit 64), which also tells where to find the command's help.
    static func usage(_ message: String) -> CLIError { CLIError(.usage, message) }

    /// The text written to stderr: the message (its names from dumps and stores made safe to show, see
    /// ``DisplayText``), and for usage errors where to find help.
    var report: String {
        var text = "apex-keychain: \(DisplayText.escaped(message))\n"
        if exitCode == .usage, let helpCommand {
            text += "Run '\(helpCommand) --help' for usage.\n"
        }
        return text
    }
}

import ApexDumps
import ApexKeychain
import ApexKeychainStore
import Foundation
import Synchronization

/// `--backup-password-file` and `--app` of `inspect` and `migrate`: how an encrypted iPhone backup among the paths
/// is read. The password comes from the file, else from the terminal without echo; never from an argument.
struct BackupOptions {
    /// `--backup-password-file <backup-password-file>`.
    static let passwordFile = OptionDefinition.option(
        "backup-password-file",
        help:
            "A file holding the password of the encrypted iPhone backups among the paths, readable by its owner only "
            + "(at most 1 KiB; one trailing newline is not part of it). Without it, the password is asked on the "
            + "terminal.")
    /// `--app <bundle-id>`.
    static let app = OptionDefinition.option(
        "app", valueName: "bundle-id",
        help:
            "Keep only the items of this app's access groups (TEAMID.BUNDLE_ID) from an encrypted iPhone backup; "
            + "also the default of --bundle-id.")

    /// Where ``access(failure:)`` keeps why it could not get a password (the scan that asks is synchronous).
    final class PasswordFailure {
        var error: CLIError?
    }

    /// The longest password read from a file or the terminal.
    static let maximumLength = 1024

    /// The password file, if named.
    let passwordFile: String?
    /// The app whose items are kept, if named.
    let app: String?
    /// Whether progress lines are left out (`--quiet`).
    let quiet: Bool

    /// No file and no app: the password asked on the terminal (for a backup met without the options).
    init(quiet: Bool) {
        passwordFile = nil
        app = nil
        self.quiet = quiet
    }

    /// Reads the options.
    /// - Throws: a usage error for an empty path or bundle ID.
    init(_ values: ParsedValues, quiet: Bool) throws(CLIError) {
        passwordFile = try values.value(Self.passwordFile)
        app = try values.value(Self.app)
        self.quiet = quiet
        if passwordFile == "" { throw .usage("'--backup-password-file' must not be empty") }
        if app == "" { throw .usage("'--app' must not be empty") }
    }

    /// The reader's access to the backups: the password from the file or the terminal, and the progress of the
    /// key derivation on stderr. A failure to get the password is kept in `failure` (the reader's error can't
    /// carry the tool's exit code); the caller throws it instead of the reader's error.
    func access(failure: PasswordFailure) -> BackupAccess {
        let file = passwordFile
        let derivation = KeyDerivationLine(quiet: quiet)
        return BackupAccess(
            app: app,
            password: { folder throws(DumpError) -> [UInt8] in
                do throws(CLIError) {
                    return try Self.password(for: folder, file: file)
                } catch {
                    failure.error = error
                    throw DumpError(.unreadable, path: folder, error.message)
                }
            },
            progress: { folder, step in derivation.report(folder, step) })
    }

    /// The password of the backup in `folder`: the file's contents without one trailing newline, else what is
    /// typed on the terminal.
    /// - Throws: 66 when the file can't be read, 77 when others can access it or the password is empty, 64 when it
    ///   is too long, 75 when there is no file and no terminal.
    static func password(for folder: String, file: String?) throws(CLIError) -> [UInt8] {
        var bytes: Data
        if let file {
            do throws(CLIError) {
                bytes = try Console.readSecretFile(file, role: "backup password file", limit: maximumLength + 1)
            } catch {
                throw CLIError(error.exitCode, "\(folder): \(error.message)")
            }
            if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        } else {
            // Read straight into `bytes`, its only holder, so that the wipe below reaches the typed bytes.
            var typed = TerminalInput.readSecret(prompt: "Password of the iPhone backup \(folder): ")
            guard typed != nil else {
                throw CLIError(
                    .temporaryFailure,
                    "\(folder): an encrypted iPhone backup, and there is no terminal to ask for its password; "
                        + "pass --backup-password-file FILE")
            }
            bytes = typed.take()!
        }
        defer { bytes.resetBytes(in: 0..<bytes.count) }
        guard bytes.count <= maximumLength else {
            throw CLIError(.usage, "\(folder): the backup password is longer than \(Console.byteCount(maximumLength))")
        }
        guard !bytes.isEmpty else { throw CLIError(.permissionDenied, "\(folder): the backup password is empty") }
        return Array(bytes)
    }
}

/// The line on stderr while a backup's key is derived from its password, which takes seconds:
///
///     reading backup/: deriving its key from the password (10,000,000 rounds of PBKDF2-SHA256) … 2.2 s
///
/// On a terminal the elapsed time is redrawn each half second; elsewhere the line is written once the key is
/// derived. Nothing with `--quiet`.
final class KeyDerivationLine: Sendable {
    private let quiet: Bool
    private let terminal: Bool
    private let state = Mutex<(start: ContinuousClock.Instant, ticker: Task<Void, Never>?)?>(nil)

    init(quiet: Bool, terminal: Bool = isatty(STDERR_FILENO) == 1) {
        self.quiet = quiet
        self.terminal = terminal
    }

    /// Reports a step of the backup in `folder`.
    func report(_ folder: String, _ step: EncryptedBackup.Progress) {
        guard !quiet else { return }
        switch step {
        case .derivingKey(let rounds, let sha1Rounds):
            let head = Self.head(folder, rounds: rounds, sha1Rounds: sha1Rounds)
            let start = ContinuousClock.now
            let ticker: Task<Void, Never>? =
                terminal
                ? Task.detached {
                    while !Task.isCancelled {
                        Console.writeError("\r\(head) \(Self.seconds(since: start))\u{1B}[K")
                        try? await Task.sleep(for: .milliseconds(500))
                    }
                } : nil
            if !terminal { Console.writeError(head + "\n") }
            state.withLock { $0 = (start, ticker) }
        case .keyDerived:
            guard
                let (start, ticker) = state.withLock({ state in
                    defer { state = nil }
                    return state
                })
            else { return }
            ticker?.cancel()
            let done = "reading \(DisplayText.escaped(folder)): key derived in \(Self.seconds(since: start))"
            Console.writeError(terminal ? "\r\(done)\u{1B}[K\n" : done + "\n")
        }
    }

    /// `reading FOLDER: deriving its key from the password (N rounds of PBKDF2-SHA256) …`; without the counts
    /// when they are nil.
    static func head(_ folder: String, rounds: Int?, sha1Rounds: Int?) -> String {
        var text = "reading \(DisplayText.escaped(folder)): deriving its key from the password"
        if let rounds, let sha1Rounds {
            let counted =
                rounds > 0
                ? "\(grouped(rounds)) rounds of PBKDF2-SHA256" : "\(grouped(sha1Rounds)) rounds of PBKDF2-SHA1"
            text += " (\(counted))"
        }
        return text + " …"
    }

    /// `10,000,000`.
    static func grouped(_ number: Int) -> String {
        let digits = Array(String(number))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return out
    }

    private static func seconds(since start: ContinuousClock.Instant) -> String {
        let elapsed = (ContinuousClock.now - start).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        return String(format: "%.1f s", seconds)
    }
}

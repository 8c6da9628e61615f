/// Runs the tool: finds the command the arguments name, shows help or the version, or parses and runs it.
///
/// Subcommand words come first (`store set`); the options and arguments of the command they reach follow.
/// `-h` / `--help` anywhere (before `--`) shows the help of that command, among the subcommand words too
/// (`--help migrate` is `migrate --help`). `help [COMMAND...]` is `COMMAND... --help`, and `version` is
/// `--version`.
enum CommandLineTool {
    /// The command word that prints the version, as `--version` does (root command only).
    static let versionWord = "version"

    /// Runs the tool with `arguments` (without the program name) and returns the exit code.
    static func main(_ arguments: [String]) async -> ExitCode {
        var path: [any ParsableCommand.Type] = [RootCommand.self]
        var remaining = arguments[...]
        var helpAsked = false
        switch remaining.first {
        case "help":
            remaining = remaining.dropFirst()
            helpAsked = true
        case versionWord:
            remaining = ["--version"] + remaining.dropFirst()
        default:
            break
        }
        while let word = remaining.first {
            if word == "-h" || word == "--help" {
                helpAsked = true
            } else if let subcommand = path[path.count - 1].configuration.subcommands.first(where: {
                $0.configuration.name == word
            }) {
                path.append(subcommand)
            } else {
                break
            }
            remaining = remaining.dropFirst()
        }
        // First, so that nothing after it (a `--`) hides it.
        if helpAsked { remaining = ["--help"] + remaining }
        let commandName = path.map { $0.configuration.name }.joined(separator: " ")
        do throws(CLIError) {
            try await dispatch(path, remaining)
            return .success
        } catch {
            var error = error
            if error.helpCommand == nil { error.helpCommand = commandName }
            Console.writeError(error.report)
            return error.exitCode
        }
    }

    /// Shows help or the version, or runs the command at the end of `path`.
    private static func dispatch(
        _ path: [any ParsableCommand.Type], _ arguments: ArraySlice<String>
    ) async throws(CLIError) {
        let command = path[path.count - 1]
        let configuration = command.configuration
        let groupWithoutArguments = arguments.isEmpty && !(command is any RunnableCommand.Type)
        if groupWithoutArguments || CommandLineParser.asksForHelp(arguments) {
            try Console.write(HelpFormatter.help(for: path))
            return
        }
        if let version = configuration.version, arguments.first == "--version" {
            guard arguments.count == 1 else { throw .usage("'--version' takes no other arguments") }
            try Console.write("\(configuration.name) \(version)\n")
            return
        }
        guard let runnable = command as? any RunnableCommand.Type else {
            let known = configuration.commandWords
            let names = known.joined(separator: ", ")
            guard let word = arguments.first else {
                throw .usage("missing subcommand; expected one of: \(names)")
            }
            if word.hasPrefix("-") {
                throw .usage("unknown option '\(word.prefix { $0 != "=" })'")
            }
            // The word is repeated only when it is a near miss of a command: any other word may be a secret typed
            // in the wrong place, and a usage error never repeats one.
            guard let near = Suggestion.closest(to: word, among: known) else {
                throw .usage("unknown command; expected one of: \(names)")
            }
            throw .usage("unknown command '\(word)'; did you mean '\(near)'? (commands: \(names))")
        }
        let values = try CommandLineParser.parse(arguments, for: configuration)
        try await runnable.init(values).run()
    }
}

extension CommandConfiguration {
    /// The words that may follow the command: its subcommands' names, and `version` for the root command.
    var commandWords: [String] {
        subcommands.map { $0.configuration.name } + (version != nil ? [CommandLineTool.versionWord] : [])
    }
}

/// `apex-keychain`: the root command. Its subcommands are the tool's command groups.
struct RootCommand: ParsableCommand {
    /// The tool's version, printed by `--version`.
    static let version = "0.1.0"

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "apex-keychain",
            abstract: "Keep secrets in an encrypted store that models a device's keychain.",
            discussion: """
                Values enter only through stdin, never through the command line, and 'store get' is the only \
                command that prints one, to stdout. Results go to stdout; errors go to stderr as \
                'apex-keychain: <message>'.

                Exit codes: 0 done; 1 no such item, or the keychain refused, or some items were not migrated; \
                64 usage error; 65 not a store, or a damaged or newer one, or a malformed dump; 66 the store or \
                an input file does not exist or can't be read; 73 the store or the report can't be created; 74 I/O \
                error; 75 temporary failure (locked, no terminal), try again; 77 the key file or passphrase is \
                refused.
                """,
            version: version,
            subcommands: [InspectCommand.self, MigrateCommand.self, StoreCommand.self])
    }
}

/// `apex-keychain store`: the commands on one store file.
struct StoreCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "store",
            abstract: "Create a keychain store, and read and write its items.",
            discussion: """
                A store is one encrypted SQLite file that models the keychain of a device profile. It is \
                unlocked by a key file beside it (STORE.key, mode 0600), or by a passphrase that is also the \
                device's passcode.
                """,
            subcommands: [
                StoreInitCommand.self, StoreListCommand.self, StoreGetCommand.self, StoreSetCommand.self,
                StoreInfoCommand.self, StoreRemoveCommand.self, StoreClearCommand.self,
            ])
    }
}

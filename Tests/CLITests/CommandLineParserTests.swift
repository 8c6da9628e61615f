import Foundation
import Testing

@testable import apex_keychain

/// The command-line parser, in process: the conventions it keeps, and that a command asks only for the options
/// and arguments it defines.
@Suite("command-line parser")
struct CommandLineParserTests {
    static let store = OptionDefinition.option("store", help: "The store file.", isRequired: true)
    static let otherStore = OptionDefinition.option("store", help: "Another command's store, optional.")
    static let format = OptionDefinition.option("format", help: "Format.", allowedValues: ["text", "json"])
    static let label = OptionDefinition.option("label", help: "A label.", defaultValue: "none")
    static let map = OptionDefinition.option("map", help: "A=B.", isRepeatable: true)
    static let quiet = OptionDefinition.flag("quiet", short: "q", help: "Quiet.")
    static let key = ArgumentDefinition(name: "key", help: "The key.")
    static let paths = ArgumentDefinition(name: "path", help: "Paths.", isOptional: true, isRepeating: true)

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "probe", abstract: "A command for the tests.", arguments: [key, paths],
            options: [store, format, label, map, quiet])
    }

    /// Parses `arguments` for the test command.
    static func parse(_ arguments: [String]) throws(CLIError) -> ParsedValues {
        try CommandLineParser.parse(arguments[...], for: configuration)
    }

    /// The message of the usage error `arguments` give, or nil when they parse.
    static func usageError(_ arguments: [String]) -> String? {
        do throws(CLIError) {
            _ = try parse(arguments)
            return nil
        } catch {
            #expect(error.exitCode == .usage, "\(arguments): \(error.message)")
            return error.message
        }
    }

    @Test("--name value, --name=value, short flags, defaults, repeatable options and repeating arguments")
    func forms() throws {
        let values = try Self.parse([
            "--store", "a.db", "-q", "--format=json", "k", "--map", "a=b", "--map=c=d", "one", "two",
        ])
        #expect(try values.value(Self.store) == "a.db")
        #expect(try values.value(Self.format) == "json")
        #expect(try values.value(Self.label) == "none")
        #expect(try values.flag(Self.quiet))
        #expect(try values.values(Self.map) == ["a=b", "c=d"])
        #expect(try values.argument(Self.key) == "k")
        #expect(try values.values(Self.paths) == ["one", "two"])
    }

    @Test("'--' ends the options, so a key may start with '-'; '-' alone is an argument")
    func endOfOptions() throws {
        let values = try Self.parse(["--store", "a.db", "--", "--not-an-option", "-"])
        #expect(try values.argument(Self.key) == "--not-an-option")
        #expect(try values.values(Self.paths) == ["-"])
        #expect(try !values.flag(Self.quiet))
        let stdin = try Self.parse(["--store", "-", "k"])
        #expect(try stdin.value(Self.store) == "-")
    }

    @Test("usage errors name the option, and never repeat a value or a positional argument")
    func usageErrors() {
        #expect(Self.usageError(["k"]) == "missing required option '--store <store>'")
        #expect(Self.usageError(["--store", "a.db"]) == "missing expected argument '<key>'")
        #expect(Self.usageError(["--store"]) == "missing value for '--store <store>'")
        #expect(
            Self.usageError(["--store", "a", "--store", "b", "k"])
                == "'--store' was given more than once; it takes one value")
        #expect(Self.usageError(["--quiet=yes", "--store", "a", "k"]) == "option '--quiet' takes no value")
        #expect(
            Self.usageError(["--store", "a", "--format", "xml", "k"])
                == "invalid value 'xml' for '--format <format>'; expected one of: text, json")
        #expect(Self.usageError(["--stor=s3cret", "k"]) == "unknown option '--stor'; did you mean '--store'?")
        #expect(Self.usageError(["--zzzzzz=s3cret", "k"]) == "unknown option '--zzzzzz'")
        #expect(Self.usageError(["-x", "--store", "a", "k"]) == "unknown option '-x'")
        #expect(Self.usageError(["-qq", "--store", "a", "k"]) == "unknown option '-q'")
    }

    @Test("a repeated flag is accepted")
    func repeatedFlag() throws {
        #expect(try Self.parse(["-q", "--quiet", "--store", "a", "k"]).flag(Self.quiet))
    }

    @Test("too many arguments are refused without being repeated")
    func tooManyArguments() {
        let single = CommandConfiguration(name: "one", abstract: "One argument.", arguments: [Self.key])
        do throws(CLIError) {
            _ = try CommandLineParser.parse(["a", "s3cret"], for: single)
            Issue.record("two arguments parsed for a command that takes one")
        } catch {
            #expect(error.message == "too many arguments: 'one' takes only <key>")
        }
    }

    @Test("asking for an option or argument the command doesn't define is an error, even one of the same name")
    func undefinedLookups() throws {
        let values = try Self.parse(["--store", "a.db", "k"])
        #expect(Self.otherStore.name == Self.store.name)
        #expect(throws: CLIError(.failure, "internal error: 'probe' asks for '--store', which it does not define")) {
            _ = try values.value(Self.otherStore)
        }
        #expect(throws: CLIError.self) { _ = try values.flag(.flag("verbose", help: "Not defined.")) }
        #expect(throws: CLIError.self) { _ = try values.values(.option("map", help: "Another map.")) }
        #expect(throws: CLIError.self) { _ = try values.argument(ArgumentDefinition(name: "key", help: "Another.")) }
    }

    /// Every command that runs, found by walking the tool's command tree, with its words (`store set`).
    static func runnableCommands() -> [(words: String, type: any RunnableCommand.Type)] {
        var found: [(String, any RunnableCommand.Type)] = []
        func walk(_ command: any ParsableCommand.Type, _ words: [String]) {
            let here = words + [command.configuration.name]
            if let runnable = command as? any RunnableCommand.Type {
                found.append((here.dropFirst().joined(separator: " "), runnable))
            }
            for sub in command.configuration.subcommands { walk(sub, here) }
        }
        walk(RootCommand.self, [])
        return found
    }

    @Test("every command asks only for the options and arguments it defines")
    func commandsAskForTheirOwn() throws {
        let commands = Self.runnableCommands()
        #expect(commands.count >= 9, "the walk found \(commands.map(\.words))")
        for (words, command) in commands {
            let configuration = command.configuration
            // The required options and arguments, with values the parser accepts; then the same with each other
            // option given too, so that every branch that reads a value runs. A usage error of a value the command
            // judges is fine; asking for another command's definition is not.
            var required: [String] = []
            for option in configuration.options where option.isRequired {
                required += ["--\(option.name)", option.allowedValues?.first ?? "x.db"]
            }
            var tries = [required]
            for option in configuration.options where !option.isRequired {
                switch option.kind {
                case .flag: tries.append(required + ["--\(option.name)"])
                case .value: tries.append(required + ["--\(option.name)=\(option.allowedValues?.last ?? "x.db")"])
                }
            }
            let positionals = ["--"] + configuration.arguments.filter { !$0.isOptional }.map { _ in "k" }
            for options in tries {
                let values = try CommandLineParser.parse((options + positionals)[...], for: configuration)
                do throws(CLIError) {
                    _ = try command.init(values)
                } catch {
                    #expect(!error.message.hasPrefix("internal error"), "\(words) \(options): \(error.message)")
                }
            }
        }
    }
}

/// A named option of a command: a flag (`--synchronizable`) or an option that takes a value
/// (`--store <store>`).
struct OptionDefinition: Sendable, Equatable {
    /// Whether the option takes a value.
    enum Kind: Sendable, Equatable {
        /// A flag: present or not.
        case flag
        /// An option with a value, shown in help as `<valueName>`.
        case value(valueName: String)
    }

    /// The long name, without the dashes.
    var name: String
    /// Flag or option with a value.
    var kind: Kind
    /// One line (or a few sentences) for the help.
    var help: String
    /// The only values accepted, checked while parsing; nil accepts any value.
    var allowedValues: [String]?
    /// The value used when the option is absent, shown in the help.
    var defaultValue: String?
    /// Whether the command can't run without it.
    var isRequired: Bool
    /// Whether every value given is kept (`--service-map A=B --service-map C=D`), not only the last.
    var isRepeatable: Bool = false
    /// A one-letter form of a flag (`-q`), if it has one.
    var shortName: Character? = nil

    /// An option that takes a value.
    static func option(
        _ name: String, valueName: String? = nil, help: String, allowedValues: [String]? = nil,
        defaultValue: String? = nil, isRequired: Bool = false, isRepeatable: Bool = false
    ) -> OptionDefinition {
        OptionDefinition(
            name: name, kind: .value(valueName: valueName ?? name), help: help, allowedValues: allowedValues,
            defaultValue: defaultValue, isRequired: isRequired, isRepeatable: isRepeatable)
    }

    /// An option whose values are the raw values of `T` (and `extra` ones, such as `auto`): the accepted values
    /// come from the enum, so a new case is accepted and shown in the help without another edit.
    static func choice<T: RawRepresentable & CaseIterable>(
        _ name: String, of _: T.Type, valueName: String? = nil, help: String, extra: [String] = [],
        defaultValue: String? = nil
    ) -> OptionDefinition where T.RawValue == String {
        option(
            name, valueName: valueName, help: help, allowedValues: extra + T.allCases.map(\.rawValue),
            defaultValue: defaultValue)
    }

    /// A flag, with its one-letter form if it has one.
    static func flag(_ name: String, short: Character? = nil, help: String) -> OptionDefinition {
        OptionDefinition(
            name: name, kind: .flag, help: help, allowedValues: nil, defaultValue: nil, isRequired: false,
            shortName: short)
    }

    /// `-q, --quiet` in the help's list of options; else as ``synopsis``.
    var listedSynopsis: String { shortName.map { "-\($0), \(synopsis)" } ?? synopsis }

    /// `--name <value>` or `--name`: how help and error messages show the option.
    var synopsis: String {
        switch kind {
        case .flag: "--\(name)"
        case .value(let valueName): "--\(name) <\(valueName)>"
        }
    }
}

/// A positional argument of a command (`<key>`).
struct ArgumentDefinition: Sendable, Equatable {
    /// The name shown as `<name>`.
    var name: String
    /// One line (or a few sentences) for the help.
    var help: String
    /// Whether the command can run without it.
    var isOptional: Bool = false
    /// Whether it takes every remaining positional argument (one or more; the last argument only).
    var isRepeating: Bool = false

    /// `<name>`, or `<name> ...` for a repeating argument.
    var synopsis: String { isRepeating ? "<\(name)> ..." : "<\(name)>" }
}

/// What a command is called, what it says about itself, and what it accepts: the source of both the parser
/// and the help text, so that the two can't disagree.
struct CommandConfiguration {
    /// The word that selects the command (`set`).
    var name: String
    /// One sentence for `OVERVIEW:` and the parent's `SUBCOMMANDS:` list.
    var abstract: String
    /// Paragraphs shown after the overview; a line that starts with two spaces is kept as it is (examples).
    var discussion: String? = nil
    /// The tool's version, shown by `--version` (root command only).
    var version: String? = nil
    /// Positional arguments, in order.
    var arguments: [ArgumentDefinition] = []
    /// Added to the error for extra positional arguments (which are never repeated back: they may be secrets).
    var extraArgumentsHint: String? = nil
    /// Options, in the order the help shows them.
    var options: [OptionDefinition] = []
    /// Nested commands; a command with subcommands only dispatches.
    var subcommands: [any ParsableCommand.Type] = []
}

/// A command of the tool: its configuration. Commands that only group others stop here.
protocol ParsableCommand {
    /// The command's name, help and accepted arguments.
    static var configuration: CommandConfiguration { get }
}

/// A command that does something: it is built from the parsed arguments, then run.
protocol RunnableCommand: ParsableCommand, Sendable {
    /// Builds the command from what the parser accepted.
    /// - Throws: a usage error for values the parser can't judge (a number, flags that exclude each other).
    init(_ values: ParsedValues) throws(CLIError)

    /// Runs the command, writing results to stdout.
    /// - Throws: the failure to report on stderr, with its exit code.
    func run() async throws(CLIError)
}

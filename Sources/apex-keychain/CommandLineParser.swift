/// The arguments a command was given, checked against its ``CommandConfiguration``.
///
/// A command asks for its values by their definitions, and only by its own: asking for an option or argument the
/// command doesn't define is an error, even when another definition has the same name (the store commands'
/// required `--store` and `migrate`'s optional one are two definitions of one name).
struct ParsedValues: Sendable {
    /// The command the values were parsed for (`store set`), for the error of a lookup it doesn't define.
    let command: String
    /// The options the command defines.
    let definedOptions: [OptionDefinition]
    /// The positional arguments the command defines.
    let definedArguments: [ArgumentDefinition]
    /// The value of each option, by long name (the last one of a repeatable option).
    private(set) var options: [String: String] = [:]
    /// The flags present, by long name.
    private(set) var flags: Set<String> = []
    /// The positional arguments, by name.
    private(set) var arguments: [String: String] = [:]
    /// Every value of a repeatable option, and the values of a repeating argument, by name, in order.
    private(set) var lists: [String: [String]] = [:]

    /// No values yet, for `configuration`.
    init(for configuration: CommandConfiguration) {
        command = configuration.name
        definedOptions = configuration.options
        definedArguments = configuration.arguments
    }

    /// Records an option's value (the parser's).
    fileprivate mutating func set(_ option: OptionDefinition, to value: String) {
        options[option.name] = value
    }

    /// Records a flag (the parser's).
    fileprivate mutating func insert(flag option: OptionDefinition) { flags.insert(option.name) }

    /// Records a positional argument (the parser's).
    fileprivate mutating func set(_ argument: ArgumentDefinition, to value: String) {
        arguments[argument.name] = value
    }

    /// Records every value of a repeatable option or a repeating argument (the parser's).
    fileprivate mutating func append(_ value: String, to name: String) { lists[name, default: []].append(value) }

    /// Fails unless the command defines `option`.
    private func check(_ option: OptionDefinition) throws(CLIError) {
        guard definedOptions.contains(option) else {
            throw CLIError(
                .failure, "internal error: '\(command)' asks for '--\(option.name)', which it does not define")
        }
    }

    /// Fails unless the command defines `argument`.
    private func check(_ argument: ArgumentDefinition) throws(CLIError) {
        guard definedArguments.contains(argument) else {
            throw CLIError(
                .failure, "internal error: '\(command)' asks for '<\(argument.name)>', which it does not define")
        }
    }

    /// The value of an option, or its default, or nil.
    func value(_ option: OptionDefinition) throws(CLIError) -> String? {
        try check(option)
        return options[option.name]
    }

    /// Whether a flag was given.
    func flag(_ option: OptionDefinition) throws(CLIError) -> Bool {
        try check(option)
        return flags.contains(option.name)
    }

    /// A positional argument, or nil when an optional one was left out.
    func argument(_ argument: ArgumentDefinition) throws(CLIError) -> String? {
        try check(argument)
        return arguments[argument.name]
    }

    /// Every value of a repeatable option, in the order given.
    func values(_ option: OptionDefinition) throws(CLIError) -> [String] {
        try check(option)
        return lists[option.name] ?? []
    }

    /// Every value of a repeating argument, in the order given.
    func values(_ argument: ArgumentDefinition) throws(CLIError) -> [String] {
        try check(argument)
        return lists[argument.name] ?? []
    }

    /// The value of an option whose accepted values are the raw values of `T`; nil when absent.
    ///
    /// The parser has already refused other values; this only converts.
    func enumeration<T: RawRepresentable>(_ option: OptionDefinition, _ type: T.Type) throws(CLIError) -> T?
    where T.RawValue == String {
        guard let raw = try value(option) else { return nil }
        guard let value = T(rawValue: raw) else {
            throw .usage("invalid value '\(raw)' for '--\(option.name)'")
        }
        return value
    }

    /// The value of an option that must be a whole number; nil when absent.
    func integer(_ option: OptionDefinition) throws(CLIError) -> Int? {
        guard let raw = try value(option) else { return nil }
        guard let value = Int(raw) else {
            throw .usage("invalid value '\(raw)' for '\(option.synopsis)'; expected a whole number")
        }
        return value
    }
}

/// Splits a command's arguments into options, flags and positional arguments.
///
/// The conventions of swift-argument-parser: `--name value` or `--name=value`; `--` ends the options (so a key
/// may start with `-`). An option that takes one value, given twice, is a usage error rather than last-wins
/// (`--store a --store b` must not pick one silently); a repeated flag is harmless and accepted. A value can't start with `-` unless it is given
/// as `--name=value`. Messages never repeat a positional argument or the text after `=` of an unknown option:
/// a secret typed on the command line by mistake must not reach stderr.
enum CommandLineParser {
    /// Parses `arguments` for a command.
    /// - Throws: a usage error naming the option or argument at fault.
    static func parse(
        _ arguments: ArraySlice<String>, for configuration: CommandConfiguration
    ) throws(CLIError) -> ParsedValues {
        var values = ParsedValues(for: configuration)
        var positionals: [String] = []
        var remaining = arguments[...]
        var optionsEnded = false
        while let argument = remaining.popFirst() {
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            guard argument.hasPrefix("--") else {
                // A short flag (`-q`), alone.
                let letter = argument.dropFirst()
                guard letter.count == 1, let flag = configuration.options.first(where: { $0.shortName == letter.first })
                else {
                    throw .usage("unknown option '\(argument.prefix(2))'")
                }
                values.insert(flag: flag)
                continue
            }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let inline = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
            guard let option = configuration.options.first(where: { $0.name == name }) else {
                let hint = Suggestion.closest(to: name, among: configuration.options.map(\.name)).map {
                    "; did you mean '--\($0)'?"
                }
                throw .usage("unknown option '--\(name)'\(hint ?? "")")
            }
            switch option.kind {
            case .flag:
                if inline != nil { throw .usage("option '--\(name)' takes no value") }
                values.insert(flag: option)
            case .value:
                let value: String
                if let inline {
                    value = inline
                } else if let next = remaining.first, next == "-" || !next.hasPrefix("-") {
                    value = next
                    remaining = remaining.dropFirst()
                } else {
                    throw .usage("missing value for '\(option.synopsis)'")
                }
                if let allowed = option.allowedValues, !allowed.contains(value) {
                    throw invalidValue(value, for: option, allowed: allowed)
                }
                if !option.isRepeatable, values.options[name] != nil {
                    throw .usage("'--\(name)' was given more than once; it takes one value")
                }
                values.set(option, to: value)
                if option.isRepeatable { values.append(value, to: name) }
            }
        }
        for option in configuration.options where option.isRequired && values.options[option.name] == nil {
            throw .usage("missing required option '\(option.synopsis)'")
        }
        for option in configuration.options where values.options[option.name] == nil {
            if let defaultValue = option.defaultValue { values.set(option, to: defaultValue) }
        }
        for (index, definition) in configuration.arguments.enumerated() {
            if index < positionals.count {
                values.set(definition, to: positionals[index])
                if definition.isRepeating {
                    for value in positionals[index...] { values.append(value, to: definition.name) }
                }
            } else if !definition.isOptional {
                throw .usage("missing expected argument '\(definition.synopsis)'")
            }
        }
        if positionals.count > configuration.arguments.count, configuration.arguments.last?.isRepeating != true {
            let expected = configuration.arguments.map(\.synopsis).joined(separator: " ")
            let what = expected.isEmpty ? "no arguments" : "only \(expected)"
            let hint = configuration.extraArgumentsHint.map { " (\($0))" } ?? ""
            throw .usage("too many arguments: '\(configuration.name)' takes \(what)\(hint)")
        }
        return values
    }

    /// The error of a value that is not one of an option's `allowed` values, with a "did you mean" when one of
    /// them is close (``Suggestion/value(for:among:)``), as for an unknown command.
    private static func invalidValue(_ value: String, for option: OptionDefinition, allowed: [String]) -> CLIError {
        let list = allowed.joined(separator: ", ")
        guard let near = Suggestion.value(for: value, among: allowed) else {
            return .usage("invalid value '\(value)' for '\(option.synopsis)'; expected one of: \(list)")
        }
        return .usage("invalid value '\(value)' for '\(option.synopsis)'; did you mean '\(near)'? (values: \(list))")
    }

    /// Whether the arguments ask for help (`-h` or `--help` before any `--`).
    static func asksForHelp(_ arguments: ArraySlice<String>) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "-h" || argument == "--help" { return true }
        }
        return false
    }
}

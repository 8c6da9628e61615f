/// The arguments a command was given, checked against its ``CommandConfiguration``.
struct ParsedValues: Sendable {
    /// The value of each option, by long name (the last one of a repeatable option).
    var options: [String: String] = [:]
    /// The flags present, by long name.
    var flags: Set<String> = []
    /// The positional arguments, by name.
    var arguments: [String: String] = [:]
    /// Every value of a repeatable option, and the values of a repeating argument, by name, in order.
    var lists: [String: [String]] = [:]

    /// The value of an option, or its default, or nil.
    func value(_ option: OptionDefinition) -> String? { options[option.name] }

    /// Whether a flag was given.
    func flag(_ option: OptionDefinition) -> Bool { flags.contains(option.name) }

    /// A positional argument, or nil when an optional one was left out.
    func argument(_ argument: ArgumentDefinition) -> String? { arguments[argument.name] }

    /// Every value of a repeatable option, in the order given.
    func values(_ option: OptionDefinition) -> [String] { lists[option.name] ?? [] }

    /// Every value of a repeating argument, in the order given.
    func values(_ argument: ArgumentDefinition) -> [String] { lists[argument.name] ?? [] }

    /// The value of an option whose accepted values are the raw values of `T`; nil when absent.
    ///
    /// The parser has already refused other values; this only converts.
    func enumeration<T: RawRepresentable>(_ option: OptionDefinition, _ type: T.Type) throws(CLIError) -> T?
    where T.RawValue == String {
        guard let raw = options[option.name] else { return nil }
        guard let value = T(rawValue: raw) else {
            throw .usage("invalid value '\(raw)' for '--\(option.name)'")
        }
        return value
    }

    /// The value of an option that must be a whole number; nil when absent.
    func integer(_ option: OptionDefinition) throws(CLIError) -> Int? {
        guard let raw = options[option.name] else { return nil }
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
        var values = ParsedValues()
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
                values.flags.insert(flag.name)
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
                values.flags.insert(name)
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
                    throw .usage(
                        "invalid value '\(value)' for '\(option.synopsis)'; expected one of: \(allowed.joined(separator: ", "))"
                    )
                }
                if !option.isRepeatable, values.options[name] != nil {
                    throw .usage("'--\(name)' was given more than once; it takes one value")
                }
                values.options[name] = value
                if option.isRepeatable { values.lists[name, default: []].append(value) }
            }
        }
        for option in configuration.options where option.isRequired && values.options[option.name] == nil {
            throw .usage("missing required option '\(option.synopsis)'")
        }
        for option in configuration.options where values.options[option.name] == nil {
            if let defaultValue = option.defaultValue { values.options[option.name] = defaultValue }
        }
        for (index, definition) in configuration.arguments.enumerated() {
            if index < positionals.count {
                values.arguments[definition.name] = positionals[index]
                if definition.isRepeating { values.lists[definition.name] = Array(positionals[index...]) }
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

    /// Whether the arguments ask for help (`-h` or `--help` before any `--`).
    static func asksForHelp(_ arguments: ArraySlice<String>) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "-h" || argument == "--help" { return true }
        }
        return false
    }
}

/// Writes the help of a command from its ``CommandConfiguration``, in the layout of swift-argument-parser:
/// `OVERVIEW`, the discussion, `USAGE`, `ARGUMENTS`, `OPTIONS`, `SUBCOMMANDS`.
///
/// Lines are wrapped at 80 columns; labels take the first 26, and a label too long for them puts its help on
/// the next line.
enum HelpFormatter {
    /// The widest line.
    static let width = 80
    /// Where the help of an option, argument or subcommand starts.
    static let labelColumn = 26

    /// The help of the command reached by `path` (the root first).
    static func help(for path: [any ParsableCommand.Type]) -> String {
        let configuration = path[path.count - 1].configuration
        let commandName = path.map { $0.configuration.name }.joined(separator: " ")
        var sections: [String] = [wrap(["OVERVIEW:"] + words(configuration.abstract), indent: 0, firstIndent: 0)]
        if let discussion = configuration.discussion {
            sections.append(wrapParagraphs(discussion))
        }
        sections.append(usage(commandName, configuration))
        if !configuration.arguments.isEmpty {
            sections.append(
                "ARGUMENTS:\n" + configuration.arguments.map { entry($0.synopsis, $0.help) }.joined())
        }
        var options = configuration.options.map { entry($0.listedSynopsis, optionHelp($0)) }
        if configuration.version != nil { options.append(entry("--version", "Show the version.")) }
        options.append(entry("-h, --help", "Show help information."))
        sections.append("OPTIONS:\n" + options.joined())
        if !configuration.subcommands.isEmpty {
            var list = configuration.subcommands.map { entry($0.configuration.name, $0.configuration.abstract) }
            if configuration.version != nil { list.append(entry(CommandLineTool.versionWord, "Show the version.")) }
            sections.append(
                "SUBCOMMANDS:\n" + list.joined() + "\n  See '\(commandName) <subcommand> --help' for detailed help.\n")
        }
        return sections.map { $0.hasSuffix("\n") ? $0 : $0 + "\n" }.joined(separator: "\n")
    }

    /// `USAGE: apex-keychain store set --store <store> [--service <service>] … <key>`, wrapped.
    static func usage(_ commandName: String, _ configuration: CommandConfiguration) -> String {
        var usageWords: [String] = []
        if !configuration.subcommands.isEmpty {
            usageWords.append("<subcommand>")
        }
        for option in configuration.options {
            let synopsis = option.isRepeatable ? option.synopsis + " ..." : option.synopsis
            usageWords.append(option.isRequired ? synopsis : "[\(synopsis)]")
        }
        for argument in configuration.arguments {
            usageWords.append(argument.isOptional ? "[\(argument.synopsis)]" : argument.synopsis)
        }
        return wrap(["USAGE:", commandName] + usageWords, indent: 9, firstIndent: 0) + "\n"
    }

    /// An option's help with its accepted values and default, as swift-argument-parser shows them.
    static func optionHelp(_ option: OptionDefinition) -> String {
        var notes: [String] = []
        if let allowed = option.allowedValues { notes.append("values: " + allowed.joined(separator: ", ")) }
        if let defaultValue = option.defaultValue { notes.append("default: " + defaultValue) }
        return notes.isEmpty ? option.help : "\(option.help) (\(notes.joined(separator: "; ")))"
    }

    /// One label and its help, aligned at ``labelColumn``.
    static func entry(_ label: String, _ help: String) -> String {
        let helpWords = words(help)
        let labelled = "  " + label
        if labelled.count + 2 <= labelColumn {
            let padded = labelled + String(repeating: " ", count: labelColumn - labelled.count)
            let body = wrap(helpWords, indent: labelColumn, firstIndent: labelColumn)
            return padded + body + "\n"
        }
        let body = wrap(helpWords, indent: labelColumn, firstIndent: labelColumn)
        return labelled + "\n" + String(repeating: " ", count: labelColumn) + body + "\n"
    }

    /// Word-wraps paragraphs (separated by blank lines) at ``width``; lines starting with two spaces are kept.
    static func wrapParagraphs(_ text: String) -> String {
        text.components(separatedBy: "\n\n").map { paragraph in
            paragraph.split(separator: "\n", omittingEmptySubsequences: false).contains { $0.hasPrefix("  ") }
                ? paragraph
                : wrap(words(paragraph), indent: 0, firstIndent: 0)
        }.joined(separator: "\n\n") + "\n"
    }

    /// The words of a text, split at white space.
    static func words(_ text: String) -> [String] {
        text.split(whereSeparator: \.isWhitespace).map(String.init)
    }

    /// Joins words into lines no wider than ``width``; continuation lines start with `indent` spaces. The first
    /// line is assumed to start at column `firstIndent` (its indent is the caller's).
    static func wrap(_ words: [String], indent: Int, firstIndent: Int) -> String {
        var lines: [String] = []
        var line = ""
        var column = firstIndent
        for word in words {
            if line.isEmpty {
                line = word
                column += word.count
            } else if column + 1 + word.count <= width {
                line += " " + word
                column += 1 + word.count
            } else {
                lines.append(line)
                line = String(repeating: " ", count: indent) + word
                column = indent + word.count
            }
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}

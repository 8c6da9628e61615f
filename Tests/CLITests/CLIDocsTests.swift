import Foundation
import Testing

@testable import apex_keychain

/// `docs/CLI.md` against the commands as the binary defines them: every command, its options (names, values,
/// allowed values, defaults) and arguments, both ways. The definitions come from the commands' own
/// ``CommandConfiguration``s (the source of the parser and of `--help`), imported from the executable target.
///
/// The page's format is described in its last section, "How this page is checked".
@Suite("docs/CLI.md matches the commands")
struct CLIDocsTests {
    @Test("every command, option and argument the binary defines is documented, and nothing else")
    func pageMatchesDefinitions() throws {
        let page = try Repository.text(CLIDocsCheck.pagePath)
        for issue in CLIDocsCheck.issues(page: page, commands: CLIDocsCheck.commands()) {
            Issue.record(Comment(rawValue: issue))
        }
    }

    @Test("the page documents every command of the tree")
    func everyCommandIsThere() throws {
        let page = try Repository.text(CLIDocsCheck.pagePath)
        let documented = Set(CLIDocsCheck.usages(in: page).map { $0.command.joined(separator: " ") })
        let defined = CLIDocsCheck.commands().map(\.name)
        #expect(defined.count == 11)  // apex-keychain, inspect, migrate, store and its seven commands
        #expect(Set(defined) == documented)
    }

    @Test("an option documented but not defined fails: --remove-source")
    func catchesAnUndefinedOption() throws {
        let page = try Repository.text(CLIDocsCheck.pagePath)
        let usage = "apex-keychain migrate [--store <store>] [--dry-run]"
        #expect(page.contains(usage))
        let changed = page.replacingOccurrences(of: usage, with: usage + " [--remove-source]")
        let issues = CLIDocsCheck.issues(page: changed, commands: CLIDocsCheck.commands())
        #expect(issues.count == 1)
        #expect(issues.first?.contains("`apex-keychain migrate` documents --remove-source") == true, "\(issues)")
    }

    @Test("an option defined but not documented fails")
    func catchesAnUndocumentedOption() throws {
        let page = try Repository.text(CLIDocsCheck.pagePath)
        var commands = CLIDocsCheck.commands()
        let index = try #require(commands.firstIndex { $0.name == "apex-keychain migrate" })
        commands[index].configuration.options.append(.flag("remove-source", help: "Remove the migrated items."))
        let issues = CLIDocsCheck.issues(page: page, commands: commands)
        #expect(issues.contains { $0.contains("`apex-keychain migrate` defines --remove-source") }, "\(issues)")
        #expect(issues.contains { $0.contains("table") && $0.contains("--remove-source") }, "\(issues)")
    }

    @Test("an option the help mentions but no command defines fails")
    func catchesAnOptionOnlyTheHelpMentions() throws {
        let page = try Repository.text(CLIDocsCheck.pagePath)
        var commands = CLIDocsCheck.commands()
        let index = try #require(commands.firstIndex { $0.name == "apex-keychain migrate" })
        commands[index].configuration.discussion! += "\n\nWith --remove-source, the migrated items are removed."
        let issues = CLIDocsCheck.issues(page: page, commands: commands)
        #expect(issues == ["the help of `apex-keychain migrate` mentions --remove-source, which no command defines"])
    }

    @Test("a changed default or list of values fails")
    func catchesChangedValues() throws {
        let page = try Repository.text(CLIDocsCheck.pagePath)
        var commands = CLIDocsCheck.commands()
        let index = try #require(commands.firstIndex { $0.name == "apex-keychain store init" })
        let device = try #require(commands[index].configuration.options.firstIndex { $0.name == "device" })
        commands[index].configuration.options[device].defaultValue = "ios"
        commands[index].configuration.options[device].allowedValues?.append("watchos")
        let issues = CLIDocsCheck.issues(page: page, commands: commands)
        #expect(issues.count == 2, "\(issues)")
        #expect(issues.contains { $0.contains("--device") && $0.contains("default") })
        #expect(issues.contains { $0.contains("--device") && $0.contains("watchos") })
    }
}

/// Compares `docs/CLI.md` with command definitions; each problem is one message that names the line, the
/// command and the option.
enum CLIDocsCheck {
    static let pagePath = "docs/CLI.md"

    /// A command of the tree: its full name and its configuration.
    struct Command {
        var path: [String]
        var configuration: CommandConfiguration
        var name: String { path.joined(separator: " ") }
    }

    /// Every command the binary has, the root first, each group before its commands.
    static func commands() -> [Command] {
        var found: [Command] = []
        func walk(_ command: any ParsableCommand.Type, _ parent: [String]) {
            let configuration = command.configuration
            let path = parent + [configuration.name]
            found.append(Command(path: path, configuration: configuration))
            for subcommand in configuration.subcommands { walk(subcommand, path) }
        }
        walk(RootCommand.self, [])
        return found
    }

    /// An option as a usage block shows it.
    struct DocumentedOption {
        var name: String
        var valueName: String?
        var repeats = false
    }

    /// An argument as a usage block shows it.
    struct DocumentedArgument: Equatable {
        var name: String
        var repeats = false
    }

    /// One `usage` block, parsed.
    struct Usage {
        var command: [String]
        var options: [DocumentedOption] = []
        var arguments: [DocumentedArgument] = []
        /// The line of the block's first line.
        var line: Int
        /// The lines after the block, up to the next usage block or level-2 heading: where its options table is.
        var tableLines: [(line: Int, text: String)] = []
        /// What could not be read.
        var problems: [String] = []
    }

    /// The usage blocks of the page, each with the lines that follow it.
    static func usages(in page: String) -> [Usage] {
        let lines = Markdown.lines(page)
        var usages: [Usage] = []
        for block in Markdown.fencedBlocks(page) where block.info == "usage" {
            var usage = parse(block)
            // The table: from after the closing fence to the next usage block or `## ` heading.
            var index = block.firstLine + block.lines.count  // 0-based: the line after the closing fence
            while index < lines.count {
                let text = lines[index]
                if text.hasPrefix("## ") || text.trimmingCharacters(in: .whitespaces) == "```usage" { break }
                usage.tableLines.append((index + 1, text))
                index += 1
            }
            usages.append(usage)
        }
        return usages
    }

    /// Reads a usage block: lines that start with `apex-keychain` begin a form of the command; indented lines
    /// continue the form above.
    static func parse(_ block: Markdown.Block) -> Usage {
        var usage = Usage(command: [], line: block.firstLine)
        var forms: [[String]] = []
        for (offset, line) in block.lines.enumerated() {
            let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
            guard let first = words.first else { continue }
            if first == "apex-keychain" {
                forms.append(words)
            } else if !forms.isEmpty, line.first?.isWhitespace == true {
                forms[forms.count - 1] += words
            } else {
                usage.problems.append(
                    "\(pagePath):\(block.firstLine + offset): a usage line must start with 'apex-keychain' or continue an indented line"
                )
            }
        }
        var commands: [[String]] = []
        for form in forms {
            var command = [form[0]]
            var inCommandWords = true
            // What a `...` repeats: the last option or argument read.
            var last: (isOption: Bool, index: Int)?
            var index = 1
            while index < form.count {
                let raw = form[index]
                let word = raw.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                index += 1
                if word.isEmpty { continue }
                if inCommandWords, word.range(of: "^[a-z][a-z0-9-]*$", options: .regularExpression) != nil {
                    command.append(word)
                    continue
                }
                inCommandWords = false
                if word == "..." {
                    switch last {
                    case (true, let at)?: usage.options[at].repeats = true
                    case (false, let at)?: usage.arguments[at].repeats = true
                    case nil: usage.problems.append("\(pagePath):\(block.firstLine): '...' follows nothing")
                    }
                } else if word.range(of: "^--[a-z0-9][a-z0-9-]*$", options: .regularExpression) != nil {
                    var option = DocumentedOption(name: String(word.dropFirst(2)))
                    // A value shares the option's brackets: `[--store <store>]`, but `[--bytes] <key>`.
                    if !raw.hasSuffix("]"), index < form.count {
                        let next = form[index].trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                        if next.hasPrefix("<"), next.hasSuffix(">") {
                            option.valueName = String(next.dropFirst().dropLast())
                            index += 1
                        }
                    }
                    usage.options.append(option)
                    last = (true, usage.options.count - 1)
                } else if word.hasPrefix("<"), word.hasSuffix(">") {
                    let name = String(word.dropFirst().dropLast())
                    if let known = usage.arguments.firstIndex(where: { $0.name == name }) {
                        last = (false, known)
                    } else {
                        usage.arguments.append(DocumentedArgument(name: name))
                        last = (false, usage.arguments.count - 1)
                    }
                } else {
                    usage.problems.append("\(pagePath):\(block.firstLine): unexpected '\(raw)' in a usage block")
                }
            }
            commands.append(command)
        }
        usage.command = commands.first ?? []
        if Set(commands.map { $0.joined(separator: " ") }).count > 1 {
            usage.problems.append("\(pagePath):\(block.firstLine): one usage block names several commands")
        }
        return usage
    }

    /// Every problem of `page` against `commands`.
    static func issues(page: String, commands: [Command]) -> [String] {
        var issues: [String] = []
        let usages = usages(in: page)
        for usage in usages { issues += usage.problems }
        let known = Set(commands.map(\.name))
        for usage in usages where !known.contains(usage.command.joined(separator: " ")) {
            issues.append(
                "\(pagePath):\(usage.line): documents `\(usage.command.joined(separator: " "))`, which is not a command of the binary"
            )
        }
        for command in commands {
            let documented = usages.filter { $0.command == command.path }
            guard let usage = documented.first else {
                issues.append("\(pagePath): `\(command.name)` has no usage block")
                continue
            }
            if documented.count > 1 {
                issues.append("\(pagePath):\(documented[1].line): `\(command.name)` has more than one usage block")
            }
            issues += compareOptions(usage, command)
            issues += compareArguments(usage, command)
            issues += compareTable(usage, command)
        }
        issues += mentions(page: page, commands: commands)
        return issues
    }

    /// The options of a command as the parser knows them, with `--version` for the root.
    private static func definedOptions(_ command: Command) -> [OptionDefinition] {
        var options = command.configuration.options
        if command.configuration.version != nil { options.append(.flag("version", help: "")) }
        return options
    }

    private static func compareOptions(_ usage: Usage, _ command: Command) -> [String] {
        var issues: [String] = []
        let where_ = "\(pagePath):\(usage.line): `\(command.name)`"
        let defined = definedOptions(command)
        for option in usage.options where option.name != "help" {
            guard let definition = defined.first(where: { $0.name == option.name }) else {
                issues.append("\(where_) documents --\(option.name), which the command does not define")
                continue
            }
            switch (definition.kind, option.valueName) {
            case (.flag, let value?):
                issues.append("\(where_) documents --\(option.name) <\(value)>, but --\(option.name) is a flag")
            case (.value(let valueName), nil):
                issues.append("\(where_) documents --\(option.name) as a flag, but it takes a value <\(valueName)>")
            case (.value(let valueName), let value?) where value != valueName:
                issues.append(
                    "\(where_) documents --\(option.name) <\(value)>; the command calls its value <\(valueName)>")
            default:
                break
            }
            if option.repeats != definition.isRepeatable {
                issues.append(
                    "\(where_) documents --\(option.name) as \(option.repeats ? "" : "not ")repeatable; it is \(definition.isRepeatable ? "" : "not ")repeatable"
                )
            }
        }
        for definition in defined where !usage.options.contains(where: { $0.name == definition.name }) {
            issues.append("\(where_) defines --\(definition.name), which its usage block does not document")
        }
        return issues
    }

    private static func compareArguments(_ usage: Usage, _ command: Command) -> [String] {
        var expected = command.configuration.arguments.map {
            DocumentedArgument(name: $0.name, repeats: $0.isRepeating)
        }
        if !command.configuration.subcommands.isEmpty { expected.insert(DocumentedArgument(name: "subcommand"), at: 0) }
        guard usage.arguments != expected else { return [] }
        func show(_ arguments: [DocumentedArgument]) -> String {
            arguments.isEmpty
                ? "none" : arguments.map { "<\($0.name)>" + ($0.repeats ? " ..." : "") }.joined(separator: " ")
        }
        return [
            "\(pagePath):\(usage.line): `\(command.name)` documents the arguments \(show(usage.arguments)); the command takes \(show(expected))"
        ]
    }

    /// The options table after a command's usage block: one row per option, both ways, with its allowed values
    /// and default.
    private static func compareTable(_ usage: Usage, _ command: Command) -> [String] {
        var issues: [String] = []
        var rows: [(line: Int, name: String, cells: [String])] = []
        for (line, text) in usage.tableLines {
            guard let cells = Markdown.cells(text), let first = cells.first, first.hasPrefix("`--") else { continue }
            let name = String(first.dropFirst(3).prefix { $0 != " " && $0 != "`" })
            rows.append((line, name, cells))
        }
        let options = command.configuration.options
        let runs = command.configuration.subcommands.isEmpty && command.path.count > 1
        for row in rows {
            let where_ = "\(pagePath):\(row.line): `\(command.name)`"
            guard runs, let definition = options.first(where: { $0.name == row.name }) else {
                issues.append("\(where_): the options table documents --\(row.name), which the command does not define")
                continue
            }
            guard row.cells.count >= 3 else {
                issues.append("\(where_): the row of --\(row.name) needs the columns Option, Values, Default")
                continue
            }
            issues += compareValues(definition, cell: row.cells[1], where_)
            issues += compareDefault(definition, cell: row.cells[2], where_)
        }
        if runs {
            for definition in options where !rows.contains(where: { $0.name == definition.name }) {
                issues.append(
                    "\(pagePath):\(usage.line): `\(command.name)` defines --\(definition.name), which its options table does not document"
                )
            }
        }
        return issues
    }

    private static func compareValues(_ definition: OptionDefinition, cell: String, _ where_: String) -> [String] {
        let listed = Markdown.codeSpans(cell)
        if let allowed = definition.allowedValues {
            guard listed != allowed else { return [] }
            return [
                "\(where_): the table lists the values of --\(definition.name) as \(listed.joined(separator: ", ")); the command accepts \(allowed.joined(separator: ", "))"
            ]
        }
        let words = Markdown.withoutCodeSpans(cell).trimmingCharacters(in: CharacterSet(charactersIn: " ,"))
        guard !listed.isEmpty, words.isEmpty else { return [] }
        return [
            "\(where_): the table lists values for --\(definition.name) (\(listed.joined(separator: ", "))), but the command accepts any value"
        ]
    }

    private static func compareDefault(_ definition: OptionDefinition, cell: String, _ where_: String) -> [String] {
        let single = cell.hasPrefix("`") && cell.hasSuffix("`") && Markdown.codeSpans(cell).count == 1
        if let defaultValue = definition.defaultValue {
            guard cell == "`\(defaultValue)`" else {
                return [
                    "\(where_): the table gives the default of --\(definition.name) as \(cell); the command's default is `\(defaultValue)`"
                ]
            }
        } else if definition.isRequired {
            guard cell == "required" else {
                return ["\(where_): --\(definition.name) is required, but the table's Default column says \(cell)"]
            }
        } else if single || cell == "required" {
            return ["\(where_): the table gives --\(definition.name) the default \(cell); the command defines none"]
        }
        return []
    }

    /// Options mentioned in the page's prose and in the help texts must exist (the page's section "What the tool
    /// does not offer" excepted).
    private static func mentions(page: String, commands: [Command]) -> [String] {
        var defined: Set<String> = ["help"]
        for command in commands { defined.formUnion(definedOptions(command).map(\.name)) }
        var issues: [String] = []
        let exempt = "## What the tool does not offer"
        var inExempt = false
        var inUsage = false
        for (index, line) in Markdown.lines(page).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") {
                inUsage = !inUsage && trimmed == "```usage"
                continue
            }
            if line.hasPrefix("## ") { inExempt = trimmed == exempt }
            if inExempt || inUsage { continue }
            for name in optionNames(in: line) where !defined.contains(name) {
                issues.append("\(pagePath):\(index + 1): mentions --\(name), which no command defines")
            }
        }
        for command in commands {
            let configuration = command.configuration
            var texts = [
                configuration.abstract, configuration.discussion ?? "", configuration.extraArgumentsHint ?? "",
            ]
            texts += configuration.options.map(\.help) + configuration.arguments.map(\.help)
            for name in Set(texts.flatMap(optionNames(in:))).sorted() where !defined.contains(name) {
                issues.append("the help of `\(command.name)` mentions --\(name), which no command defines")
            }
        }
        return issues
    }

    /// The names of the `--options` a text mentions.
    static func optionNames(in text: String) -> [String] {
        var names: [String] = []
        var rest = text[...]
        while let range = rest.range(of: "(?<![A-Za-z0-9-])--[a-z0-9][a-z0-9-]*", options: .regularExpression) {
            names.append(String(rest[range].dropFirst(2)))
            rest = rest[range.upperBound...]
        }
        return names
    }
}

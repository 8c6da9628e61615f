import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `--no-color`, shared by the commands that print a report.
let noColorOption = OptionDefinition.flag(
    "no-color", help: "No colour in the text, even on a terminal (as NO_COLOR set to anything does).")

/// Whether text on stdout is coloured: only when stdout is a terminal, and not with `--no-color`, `NO_COLOR` set
/// to any value but the empty one (no-color.org), or `TERM=dumb`.
enum TerminalColor {
    static func enabled(
        noColor: Bool, environment: [String: String] = ProcessInfo.processInfo.environment,
        isTerminal: Bool = isatty(STDOUT_FILENO) == 1
    ) -> Bool {
        if noColor { return false }
        if let value = environment["NO_COLOR"], !value.isEmpty { return false }
        if environment["TERM"] == "dumb" { return false }
        return isTerminal
    }
}

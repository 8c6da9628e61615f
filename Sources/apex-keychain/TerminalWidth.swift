import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How wide the text output may be: `$COLUMNS` when it is a positive number, else the width of the terminal
/// stdout is, else no limit (a pipe or a file gets one line per row).
enum TerminalWidth {
    static func current(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int? {
        if let columns = environment["COLUMNS"].flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }),
            columns > 0
        {
            return columns
        }
        guard isatty(STDOUT_FILENO) == 1 else { return nil }
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}

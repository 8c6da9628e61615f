import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How wide the text output may be: `$COLUMNS` when it is a positive number; else the width of the terminal
/// stdout is, else stderr's (output piped into `less` or `head` from a terminal), else the controlling
/// terminal's (`/dev/tty`); else no limit (no terminal at all: one line per row).
enum TerminalWidth {
    static func current(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int? {
        if let columns = environment["COLUMNS"].flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }),
            columns > 0
        {
            return columns
        }
        for descriptor in [STDOUT_FILENO, STDERR_FILENO] {
            if let width = width(of: descriptor) { return width }
        }
        let tty = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC)
        guard tty >= 0 else { return nil }
        defer { close(tty) }
        return width(of: tty)
    }

    /// The width of the terminal `descriptor` is, when it is one and knows its width.
    private static func width(of descriptor: Int32) -> Int? {
        guard isatty(descriptor) == 1 else { return nil }
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}

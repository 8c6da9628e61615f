import Foundation

/// Data a command built and no longer needs (dumps, plans, reports), held until the process exits instead of
/// being freed: the tool exits right after printing, and freeing a 100k-item plan and report object by object
/// would only delay that by a tenth of a second. Never a store, a database or a key: those must be closed and
/// wiped as they are released.
enum KeptUntilExit {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var kept: [Any] = []

    static func keep(_ values: Any...) {
        lock.withLock { kept.append(contentsOf: values) }
    }
}

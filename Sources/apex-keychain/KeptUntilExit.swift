import Foundation

/// What a command printed and no longer needs (its report), held until the process exits instead of being freed:
/// the tool exits right after printing, and freeing a 100k-item report object by object would only delay that by a
/// tenth of a second. Never anything that holds a secret (dumps, items, plans): those are released as soon as the
/// run is done, so the allocator wipes them (see `ProcessHardening`). Never a store, a database or a key either:
/// those must be closed and wiped as they are released.
enum KeptUntilExit {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var kept: [Any] = []

    static func keep(_ values: Any...) {
        lock.withLock { kept.append(contentsOf: values) }
    }
}

import Foundation

/// A value behind a lock, for the targets an app builds on a device: `Synchronization`'s `Mutex` needs iOS 18 and
/// macOS 15, beyond the package's floor, and `OSAllocatedUnfairLock` is Apple's only; `NSLock` is everywhere.
/// `withLock` is `Mutex.withLock`'s shape, so a use reads the same. `package` access: the migration uses it too.
package final class Locked<Value>: @unchecked Sendable {
    // Every access to `value` holds `lock`, which is what makes the class Sendable.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, holding the lock: `body` may read and change it.
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure)
        -> Result
    {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A lock on a store for one writer's whole job (a migration: plan, writes, read-backs and ledger), held until it
/// is released or the process ends.
///
/// Each write of the store is its own transaction already; this keeps a second migration from planning against
/// a store that a first one is still writing, so that two runs give the answer one after the other gives: the
/// second finds the first's items. It is an advisory `flock` on the store file, which SQLite's own (`fcntl`)
/// locks don't interact with on Linux; the kernel releases it when the process dies.
public final class StoreLock: Sendable {
    private let descriptor: Int32

    /// Takes the lock on the store at `url`, waiting for whoever holds it.
    /// - Parameters:
    ///   - url: the store's file.
    ///   - waiting: called once, before waiting, when another process holds the lock.
    /// - Throws: `io` when the store can't be opened or locked.
    public init(store url: URL, waiting: () -> Void) throws(StoreError) {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure(url, errno) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK else {
                let code = errno
                close(fd)
                throw Self.failure(url, code)
            }
            waiting()
            while flock(fd, LOCK_EX) != 0 {
                guard errno == EINTR else {
                    let code = errno
                    close(fd)
                    throw Self.failure(url, code)
                }
            }
        }
        descriptor = fd
    }

    deinit { close(descriptor) }

    private static func failure(_ url: URL, _ code: Int32) -> StoreError {
        StoreError(.io, path: url.path, "can't lock the store: \(String(cString: strerror(code)))")
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A file as the system knows it (its device and inode), whatever path or link names it: how the package tells
/// that two paths are one file (a dump reached twice, a report that would replace an input).
package struct FileIdentity: Hashable, Sendable {
    /// The device the file is on.
    package let device: UInt
    /// The file's inode on that device.
    package let inode: UInt

    /// The file `path` names (links followed), or nil when there is none.
    package init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The file open at `descriptor` (standard input, say), or nil when it is not open.
    package init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    private init(_ info: stat) {
        device = UInt(info.st_dev)
        inode = UInt(info.st_ino)
    }
}

#if canImport(Glibc)
    import Glibc
#endif

/// A file as the system knows it (its device and inode), whatever path or link names it: how the tool tells
/// that two paths are one file.
struct FileIdentity: Hashable {
    let device: UInt
    let inode: UInt

    /// The file `path` names (links followed), or nil when there is none.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt(info.st_dev)
        inode = UInt(info.st_ino)
    }
}

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
        self.init(info)
    }

    /// The file open at `descriptor` (standard input, say), or nil when it is not open.
    init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    private init(_ info: stat) {
        device = UInt(info.st_dev)
        inode = UInt(info.st_ino)
    }
}

/// A name in a folder, whatever path or link names the folder: how the tool tells that two paths name one file
/// when there may be no file there yet (SQLite's `-wal` file of a store, made while the store is open).
struct FileName: Hashable {
    /// The folder.
    let folder: FileIdentity
    /// The last component of the path, byte for byte (file names are bytes).
    let name: [UInt8]

    /// The name `path` gives in its folder, or nil when the folder does not exist.
    init?(path: String) {
        let (folderPath, name) = Self.split(path)
        guard let folder = FileIdentity(path: folderPath) else { return nil }
        self.folder = folder
        self.name = Array(name.utf8)
    }

    /// The folder of `path` and its last component, trailing slashes left out ("." for a path without a folder).
    /// By hand: Foundation's `deletingLastPathComponent` traps on "." on Linux.
    static func split(_ path: String) -> (folder: String, name: String) {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return (".", String(trimmed)) }
        let folder = slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
        return (folder, String(trimmed[trimmed.index(after: slash)...]))
    }
}

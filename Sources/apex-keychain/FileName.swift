import ApexDumps

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

import Foundation

extension DumpReader {
    /// The files of a folder worth reading, searched to ``maxDiscoveryDepth`` levels, as sorted paths that start
    /// with `directory`, and the folders in it that hold an iPhone backup (``EncryptedBackup/isBackup(_:)``), which
    /// are not searched: a backup is read whole. Which of them are dumps is told by their content
    /// (``scan(paths:standardInput:backups:)``), never by their names.
    ///
    /// Left out: hidden files and folders, SQLite's `-wal`, `-shm` and `-journal` companions (the SQLite reader
    /// takes them with their database), FIFOs, sockets, devices and links to them, links to folders, links to
    /// nothing (or in a loop), and in an Android app data folder (a folder with
    /// `shared_prefs/`) every subfolder but `shared_prefs/` and `files/datastore/`, so that the app's own
    /// databases, caches and files are not read.
    ///
    /// - Throws: `DumpError/Kind/unreadable` naming the folder when it does not exist, is not a folder, or a
    ///   folder inside it can't be listed.
    public static func discover(_ directory: String) throws(DumpError) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            throw DumpError(.unreadable, path: directory, "no such file or folder")
        }
        guard isDirectory.boolValue else { throw DumpError(.unreadable, path: directory, "not a folder") }
        var found: [String] = []
        try walk(directory, depth: 0, scope: .everything, into: &found)
        return found.sorted()
    }

    /// Which entries of a folder the search looks at.
    private enum Scope {
        /// Any file, any subfolder.
        case everything
        /// The `files/` folder of an Android app data folder: only `datastore/`.
        case appFiles
    }

    private static let companionSuffixes = ["-wal", "-shm", "-journal"]

    private static func walk(_ folder: String, depth: Int, scope: Scope, into found: inout [String]) throws(DumpError) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        } catch {
            throw DumpError(.unreadable, path: folder, "cannot list the folder")
        }
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        let isAppDataFolder =
            scope == .everything && names.contains("shared_prefs") && isFolder(prefix + "shared_prefs")
        for name in names where !name.hasPrefix(".") && !companionSuffixes.contains(where: { name.hasSuffix($0) }) {
            let path = prefix + name
            guard let type = try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType else {
                continue
            }
            if type == .typeDirectory {
                // An iPhone backup is one dump, read as a whole: its files are encrypted, none is a dump.
                if scope == .everything, isBackupFolder(path) {
                    found.append(path)
                    continue
                }
                guard depth < maxDiscoveryDepth else { continue }
                switch scope {
                case .appFiles:
                    guard name == "datastore" else { continue }
                    try walk(path, depth: depth + 1, scope: .everything, into: &found)
                case .everything:
                    if isAppDataFolder {
                        if name == "shared_prefs" {
                            try walk(path, depth: depth + 1, scope: .everything, into: &found)
                        } else if name == "files" {
                            try walk(path, depth: depth + 1, scope: .appFiles, into: &found)
                        }
                    } else {
                        try walk(path, depth: depth + 1, scope: .everything, into: &found)
                    }
                }
            } else if scope == .everything, type == .typeRegular {
                found.append(path)
            } else if scope == .everything, type == .typeSymbolicLink {
                // A link to a file is read as the file. One to a folder is not looked at, nor one to nothing (an
                // app folder pulled from a phone has `lib` -> `/data/app/…`) or in a loop, nor one to a device, a
                // FIFO or a socket, which are left out themselves: nothing to read there.
                var target = stat()
                if stat(path, &target) == 0, target.st_mode & S_IFMT == S_IFREG {
                    found.append(path)
                }
            }
        }
    }

    private static func isFolder(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}

// Readers/: DumpReader (this file) finds dump files, tells their format and hands each to its reader here:
// IOSPlistReader, KeychainSQLiteReader, ObjectionJSONReader, SharedPreferencesReader, DataStoreReader. With them
// are what they share: DumpFile (reading a file without blocking), IOSAttributes and AccessControlDecoder (the
// iOS attributes), SQLiteImage (a database file in memory).

import Foundation

/// Finds dump files, tells their format from their content, and hands each to its reader.
///
/// A path is a dump file or a folder. A file's format comes from its bytes, never its name: a `bplist` header or
/// an XML document whose root is `<plist>` is an iOS plist, a SQLite header a keychain export, an XML document
/// whose root is `<map>` a SharedPreferences file, a JSON array or object objection's output, and a buffer that
/// parses completely and strictly as a protobuf `PreferenceMap` with at least one entry a DataStore file.
/// Names only decide which files of a folder are looked at (``discover(_:)``).
public enum DumpReader {
    /// How many folder levels below a given folder ``discover(_:)`` searches.
    public static let maxDiscoveryDepth = 8

    /// Reads one dump file.
    ///
    /// The file is read whole, up to ``DumpLimits/maxFileBytes``, except a SQLite database, which its reader reads
    /// by path (with its `-wal` file). A file that is not a regular file (a FIFO, a device), and one whose reads
    /// would block, are refused as unreadable.
    ///
    /// - Parameter path: The file.
    /// - Returns: The dump: the path as given, the detected format and the records.
    /// - Throws: ``DumpError`` naming the file: ``DumpError/Kind/unreadable`` when it does not exist, is a folder
    ///   or can't be read; ``DumpError/Kind/malformed`` when it is empty, too large, of an unknown format
    ///   (`unknown format: …`) or rejected by its reader; ``DumpError/Kind/unsupported`` from a reader.
    public static func read(path: String) throws(DumpError) -> Dump {
        switch try load(path) {
        case .dump(let dump): return dump
        case .empty: throw DumpError(.malformed, path: path, "empty file")
        case .unknown: throw unknownFormat(path)
        }
    }

    /// The format of a dump's bytes, or nil when no reader knows them (an empty buffer among them).
    public static func detect(_ data: Data) -> DumpFormat? {
        guard !data.isEmpty else { return nil }
        if let format = detectByPrefix(data.prefix(prefixLength)) { return format }
        return DataStoreReader.isPreferenceMap(data) ? .dataStore : nil
    }

    /// The known dump files in a folder, searched to ``maxDiscoveryDepth`` levels, as sorted paths that start with
    /// `directory`.
    ///
    /// Looked at: `RN_KEYCHAIN.xml`, `crypto.KEY_256.xml`, `*SecureStore.xml`, `*.preferences_pb`, `*.plist`,
    /// `*.db`, `*.sqlite`, `*.sqlite3` and `*.json`. Skipped: hidden files and folders, SQLite's `-wal`, `-shm`
    /// and `-journal` companions (the SQLite reader takes them with their database), symbolic links to folders,
    /// and in an Android app data folder (a folder with `shared_prefs/`) every subfolder but `shared_prefs/` and
    /// `files/datastore/`, so that the app's own databases, caches and JSON files are not taken for dumps.
    ///
    /// - Throws: ``DumpError/Kind/unreadable`` naming the folder when it does not exist, is not a folder, or a
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

    /// Reads every dump the paths name: a file is read as ``read(path:)`` reads it; a folder is searched with
    /// ``discover(_:)``, and the files found in it whose content no reader knows (or that are empty) are skipped.
    /// A file met twice is read once.
    ///
    /// - Returns: The dumps, in the order of `paths`, each folder's files in sorted order.
    /// - Throws: The first ``DumpError``: a path that does not exist, an explicit file of unknown format, or a
    ///   known file that can't be read.
    public static func readAll(paths: [String]) throws(DumpError) -> [Dump] {
        var dumps: [Dump] = []
        var seen: Set<String> = []
        func firstTime(_ path: String) -> Bool {
            seen.insert(URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path).inserted
        }
        for path in paths {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                for file in try discover(path) where firstTime(file) {
                    if case .dump(let dump) = try load(file) { dumps.append(dump) }
                }
            } else if firstTime(path) {
                dumps.append(try read(path: path))
            }
        }
        return dumps
    }

    // MARK: - Reading

    /// What a file turned out to be.
    private enum Loaded {
        case dump(Dump)
        case empty
        case unknown
    }

    /// How many leading bytes the prefix tests look at (an XML prolog with comments can be long).
    private static let prefixLength = 64 << 10

    private static func unknownFormat(_ path: String) -> DumpError {
        DumpError(
            .malformed, path: path,
            "unknown format: not an iOS keychain plist, a keychain SQLite export, objection JSON, an Android "
                + "SharedPreferences XML file or a DataStore preferences_pb file")
    }

    private static func load(_ path: String) throws(DumpError) -> Loaded {
        let file = try DumpFile(path: path)
        defer { file.closeFile() }
        let tooLarge = DumpError(
            .malformed, path: path, "larger than the \(DumpLimits.maxFileBytes >> 20) MiB limit for a dump file")
        guard file.size <= DumpLimits.maxFileBytes else { throw tooLarge }
        let prefix = try file.readBytes(upTo: prefixLength)
        if prefix.isEmpty { return .empty }
        if KeychainSQLiteReader.looksLike(prefix) {
            file.closeFile()
            return .dump(
                Dump(path: path, format: .keychainSQLite, content: .keychain(try KeychainSQLiteReader.read(path: path)))
            )
        }
        var data = prefix
        if prefix.count == prefixLength {
            try file.read(upTo: DumpLimits.maxFileBytes - prefixLength + 1, appendingTo: &data)
        }
        // The file may have grown since it was opened.
        guard data.count <= DumpLimits.maxFileBytes else { throw tooLarge }
        guard let format = detect(data) else { return .unknown }
        let content: Dump.Content
        switch format {
        case .iosPlist: content = .keychain(try IOSPlistReader.read(data, path: path))
        case .objectionJSON: content = .keychain(try ObjectionJSONReader.read(data, path: path))
        case .keychainSQLite: content = .keychain(try KeychainSQLiteReader.read(path: path))
        case .sharedPreferences: content = .preferences(try SharedPreferencesReader.read(data, path: path))
        case .dataStore: content = .preferences(try DataStoreReader.read(data, path: path))
        case .keychainDatabase: return .unknown  // not a file format; never detected
        }
        return .dump(Dump(path: path, format: format, content: content))
    }

    // MARK: - Detection

    /// The formats told by their first bytes.
    private static func detectByPrefix(_ prefix: Data) -> DumpFormat? {
        if prefix.starts(with: Data("bplist".utf8)) { return .iosPlist }
        if KeychainSQLiteReader.looksLike(prefix) { return .keychainSQLite }
        let bytes = [UInt8](prefix)
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        skipWhitespace(bytes, &index)
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "<"):
            switch XMLProlog.rootElement(bytes, from: index) {
            case "plist": return .iosPlist
            case "map": return .sharedPreferences
            default: return nil
            }
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            // A JSON array or object: the next token must be able to follow the bracket.
            index += 1
            skipWhitespace(bytes, &index)
            guard index < bytes.count else { return nil }
            return "{[\"]}".utf8.contains(bytes[index]) ? .objectionJSON : nil
        default:
            return nil
        }
    }

    private static func skipWhitespace(_ bytes: [UInt8], _ index: inout Int) {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    // MARK: - Discovery

    /// Which entries of a folder the search looks at.
    private enum Scope {
        /// Any known file, any subfolder.
        case everything
        /// The `files/` folder of an Android app data folder: only `datastore/`.
        case appFiles
    }

    private static let knownNames: Set<String> = ["RN_KEYCHAIN.xml", "crypto.KEY_256.xml"]
    private static let knownExtensions: Set<String> = ["preferences_pb", "plist", "db", "sqlite", "sqlite3", "json"]
    private static let companionSuffixes = ["-wal", "-shm", "-journal"]

    private static func isKnownFile(_ name: String) -> Bool {
        if knownNames.contains(name) || name.hasSuffix("SecureStore.xml") { return true }
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        return knownExtensions.contains(name[name.index(after: dot)...].lowercased())
    }

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
            } else if scope == .everything, type == .typeRegular || (type == .typeSymbolicLink && !isFolder(path)),
                isKnownFile(name)
            {
                found.append(path)
            }
        }
    }

    private static func isFolder(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}

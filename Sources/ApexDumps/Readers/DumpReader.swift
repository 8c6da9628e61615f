// Readers/: DumpReader (this file, with DumpDiscovery.swift) finds dump files, tells their format and hands each
// to its reader here: IOSPlistReader, KeychainSQLiteReader, ObjectionJSONReader, SharedPreferencesReader,
// DataStoreReader. With them are what they share: DumpFile (reading a file without blocking), IOSAttributes and
// AccessControlDecoder (the iOS attributes), SQLiteImage (a database file in memory).

import Foundation

/// Finds dump files, tells their format from their content, and hands each to its reader.
///
/// A path is a dump file or a folder. A file's format comes from its bytes, never its name: a `bplist` header or
/// an XML document whose root is `<plist>` is an iOS plist, a SQLite header a keychain export, an XML document
/// whose root is `<map>` a SharedPreferences file, a JSON array or object objection's output, and a buffer that
/// parses completely and strictly as a protobuf `PreferenceMap` with at least one entry a DataStore file (one
/// named `*.preferences_pb`, or that starts with a whole preference entry, and does not parse is malformed: a
/// damaged DataStore file, never skipped in favour of an older SharedPreferences copy). A file
/// whose format no reader knows, that is empty, or that its reader finds to hold no keychain data (an app's
/// `Info.plist`, a `package.json`) is not a keychain dump (`DumpError/Kind/notADump`): a folder's search skips
/// it and says so (``DumpScan/skipped``); named, it is an error.
public enum DumpReader {
    /// How many folder levels below a given folder ``discover(_:)`` searches.
    public static let maxDiscoveryDepth = 8

    /// What the reports and errors call a dump read from a pipe (``scan(paths:standardInput:backups:)``).
    public static let standardInputName = "(stdin)"

    /// Reads one dump file.
    ///
    /// The file is read whole, up to `DumpLimits/maxFileBytes`, except a SQLite database, which its reader reads
    /// by path (with its `-wal` file). A file that is not a regular file (a FIFO, a device), and one whose reads
    /// would block, are refused as unreadable.
    ///
    /// - Parameter path: The file.
    /// - Returns: The dump: the path as given, the detected format and the records.
    /// - Throws: `DumpError` naming the file: `DumpError/Kind/unreadable` when it does not exist, is a folder
    ///   or can't be read; `DumpError/Kind/notADump` when it is empty, of an unknown format (`unknown format: …`)
    ///   or holds no keychain data; `DumpError/Kind/malformed` when it is too large or rejected by its reader;
    ///   `DumpError/Kind/unsupported` from a reader.
    public static func read(path: String) throws(DumpError) -> Dump {
        var budget = ExpansionBudget.run()
        return try read(.file(path), budget: &budget)
    }

    /// Reads one dump from a pipe or any other stream (`adb exec-out … | apex-keychain inspect -`), to its end,
    /// waiting for its bytes; the format is told from them as for a file. At most `DumpLimits/maxFileBytes` are
    /// taken: a stream that goes on is refused once it has given one byte more. The descriptor is left open.
    ///
    /// - Parameters:
    ///   - descriptor: the stream (standard input).
    ///   - name: what the dump's path and errors call it (``standardInputName``).
    /// - Throws: as ``read(path:)``; a SQLite export has no `-wal` file here.
    public static func read(stream descriptor: Int32, name: String) throws(DumpError) -> Dump {
        var budget = ExpansionBudget.run()
        return try read(.stream(descriptor, name: name), budget: &budget)
    }

    /// The format of a dump's bytes, or nil when no reader knows them (an empty buffer among them).
    public static func detect(_ data: Data) -> DumpFormat? {
        guard !data.isEmpty else { return nil }
        if let format = detectByPrefix(data.prefix(prefixLength)) { return format }
        return DataStoreReader.isPreferenceMap(data) ? .dataStore : nil
    }

    /// Reads every dump the paths name. A file is read as ``read(path:)`` reads it, and one that is not a keychain
    /// dump is an error. A folder is searched with ``discover(_:)``; each file found in it is read, and one that
    /// is not a keychain dump (`DumpError/Kind/notADump`) is skipped and listed (``DumpScan/Entry/skipped(_:)``). A file
    /// met twice (named twice, or reached again by a link or a hard link) is read once, under the path it was
    /// first met by.
    ///
    /// - Parameters:
    ///   - paths: files and folders.
    ///   - standardInput: when given, the path `-` reads a dump from this descriptor (``read(stream:name:)``),
    ///     named ``standardInputName``; without it, `-` is a file name.
    ///   - backups: how an encrypted iPhone backup's folder is opened: its password, the app whose items are kept,
    ///     the key derivation's progress (``BackupAccess``). Without it, a backup named or found is an error
    ///     that asks for its password.
    /// - Returns: The dumps, in the order of `paths`, each folder's files in sorted order, and the files skipped.
    /// - Throws: The first `DumpError`: a path that does not exist, a named file that is not a dump, a dump that
    ///   can't be read (a file found in a folder included: damaged, too large, unreadable, unsupported), and the
    ///   dump with which the run's dumps together (the one read from `standardInput` among them) would hold more
    ///   than `DumpLimits/maxItemsPerRun` items, or their plists more than `DumpLimits/maxValuesPerRun` values
    ///   or more bytes of keys and values than 16 times their size and 1 MiB (`DumpLimits/maxFileBytes` at most)
    ///   (`DumpError/Kind/malformed`).
    ///
    /// An encrypted iPhone backup's folder (one with `Manifest.plist` and `Manifest.db`, named, or found in a
    /// folder, which is then not searched further) is one dump of format `DumpFormat/encryptedBackup`, read with
    /// `backups` (its password is asked only once the manifest shows the backup is encrypted); naming a backup's
    /// `Manifest.plist` or `Manifest.db` names its folder. Its errors: an unencrypted backup, or one met without
    /// `backups` (`DumpError/Kind/unsupported`), a wrong password (`DumpError/Kind/wrongPassword`, after the key
    /// derivation), and a damaged or missing file of it (`DumpError/Kind/malformed`, naming the file).
    public static func scan(
        paths: [String], standardInput: Int32? = nil, backups: BackupAccess? = nil
    ) throws(DumpError) -> DumpScan {
        var budget = ExpansionBudget.run()
        return try scan(paths: paths, standardInput: standardInput, backups: backups, budget: &budget)
    }

    /// ``scan(paths:standardInput:backups:)`` within `budget`, what the run's dumps may hold together, the one
    /// read from the standard input among them (tests give a small one).
    static func scan(
        paths: [String], standardInput: Int32?, backups: BackupAccess? = nil, budget: inout ExpansionBudget
    ) throws(DumpError) -> DumpScan {
        var scan = DumpScan()
        var seen: Set<SeenFile> = []
        func firstTime(_ path: String) -> Bool { seen.insert(SeenFile(path)).inserted }
        for path in paths {
            if path == "-", let standardInput {
                let dump = try read(.stream(standardInput, name: standardInputName), budget: &budget)
                scan.entries.append(.dump(dump, inFolder: false))
                continue
            }
            if let folder = backupFolder(named: path) {
                if firstTime(folder) {
                    try scan.entries.append(.dump(backup(folder, backups, &budget), inFolder: false))
                }
                continue
            }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                for file in try discover(path) where firstTime(file) {
                    if isBackupFolder(file) {
                        try scan.entries.append(.dump(backup(file, backups, &budget), inFolder: true))
                        continue
                    }
                    switch try load(.file(file), budget: &budget) {
                    case .dump(let dump): scan.entries.append(.dump(dump, inFolder: true))
                    case .notADump(let error): scan.entries.append(.skipped(error))
                    }
                }
            } else if firstTime(path) {
                scan.entries.append(.dump(try read(.file(path), budget: &budget), inFolder: false))
            }
        }
        return scan
    }

    /// The backup's folder that `path` names: the path itself when it is a backup's folder, or the folder of a
    /// backup's `Manifest.plist` or `Manifest.db`; nil for any other path.
    static func backupFolder(named path: String) -> String? {
        if isBackupFolder(path) { return path }
        let url = URL(fileURLWithPath: path)
        guard ["Manifest.plist", "Manifest.db"].contains(url.lastPathComponent) else { return nil }
        let folder = url.deletingLastPathComponent()
        return EncryptedBackup.isBackup(folder) ? (path as NSString).deletingLastPathComponent : nil
    }

    /// Whether `path` is a folder that holds an iPhone backup (``EncryptedBackup/isBackup(_:)``).
    static func isBackupFolder(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
            && EncryptedBackup.isBackup(URL(fileURLWithPath: path))
    }

    /// The backup in `folder`, read with `access`, its items taken from the run's `budget`.
    private static func backup(
        _ folder: String, _ access: BackupAccess?, _ budget: inout ExpansionBudget
    ) throws(DumpError) -> Dump {
        let dump = try readBackup(folder, access: access)
        try spendItems(.dump(dump), &budget)
        return dump
    }

    /// What tells one file from another: its device and inode (``FileIdentity``), so that a file reached by a link
    /// or a hard link is the same file; its resolved path when it can't be looked up (the read then says why).
    private enum SeenFile: Hashable {
        case file(FileIdentity)
        case unresolved(String)

        init(_ path: String) {
            if let file = FileIdentity(path: path) {
                self = .file(file)
            } else {
                self = .unresolved(URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path)
            }
        }
    }

    /// The dumps of ``scan(paths:standardInput:backups:)``, without the files it skipped.
    public static func readAll(paths: [String]) throws(DumpError) -> [Dump] {
        try scan(paths: paths).dumps
    }

    // MARK: - Reading

    /// What a file turned out to be.
    private enum Loaded {
        case dump(Dump)
        /// Not a keychain dump, and why.
        case notADump(DumpError)
    }

    /// How many leading bytes the prefix tests look at (an XML prolog with comments can be long).
    private static let prefixLength = 64 << 10

    private static func unknownFormat(_ path: String, start: Data = Data()) -> DumpError {
        DumpError(
            .notADump, path: path,
            "unknown format: not an iOS keychain plist, a keychain SQLite export, objection JSON, an Android "
                + "SharedPreferences XML file or a DataStore preferences_pb file"
                + (KnownTextOutput(start).map {
                    "; it looks like \($0.name), which is not read: \($0.instead)"
                } ?? ""))
    }

    private static func tooLarge(_ path: String) -> DumpError {
        DumpError(.malformed, path: path, "larger than the \(DumpLimits.maxFileBytes >> 20) MiB limit for a dump file")
    }

    /// Where a dump is read from.
    private enum Source {
        /// A file, by its path.
        case file(String)
        /// A stream, read to its end (``read(stream:name:)``), and what to call it.
        case stream(Int32, name: String)
    }

    /// The dump `source` holds, read within what is left of the run's `budget`; one that is not a keychain dump
    /// is an error.
    private static func read(_ source: Source, budget: inout ExpansionBudget) throws(DumpError) -> Dump {
        switch try load(source, budget: &budget) {
        case .dump(let dump): return dump
        case .notADump(let error): throw error
        }
    }

    /// What `source` holds, read within what is left of the run's `budget`, which its items are taken from.
    private static func load(_ source: Source, budget: inout ExpansionBudget) throws(DumpError) -> Loaded {
        let loaded: Loaded
        switch source {
        case .file(let path): loaded = try loadFile(path, budget: &budget)
        case .stream(let descriptor, let name): loaded = try loadStream(descriptor, name: name, budget: &budget)
        }
        try spendItems(loaded, &budget)
        return loaded
    }

    /// Takes a dump's items (keychain records or preference entries) from the run's `budget` (a plist's reader
    /// takes its own before it makes them); throws, naming the dump, when the run's dumps together hold more.
    private static func spendItems(_ loaded: Loaded, _ budget: inout ExpansionBudget) throws(DumpError) {
        guard case .dump(let dump) = loaded, dump.format != .iosPlist else { return }
        switch dump.content {
        case .keychain(let records): budget.items -= records.count
        case .preferences(let entries): budget.items -= entries.count
        }
        guard budget.items >= 0 else { throw DumpError(.malformed, path: dump.path, budget.problems.items) }
    }

    private static func loadFile(_ path: String, budget: inout ExpansionBudget) throws(DumpError) -> Loaded {
        let file = try DumpFile(path: path)
        defer { file.closeFile() }
        let prefix = try file.readBytes(upTo: prefixLength)
        if prefix.isEmpty { return .notADump(DumpError(.notADump, path: path, "empty file")) }
        if KeychainSQLiteReader.looksLike(prefix) {
            file.closeFile()
            return try readerResult(path, .keychainSQLite) { () throws(DumpError) in
                .keychain(try KeychainSQLiteReader.read(path: path))
            }
        }
        // A file that can't be any format (a photo, a video) is not read past its first bytes, however large.
        guard
            detectByPrefix(prefix) != nil || DataStoreReader.mayBePreferenceMap(prefix: prefix, size: file.size)
                || path.hasSuffix(DataStoreReader.fileNameSuffix)
        else { return .notADump(unknownFormat(path, start: prefix)) }
        guard file.size <= DumpLimits.maxFileBytes else { throw tooLarge(path) }
        var data = prefix
        if prefix.count == prefixLength {
            try file.read(upTo: DumpLimits.maxFileBytes - prefixLength + 1, appendingTo: &data)
        }
        // The file may have grown since it was opened.
        guard data.count <= DumpLimits.maxFileBytes else { throw tooLarge(path) }
        return try parse(consume data, path: path, budget: &budget)
    }

    /// The stream's bytes, to its end, and what they hold (a SQLite export among them, read from its bytes).
    private static func loadStream(
        _ descriptor: Int32, name: String, budget: inout ExpansionBudget
    ) throws(DumpError) -> Loaded {
        let own = dup(descriptor)
        guard own >= 0 else {
            throw DumpError(.unreadable, path: name, "cannot read it: \(String(cString: strerror(errno)))")
        }
        let stream = DumpFile(descriptor: own, path: name, size: 0, what: "it", waitsForInput: true)
        var data = Data()
        try stream.read(upTo: DumpLimits.maxFileBytes + 1, appendingTo: &data)
        stream.closeFile()
        guard data.count <= DumpLimits.maxFileBytes else { throw tooLarge(name) }
        guard !data.isEmpty else { return .notADump(DumpError(.notADump, path: name, "empty: nothing was read")) }
        return try parse(consume data, path: name, budget: &budget)
    }

    /// The dump in `data` (a SQLite export read from its bytes, with no `-wal` file), or why it is none.
    private static func parse(
        _ data: consuming Data, path: String, budget: inout ExpansionBudget
    ) throws(DumpError) -> Loaded {
        guard let format = detect(data) else {
            // A DataStore file that does not parse is damaged, not a file to skip (its reader says what is wrong).
            if DataStoreReader.isRecognisable(data, path: path) { return try parse(data, .dataStore, path: path) }
            return .notADump(unknownFormat(path, start: data))
        }
        if format == .iosPlist {
            // Passed on, not kept: the reader drops the file's bytes once parsed, before it makes the items.
            do {
                return .dump(
                    Dump(
                        path: path, format: format,
                        content: .keychain(try IOSPlistReader.read(consume data, path: path, budget: &budget))))
            } catch  where error.kind == .notADump {
                return .notADump(error)
            }
        }
        return try parse(data, format, path: path)
    }

    /// The dump in `data`, of a format other than a plist.
    private static func parse(_ data: Data, _ format: DumpFormat, path: String) throws(DumpError) -> Loaded {
        return try readerResult(path, format) { () throws(DumpError) -> Dump.Content in
            switch format {
            case .iosPlist: .keychain(try IOSPlistReader.read(data, path: path))
            case .objectionJSON: .keychain(try ObjectionJSONReader.read(data, path: path))
            case .keychainSQLite: .keychain(try KeychainSQLiteReader.read(data, path: path))
            case .sharedPreferences: .preferences(try SharedPreferencesReader.read(data, path: path))
            case .dataStore: .preferences(try DataStoreReader.read(data, path: path))
            // Not file formats; never detected from bytes.
            case .keychainDatabase, .encryptedBackup: throw unknownFormat(path)
            }
        }
    }

    /// The dump a reader made, or the reader's `DumpError/Kind/notADump` as a file to skip; other errors thrown.
    private static func readerResult(
        _ path: String, _ format: DumpFormat, _ read: () throws(DumpError) -> Dump.Content
    ) throws(DumpError) -> Loaded {
        do {
            return .dump(Dump(path: path, format: format, content: try read()))
        } catch  where error.kind == .notADump {
            return .notADump(error)
        }
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
}

/// What ``DumpReader/scan(paths:standardInput:backups:)`` found: the dumps, and the files of folders that were skipped
/// because they are not keychain dumps, in the order of the paths and of each folder's sorted files.
public struct DumpScan: Sendable {
    /// One file.
    public enum Entry: Sendable {
        /// A dump; `inFolder` when a folder's search found it (false for a file named in the paths, or stdin).
        case dump(Dump, inFolder: Bool)
        /// A file of a folder that is not a keychain dump, and why (`DumpError/Kind/notADump`).
        case skipped(DumpError)
    }

    /// Every file read, in order.
    public var entries: [Entry] = []

    /// The dumps, in order.
    public var dumps: [Dump] {
        entries.compactMap { if case .dump(let dump, _) = $0 { dump } else { nil } }
    }

    /// The files skipped, in order.
    public var skipped: [DumpError] {
        entries.compactMap { if case .skipped(let error) = $0 { error } else { nil } }
    }

    /// Creates an empty scan.
    public init() {}
}

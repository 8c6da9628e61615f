import ApexDumps
import ApexMigration
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The file `--report` names: checked before anything runs, written whole or not at all.
///
/// - It may not be one of the command's inputs (a dump, the file stdin reads one from, the store, its key file),
///   nor a file SQLite keeps beside the store or a dump (`-wal`, `-shm`, `-journal`), whether or not it exists
///   yet: the report would replace the only copy of a decrypted keychain, or the store's latest writes. That is a
///   usage error (64).
/// - It is written to a new file in the same folder (created exclusively, so a planted symlink is never
///   followed), made 0600 whatever the umask (it names services and accounts, and usernames with
///   `--include-labels`), synced, then renamed into place. A reader sees the old report or the new one.
struct ReportFile {
    /// The path as given.
    let path: String

    /// Refuses, before anything is read or written, a report file that can't be created: its folder is
    /// missing or not writable, or the path is a folder, a device, a pipe, a socket or a link (the report
    /// replaces its file whole: it would replace `/dev/null` or `/dev/stdout` with a regular file).
    func checkFolder() throws(CLIError) {
        try checkNotSpecial(.cannotCreate, beforeRun: true)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CLIError(.cannotCreate, "can't write the report \(path): the folder \(folder) does not exist")
        }
        guard access(folder, W_OK) == 0 else {
            throw CLIError(.cannotCreate, "can't write the report \(path): the folder \(folder) is not writable")
        }
    }

    /// Whether the file holds a report this tool wrote (an earlier run's, by its first bytes: the text, Markdown
    /// or JSON report's opening): a folder that holds it is read without it. Any other file at the path is an
    /// input like the rest, skipped with a word or refused with `--strict`.
    var holdsAnEarlierReport: Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let start = String(decoding: (try? handle.read(upToCount: 64)) ?? Data(), as: UTF8.self)
        return MigrationReport.startsLikeAReport(start)
    }

    /// The files of a run that the report may not replace: the paths given (but `-`) and the dumps read, with the
    /// files SQLite keeps beside each dump, and the store's (``StoreOptions/files``).
    static func inputs(paths: [String], dumps: [String], store: StoreOptions?) -> [InputFile] {
        paths.filter { $0 != "-" }.map { InputFile(path: $0, role: "an input") }
            + dumps.filter { $0 != DumpReader.standardInputName }.flatMap {
                [InputFile(path: $0, role: "an input")] + InputFile.sqliteCompanions(of: $0, "a dump")
            }
            + (store?.files ?? [])
    }

    /// Refuses a report file that is one of `inputs`: the same file, by device and inode, whatever the path or
    /// link that names it, or the same name in the same folder, whether or not a file is there (a store's `-wal`
    /// file comes and goes). With `standardInput` (a dump is read from `-`), the file stdin reads is an input too.
    func checkNotAnInput(_ inputs: [InputFile], standardInput: Bool) throws(CLIError) {
        let report = FileIdentity(path: path)
        if standardInput, let report, FileIdentity(descriptor: STDIN_FILENO) == report {
            throw .usage(
                "'--report \(path)' is the file the dump on stdin ('-') is read from: writing the report would "
                    + "replace it")
        }
        let name = FileName(path: path)
        for input in inputs {
            let sameFile = report != nil && FileIdentity(path: input.path) == report
            guard sameFile || (name != nil && FileName(path: input.path) == name) else { continue }
            throw .usage("'--report \(path)' names \(input.role) (\(input.path)): writing the report would replace it")
        }
    }

    /// Writes `data` to the file, replacing it whole.
    /// - Throws: an I/O error (74) naming the file and the cause; the file is then as it was.
    func write(_ data: Data) throws(CLIError) {
        let name = (path as NSString).lastPathComponent
        var template = Array("\(folder)/.\(name).apex-report-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw failure(errno) }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        var renamed = false
        defer {
            if !renamed { unlink(temporary) }
        }
        var code: Int32 = 0
        if fchmod(fd, 0o600) != 0 { code = errno }
        if code == 0 {
            code = data.withUnsafeBytes { raw -> Int32 in
                var offset = 0
                while offset < raw.count {
                    let written = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return errno
                    }
                    offset += written
                }
                return 0
            }
        }
        if code == 0, fsync(fd) != 0 { code = errno }
        if close(fd) != 0, code == 0 { code = errno }
        // Again just before the rename: something else may have been put there during the run.
        if code == 0 { try checkNotSpecial(.ioError) }
        if code == 0, rename(temporary, path) != 0 { code = errno }
        guard code == 0 else { throw failure(code) }
        renamed = true
    }

    /// Refuses, with `exitCode`, a path that names something other than a regular file (the path itself, not a
    /// link's target).
    private func checkNotSpecial(_ exitCode: ExitCode, beforeRun: Bool = false) throws(CLIError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        let what: String
        switch info.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR: what = "a folder"
        case S_IFLNK: what = "a link"
        case S_IFIFO: what = "a pipe"
        case S_IFSOCK: what = "a socket"
        default: what = "a device"
        }
        throw CLIError(
            exitCode,
            "can't write the report \(path): it is \(what), not a regular file"
                + (beforeRun
                    ? " (the report file is replaced whole; to send the report elsewhere, redirect stdout)" : ""))
    }

    private func failure(_ code: Int32) -> CLIError {
        CLIError(.ioError, "can't write the report \(path): \(String(cString: strerror(code)))")
    }

    /// The folder the file is in.
    private var folder: String { FileName.split(path).folder }
}

/// A file the report may not replace, and what it is, as the refusal names it.
struct InputFile: Sendable {
    /// The path, as given or as made from one given.
    let path: String
    /// What the file is: "an input", "the store's key file", "the store's -wal file".
    let role: String

    /// The files SQLite keeps beside a database it reads (`-wal`, `-shm`, `-journal`), beside `path` and beside
    /// the file a link there leads to (where SQLite puts them); `owner` is what the database is ("the store").
    static func sqliteCompanions(of path: String, _ owner: String) -> [InputFile] {
        var bases = [path]
        if let resolved = realpath(path, nil) {
            let target = String(cString: resolved)
            free(resolved)
            if target != path { bases.append(target) }
        }
        return bases.flatMap { base in
            ["-wal", "-shm", "-journal"].map { InputFile(path: base + $0, role: "\(owner)'s \($0) file") }
        }
    }
}

import ApexKeychain
import ApexKeychainStore
import ApexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One store in a scratch directory, with its default key file: created, reopened and looked at from outside.
struct TestStore: Sendable {
    let directory: ScratchFolder
    let url: URL
    let keyFile: URL

    /// A store file and its key file.
    struct Files {
        let url: URL
        let keyFile: URL
    }

    init(_ directory: ScratchFolder, name: String = "store.db") {
        self.directory = directory
        url = directory.file(name)
        keyFile = SQLiteKeychainDatabase.defaultKeyFile(for: url)
    }

    /// The store `name` in `folder` of the scratch directory (created when missing).
    init(_ directory: ScratchFolder, folder: String, name: String = "store.db") throws {
        self.directory = directory
        let folderURL = directory.file(folder)
        try FileManager.default.createDirectory(at: folderURL, withIntermediateDirectories: true)
        url = folderURL.appendingPathComponent(name)
        keyFile = SQLiteKeychainDatabase.defaultKeyFile(for: url)
    }

    /// Creates the store with a new key file beside it.
    func create(device: DeviceProfile = .ios) throws(StoreError) -> SQLiteKeychainDatabase {
        try SQLiteKeychainDatabase.create(at: url, key: .keyFile(keyFile), device: device)
    }

    /// Opens the store with its key file.
    func open() throws(StoreError) -> SQLiteKeychainDatabase {
        try SQLiteKeychainDatabase(opening: url, key: .keyFile(keyFile))
    }

    /// A plain SQLite connection to the store file, to look at or edit it from outside.
    func raw() throws -> RawDatabase { try RawDatabase(url) }

    /// `PRAGMA integrity_check` of the file, read from outside.
    func integrityCheck() throws -> String {
        try raw().text("PRAGMA integrity_check") ?? "(no answer)"
    }
}

/// A keychain of `service` on `database`, with the store's own device (phone profiles: prompts succeed).
func keychain(_ database: SQLiteKeychainDatabase, service: String = "s") throws -> Keychain {
    try Keychain(KeychainOptions(service: service), database: database, device: database.makeDevice(passcode: .none))
}

/// The ``StoreError`` that `body` threw, or nil (with an issue recorded) when it did not throw.
func storeError<T>(
    _ body: () throws(StoreError) -> T, sourceLocation: SourceLocation = #_sourceLocation
) -> StoreError? {
    do {
        _ = try body()
        Issue.record("expected a StoreError, but the call succeeded", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// The whole numbers written in `text`, in order.
func numbers(in text: String) -> [Int] {
    text.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
}

/// Whether `needle` occurs in `haystack`.
func contains(_ haystack: Data, _ needle: Data) -> Bool {
    guard !needle.isEmpty else { return true }
    return haystack.range(of: needle) != nil
}

// MARK: - The store-writer child process

/// The `store-writer` test-support executable, built beside this test binary.
enum StoreWriter {
    static var executable: URL {
        if let path = ProcessInfo.processInfo.environment["APXK_STORE_WRITER"] { return URL(fileURLWithPath: path) }
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? ProcessInfo.processInfo.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("store-writer")
    }

    /// The value the writer stores in write `index` of run `seed`.
    static func value(_ index: Int, seed: Int) -> String { "v\(index)-\(seed)" }

    /// The access control the writer uses in write `index` with `keys` keys (its default `alternate` mode): each
    /// key alternates between none (an in-place replace) and biometryAny (a staged write) from round to round.
    static func accessControl(_ index: Int, keys: Int) -> AccessControl {
        (index / keys + index % keys) % 2 == 0 ? .none : .biometryAny
    }
}

/// A running `store-writer`: its stdout read line by line, killed or waited for.
final class WriterProcess {
    let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private var buffer = Data()
    private(set) var lines: [String] = []

    init(
        store: TestStore, seed: Int, count: Int, keys: Int? = nil, prefix: String? = nil, service: String? = nil
    ) throws {
        var arguments = [
            "--store", store.url.path, "--key-file", store.keyFile.path, "--seed", String(seed), "--count",
            String(count),
        ]
        if let keys { arguments += ["--keys", String(keys)] }
        if let prefix { arguments += ["--prefix", prefix] }
        if let service { arguments += ["--service", service] }
        process.executableURL = StoreWriter.executable
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning { kill() }
    }

    /// Blocks until the child prints a whole line, and returns it; nil when its stdout closed.
    func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer = Data(buffer[buffer.index(after: newline)...])
                lines.append(line)
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }

    /// Reads lines until one equals `wanted`; false when stdout closed first.
    func waitFor(_ wanted: String) -> Bool {
        while let line = nextLine() {
            if line == wanted { return true }
        }
        return false
    }

    /// Kills the child with SIGKILL and waits for it.
    func kill() {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits for the child to end and reads the rest of its stdout.
    func finish() {
        process.waitUntilExit()
        while nextLine() != nil {}
    }

    /// What the child wrote to stderr (read once it has ended).
    var errorOutput: String {
        String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    /// The indices of the `ok <i>` lines read so far.
    var acknowledged: [Int] {
        lines.compactMap { line in line.hasPrefix("ok ") ? Int(line.dropFirst(3)) : nil }
    }
}

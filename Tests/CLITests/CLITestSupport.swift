import ApexTestSupport
import Foundation
import Testing

/// What one run of `apex-keychain` gave: its exit code and everything it wrote.
struct CLIResult: Sendable {
    /// The exit code (or the signal number, if it was killed).
    var status: Int32
    /// Everything written to stdout, byte for byte.
    var stdout: Data
    /// Everything written to stderr, byte for byte.
    var stderr: Data

    /// stdout as UTF-8 text.
    var out: String { String(decoding: stdout, as: UTF8.self) }
    /// stderr as UTF-8 text.
    var err: String { String(decoding: stderr, as: UTF8.self) }
    /// stderr without the verdict a text report ends with: what else the tool said (warnings, errors).
    var messages: String { split.messages }
    /// The verdict on stderr (its `verdict: …` line and the indented lines after it), or nil when there is none.
    var verdict: String? { split.verdict }

    private var split: (messages: String, verdict: String?) {
        var messages = ""
        var verdict: String?
        var inVerdict = false
        for line in err.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if line.hasPrefix("verdict: ") {
                inVerdict = true
                verdict = (verdict ?? "") + line + "\n"
            } else if inVerdict, line.hasPrefix("  ") {
                verdict = (verdict ?? "") + line + "\n"
            } else {
                inVerdict = false
                messages += line + "\n"
            }
        }
        if !err.hasSuffix("\n") { messages += err.split(separator: "\n", omittingEmptySubsequences: false).last ?? "" }
        return (messages, verdict)
    }
}

/// The built `apex-keychain` binary: it sits in the products directory, which holds the running test bundle.
enum CLIBinary {
    static let url: URL? = locate()

    /// Walks up from the test bundle and the test executable until a folder holds `apex-keychain`.
    private static func locate() -> URL? {
        var starts = [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])]
        starts += Bundle.allBundles.map(\.bundleURL)
        for start in starts {
            var folder = start.resolvingSymlinksInPath()
            for _ in 0..<6 {
                let candidate = folder.appendingPathComponent("apex-keychain")
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory),
                    !isDirectory.boolValue,
                    FileManager.default.isExecutableFile(atPath: candidate.path)
                {
                    return candidate
                }
                folder = folder.deletingLastPathComponent()
            }
        }
        return nil
    }
}

/// A temporary folder for one test, removed when the test ends, and the runner of the tool inside it.
final class Sandbox: Sendable {
    /// The folder, removed when the sandbox goes.
    let folder: ScratchFolder

    /// The folder's URL.
    var url: URL { folder.url }

    init() throws { folder = try ScratchFolder("cli") }

    /// The absolute path of a file in the folder.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes a file in the folder and returns its path.
    @discardableResult
    func write(_ name: String, _ contents: Data) throws -> String {
        try contents.write(to: url.appendingPathComponent(name))
        return path(name)
    }

    /// Writes a text file in the folder and returns its path.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String { try write(name, Data(text.utf8)) }

    /// Writes a file only its owner can read (mode 0600, as a passphrase file must be) and returns its path.
    @discardableResult
    func writeSecret(_ name: String, _ text: String) throws -> String {
        let path = try write(name, text)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        return path
    }

    /// Runs `apex-keychain` with `arguments`, `stdin` as its standard input, in this folder.
    /// - Parameters:
    ///   - stdinFile: a file to read stdin from instead of `stdin` (`/dev/zero`).
    ///   - launcher: a program and its arguments to run the tool through (default: `setsid -w`, without a
    ///     controlling terminal).
    ///   - environment: variables to set (or replace) in the tool's environment.
    func run(
        _ arguments: [String], stdin: Data = Data(), stdinFile: String? = nil, launcher: [String] = [],
        environment: [String: String] = [:]
    ) async throws -> CLIResult {
        let binary = try #require(CLIBinary.url, "apex-keychain was not found beside the test bundle")
        let io = url.appendingPathComponent(".io-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: io, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: io) }
        let inURL = io.appendingPathComponent("stdin")
        let outURL = io.appendingPathComponent("stdout")
        let errURL = io.appendingPathComponent("stderr")
        try stdin.write(to: inURL)
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        let input = try FileHandle(forReadingFrom: stdinFile.map(URL.init(fileURLWithPath:)) ?? inURL)
        let output = try FileHandle(forWritingTo: outURL)
        let error = try FileHandle(forWritingTo: errURL)
        defer {
            try? input.close()
            try? output.close()
            try? error.close()
        }

        let process = Process()
        // In a session of its own, the tool has no controlling terminal even when the tests run in one: its text
        // is not fitted to that terminal's width (util-linux's setsid execs in place, so the status is the tool's).
        let detached = FileManager.default.isExecutableFile(atPath: "/usr/bin/setsid")
        let launcher = launcher.isEmpty && detached ? ["/usr/bin/setsid", "-w"] : launcher
        if let program = launcher.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = Array(launcher.dropFirst()) + [binary.path] + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
        process.currentDirectoryURL = url
        // The text output fits $COLUMNS when it is set: a test's output does not depend on the shell it runs from.
        var inherited = ProcessInfo.processInfo.environment
        inherited["COLUMNS"] = nil
        process.environment = inherited.merging(environment) { $1 }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        return CLIResult(status: status, stdout: try Data(contentsOf: outURL), stderr: try Data(contentsOf: errURL))
    }

    /// Runs `store init` for a key-file store in this folder and returns the store's path.
    func initStore(_ name: String = "store.db", device: String? = nil) async throws -> String {
        let store = path(name)
        let result = try await run(["store", "init", "--store", store] + (device.map { ["--device", $0] } ?? []))
        try #require(result.status == 0, "store init failed: \(result.err)")
        return store
    }

    /// Runs `store set`, requiring success.
    func set(_ store: String, _ key: String, _ value: Data, _ options: [String] = []) async throws {
        let result = try await run(["store", "set", "--store", store] + options + ["--", key], stdin: value)
        try #require(result.status == 0, "store set failed: \(result.err)")
    }

    /// Runs `store set` with a string value, requiring success.
    func set(_ store: String, _ key: String, _ value: String, _ options: [String] = []) async throws {
        try await set(store, key, Data(value.utf8), options)
    }
}

/// The golden files: stdout of the tool as it must stay.
let goldenFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

/// Compares `actual` with the golden file `name`. `APEX_UPDATE_GOLDEN=1` rewrites the file from `actual` instead,
/// and fails the test so that the new file is read before it is committed.
func expectGolden(_ actual: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let url = goldenFolder.appendingPathComponent(name)
    if ProcessInfo.processInfo.environment["APEX_UPDATE_GOLDEN"] == "1" {
        try Data(actual.utf8).write(to: url)
        Issue.record(
            "rewrote \(name): read it, then run again without APEX_UPDATE_GOLDEN", sourceLocation: sourceLocation)
        return
    }
    let expected = try String(contentsOf: url, encoding: .utf8)
    #expect(actual == expected, "stdout differs from Golden/\(name)", sourceLocation: sourceLocation)
}

/// A value distinctive enough that finding it in any output proves a leak.
let canary = "CANARY-7f3e9b1d-do-not-print"

/// Whether `text` is an ISO 8601 UTC time with milliseconds (`2026-01-01T00:00:00.000Z`).
func isISO8601(_ text: Substring) -> Bool {
    text.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil
}

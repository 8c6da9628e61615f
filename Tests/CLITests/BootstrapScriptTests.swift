import ApexTestSupport
import Foundation
import Testing

/// `scripts/bootstrap` (issue 31): on macOS it says what to install with Homebrew instead of calling apt-get, and
/// fails while pkg-config can't find the libraries; on Linux it installs what dpkg says is missing, as CI needs.
///
/// The script runs with a PATH whose first folder fakes `uname` (the system it reports), the package tools
/// (`apt-get`, `dpkg-query`, `sudo`), `pkg-config` and `swift`; each fake writes its name and arguments to a log.
@Suite("scripts/bootstrap")
struct BootstrapScriptTests {
    let folder: ScratchFolder

    init() throws { folder = try ScratchFolder("bootstrap") }

    /// What one run did: its exit status, its stderr, and the faked commands it called, one line each.
    struct Run {
        var status: Int32
        var err: String
        var calls: [String]
    }

    /// Runs the script on a faked `system` (`Darwin`, `Linux`), with a `pkg-config` that finds the libraries or
    /// not, and a `dpkg-query` that says each package is installed or not.
    func run(system: String, pkgConfigFinds: Bool, dpkgInstalled: Bool) throws -> Run {
        let bin = folder.url.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let log = folder.url.appendingPathComponent("calls").path
        let record = "echo \"$(basename \"$0\") $*\" >> '\(log)'"
        let fakes = [
            "uname": "echo \(system)",
            "apt-get": "exit 0",
            "dpkg-query": dpkgInstalled ? "printf 'install ok installed'" : "printf 'unknown ok not-installed'",
            "sudo": "exec \"$@\"",
            "pkg-config": pkgConfigFinds ? "exit 0" : "exit 1",
            "swift": "exit 0",
        ]
        for (name, body) in fakes {
            let path = bin.appendingPathComponent(name).path
            try Data("#!/bin/sh\n\(record)\n\(body)\n".utf8).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Repository.root.appendingPathComponent("scripts/bootstrap").path]
        process.environment = ["PATH": "\(bin.path):/usr/bin:/bin", "HOME": folder.url.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let err = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let calls = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return Run(
            status: process.terminationStatus, err: err, calls: calls.split(separator: "\n").map(String.init))
    }

    /// The calls of the package tools: none may happen on macOS.
    static func packageCalls(_ run: Run) -> [String] {
        run.calls.filter { $0.hasPrefix("apt-get") || $0.hasPrefix("dpkg-query") || $0.hasPrefix("sudo") }
    }

    @Test("on macOS without the libraries: no apt-get, the brew line, exit 1")
    func macOSWithoutLibraries() throws {
        let run = try run(system: "Darwin", pkgConfigFinds: false, dpkgInstalled: false)
        #expect(run.status == 1, "\(run.err)")
        #expect(Self.packageCalls(run) == [], "\(run.calls)")
        #expect(run.err.contains("\n  brew install libsodium sqlite libxml2 nettle pkg-config\n"), "\(run.err)")
        #expect(run.err.contains("not found: sqlite3 libsodium libxml-2.0 nettle"), "\(run.err)")
        #expect(run.err.contains("Xcode"))
    }

    @Test("on macOS with the libraries pkg-config finds: no apt-get, exit 0, nothing said")
    func macOSWithLibraries() throws {
        let run = try run(system: "Darwin", pkgConfigFinds: true, dpkgInstalled: false)
        #expect(run.status == 0, "\(run.err)")
        #expect(Self.packageCalls(run) == [], "\(run.calls)")
        #expect(run.err == "")
    }

    @Test("on Linux: the packages dpkg lacks are installed with apt-get; none when all are there")
    func linux() throws {
        let missing = try run(system: "Linux", pkgConfigFinds: false, dpkgInstalled: false)
        #expect(missing.status == 0, "\(missing.err)")
        let apt = missing.calls.filter { $0.hasPrefix("apt-get") }
        #expect(
            apt == [
                "apt-get update -qq",
                "apt-get install -y -qq libsodium-dev libsqlite3-dev libxml2-dev nettle-dev pkg-config",
            ],
            "\(missing.calls)")
        #expect(
            missing.err.contains("bootstrap: installing libsodium-dev libsqlite3-dev libxml2-dev nettle-dev pkg-config")
        )
        #expect(!missing.err.contains("brew"))

        try FileManager.default.removeItem(atPath: folder.url.appendingPathComponent("calls").path)
        let present = try run(system: "Linux", pkgConfigFinds: false, dpkgInstalled: true)
        #expect(present.status == 0, "\(present.err)")
        #expect(present.calls.filter { $0.hasPrefix("apt-get") } == [], "\(present.calls)")
        #expect(present.calls.filter { $0.hasPrefix("dpkg-query") }.count == 5)
    }
}

import Foundation

/// A fresh folder for one test under the system's temporary folder, removed with everything in it when the last
/// reference to it goes (a suite's instance, for the tests of that instance).
///
/// Its name is `apxk-<purpose>-<UUID>`: unique in every process, so tests that run in parallel, in one process or
/// in several, never meet in it.
package final class ScratchFolder: Sendable {
    /// The folder.
    package let url: URL

    /// Creates the folder; `purpose` goes into its name, to tell whose it is when one is left behind.
    package init(_ purpose: String = "test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("apxk-\(purpose)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The URL of a file in the folder.
    package func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// The absolute path of a file in the folder.
    package func path(_ name: String) -> String { file(name).path }

    /// The names of the files in the folder, hidden ones included, sorted.
    package func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    /// A new, empty folder under the test process's own (one per process, removed with everything in it when the
    /// process exits): for a database a test hands on and never removes itself.
    package static func perProcess() throws -> URL {
        let folder = processRoot.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// The test process's folder: its path is known before the process ends, so `atexit` can remove it.
    private static let processRoot: URL = {
        atexit { try? FileManager.default.removeItem(at: ScratchFolder.processRootURL) }
        return processRootURL
    }()

    /// The path of ``processRoot``, by process id (a C callback can't capture it).
    private static var processRootURL: URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("apxk-tests-\(getpid())")
    }
}

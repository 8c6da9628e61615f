import Foundation

/// Files and folders that even root can't change (`chattr +i`), for the tests of what the tool does when it can't
/// write; and whether this machine can make them (root, a file system with the flag, `chattr` installed).
package enum ImmutableFiles {
    /// Sets (`+i`) or clears (`-i`) the immutable flag of `path`; whether `chattr` succeeded.
    @discardableResult
    package static func chattr(_ flag: String, _ path: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        process.arguments = [flag, path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// Whether this machine can make a folder immutable, so that no file can be created in it, even by root.
    package static let foldersAvailable: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr"),
            let scratch = try? ScratchFolder("chattr-folder-probe")
        else { return false }
        let probe = scratch.path("folder")
        guard (try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)) != nil,
            chattr("+i", probe)
        else { return false }
        let blocked = !FileManager.default.createFile(atPath: probe + "/x", contents: Data())
        chattr("-i", probe)
        return blocked
    }()

    /// Whether this machine can make a file immutable, so that no one can write it, even root.
    package static let filesAvailable: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr"),
            let scratch = try? ScratchFolder("chattr-file-probe")
        else { return false }
        let probe = scratch.path("file")
        guard FileManager.default.createFile(atPath: probe, contents: Data()), chattr("+i", probe) else {
            return false
        }
        let blocked =
            FileManager.default.isWritableFile(atPath: probe) == false
            || (try? Data("x".utf8).write(to: URL(fileURLWithPath: probe))) == nil
        chattr("-i", probe)
        return blocked
    }()
}

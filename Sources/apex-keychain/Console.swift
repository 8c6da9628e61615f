import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The tool's standard streams and terminal: results to stdout, errors to stderr, values from stdin, and
/// passphrases from the controlling terminal.
enum Console {
    /// Writes text to stdout.
    /// - Throws: an I/O error (exit 74) when stdout can't be written.
    static func write(_ text: String) throws(CLIError) { try write(Data(text.utf8)) }

    /// Writes bytes to stdout exactly as they are.
    /// - Throws: an I/O error (exit 74) when stdout can't be written.
    static func write(_ data: Data) throws(CLIError) {
        do {
            try FileHandle.standardOutput.write(contentsOf: data)
        } catch {
            throw CLIError(.ioError, "can't write to stdout: \(error.localizedDescription)")
        }
    }

    /// Writes text to stderr; a failure to do so can't be reported anywhere, so it is ignored.
    static func writeError(_ text: String) { try? FileHandle.standardError.write(contentsOf: Data(text.utf8)) }

    /// All of stdin, byte for byte.
    /// - Throws: an I/O error (exit 74) when stdin can't be read.
    static func readStandardInput() throws(CLIError) -> Data {
        do {
            return try FileHandle.standardInput.readToEnd() ?? Data()
        } catch {
            throw CLIError(.ioError, "can't read the value from stdin: \(error.localizedDescription)")
        }
    }

    /// The contents of a file the user named (a passphrase file).
    /// - Parameter role: what the file is, for the message (`passphrase file`).
    /// - Throws: exit 66 when it does not exist or can't be read; the message names the file and the cause.
    static func readFile(_ path: String, role: String) throws(CLIError) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CLIError(.noInput, "can't read the \(role) \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var contents = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { break }
            guard count > 0 else {
                throw CLIError(.noInput, "can't read the \(role) \(path): \(String(cString: strerror(errno)))")
            }
            contents.append(contentsOf: buffer[0..<count])
        }
        for index in buffer.indices { buffer[index] = 0 }
        return contents
    }
}

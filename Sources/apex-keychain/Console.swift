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

    /// Writes bytes to stdout as `produce` hands them over, piece by piece (a 100k-item JSON report is never held
    /// whole).
    /// - Throws: an I/O error (exit 74) when stdout can't be written.
    static func write(streaming produce: (@escaping (Data) throws -> Void) throws -> Void) throws(CLIError) {
        do {
            try produce { data throws(CLIError) in try write(data) }
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError(.ioError, "can't write to stdout: \(error.localizedDescription)")
        }
    }

    /// Writes text to stderr; a failure to do so can't be reported anywhere, so it is ignored.
    static func writeError(_ text: String) { try? FileHandle.standardError.write(contentsOf: Data(text.utf8)) }

    /// All of stdin, byte for byte, when it holds at most `limit` bytes: never more than `limit + 1` bytes are
    /// read, so an endless stdin (`< /dev/zero`) ends the read.
    /// - Throws: an I/O error (exit 74) when stdin can't be read; a usage error (exit 64) past `limit`.
    static func readStandardInput(limit: Int) throws(CLIError) -> Data {
        do throws(ReadFailure) {
            return try read(STDIN_FILENO, limit: limit)
        } catch {
            switch error {
            case .tooLarge:
                throw CLIError(
                    .usage,
                    "the value read from stdin is larger than \(byteCount(limit)), the largest a store holds; nothing was written"
                )
            case .failed(let code):
                throw CLIError(.ioError, "can't read the value from stdin: \(String(cString: strerror(code)))")
            }
        }
    }

    /// The contents of a secret file the user named (a passphrase file), when it holds at most `limit` bytes.
    ///
    /// The file is opened once, and its mode is checked with `fstat` on the descriptor its bytes are read from
    /// (no swap in between): a regular file or a named pipe that group or others can access is refused, as a
    /// key file is. A device (`/dev/stdin` on a terminal) has no contents of its own to protect, and is read.
    /// - Parameter role: what the file is, for the message (`passphrase file`).
    /// - Throws: exit 66 when it does not exist or can't be read, 77 when others can access it, 64 when it holds
    ///   more than `limit` bytes; the message names the file and the cause.
    static func readSecretFile(_ path: String, role: String, limit: Int) throws(CLIError) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CLIError(.noInput, "can't read the \(role) \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw CLIError(.noInput, "can't read the \(role) \(path): \(String(cString: strerror(errno)))")
        }
        let type = info.st_mode & S_IFMT
        if type == S_IFREG || type == S_IFIFO, info.st_mode & 0o077 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw CLIError(
                .permissionDenied, "the \(role) \(path) is accessible by others (mode \(mode)); run: chmod 600 \(path)")
        }
        do throws(ReadFailure) {
            return try read(fd, limit: limit)
        } catch {
            switch error {
            case .tooLarge: throw CLIError(.usage, "the \(role) \(path) holds more than \(byteCount(limit))")
            case .failed(let code):
                throw CLIError(.noInput, "can't read the \(role) \(path): \(String(cString: strerror(code)))")
            }
        }
    }

    /// `1 item`, `2 items`: a count and its noun, singular for one (`plural` when adding an s won't do).
    static func counted(_ count: Int, _ noun: String, plural: String? = nil) -> String {
        count == 1 ? "1 \(noun)" : "\(count) \(plural ?? noun + "s")"
    }

    /// `1024 bytes (1 KiB)`, `16777216 bytes (16 MiB)`.
    static func byteCount(_ count: Int) -> String {
        if count >= 1 << 20, count % (1 << 20) == 0 { return "\(count) bytes (\(count >> 20) MiB)" }
        if count >= 1 << 10, count % (1 << 10) == 0 { return "\(count) bytes (\(count >> 10) KiB)" }
        return "\(count) bytes"
    }

    private enum ReadFailure: Error {
        case tooLarge
        case failed(Int32)
    }

    /// Reads `fd` to its end, or until it has given more than `limit` bytes. What was read is wiped when the read
    /// fails (it may be a secret).
    private static func read(_ fd: Int32, limit: Int) throws(ReadFailure) -> Data {
        var contents = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        defer { for index in buffer.indices { buffer[index] = 0 } }
        while true {
            let wanted = min(buffer.count, limit + 1 - contents.count)
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, wanted) }
            if count == 0 { return contents }
            if count < 0 {
                if errno == EINTR { continue }
                let code = errno
                contents.resetBytes(in: 0..<contents.count)
                throw .failed(code)
            }
            contents.append(contentsOf: buffer[0..<count])
            if contents.count > limit {
                contents.resetBytes(in: 0..<contents.count)
                throw .tooLarge
            }
        }
    }
}

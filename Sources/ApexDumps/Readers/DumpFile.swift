import Foundation

/// A dump file opened for reading: a regular file, opened without blocking so that a FIFO can't hang the reader.
///
/// A read that would block is an error, never a wait or a retry: a kernel file such as `/proc/kmsg` is a regular
/// file whose reads say `EAGAIN` until the kernel has something to say, and retrying them spun forever. The file
/// is read to its end or to the caller's limit, whichever comes first, so a file that never ends is refused as
/// too large rather than read forever.
final class DumpFile {
    private var descriptor: Int32
    private let path: String
    /// What the messages call the file: `the file`, or a companion such as `its -wal file`.
    private let what: String
    /// The size when the file was opened.
    private(set) var size = 0
    /// Whether a read that would block waits (a pipe that has no bytes yet) rather than failing.
    private var waitsForInput = false

    init(path: String) throws(DumpError) {
        self.path = path
        what = "the file"
        descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw DumpError(
                .unreadable, path: path,
                code == ENOENT ? "no such file" : "cannot open the file: \(String(cString: strerror(code)))")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            closeFile()
            throw DumpError(.unreadable, path: path, "cannot read the file: \(String(cString: strerror(code)))")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: size = Int(info.st_size)
        case S_IFDIR:
            closeFile()
            throw DumpError(.unreadable, path: path, "a folder, not a file")
        default:
            closeFile()
            throw DumpError(.unreadable, path: path, "not a regular file")
        }
    }

    /// Takes over `descriptor`, already open (and checked by the caller), as the file `path` of `size` bytes;
    /// `what` names it in messages. With `waitsForInput` (a pipe), a read that would block waits for input
    /// instead of failing.
    init(descriptor: Int32, path: String, size: Int, what: String = "the file", waitsForInput: Bool = false) {
        self.descriptor = descriptor
        self.path = path
        self.size = size
        self.what = what
        self.waitsForInput = waitsForInput
    }

    deinit { closeFile() }

    /// Up to `count` more bytes: fewer only at the end of the file.
    func readBytes(upTo count: Int) throws(DumpError) -> Data {
        var out = Data()
        try read(upTo: count, appendingTo: &out)
        return out
    }

    /// Reads up to `count` more bytes straight onto the end of `out` (room for the rest of the file as opened,
    /// growing only if the file has grown since); fewer only at the end of the file.
    func read(upTo count: Int, appendingTo out: inout Data) throws(DumpError) {
        let start = out.count
        let limit = start + count
        var filled = start
        // One byte more than the file's size, to see the end of file (or growth) without another allocation.
        let room = start + min(count, max(size - start, 0) + 1)
        out.reserveCapacity(room)
        out.count = room
        defer { out.count = filled }
        while filled < limit {
            if filled == out.count { out.count = min(limit, start + max(2 * (out.count - start), 1 << 20)) }
            let room = out.count - filled
            let got = try out.withUnsafeMutableBytes { bytes in
                Result { () throws(DumpError) in try readSome(into: bytes.baseAddress! + filled, count: room) }
            }.get()
            if got == 0 { break }
            filled += got
        }
    }

    /// Fills `buffer` from the file; fewer bytes only at the end of the file. The count read.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(DumpError) -> Int {
        var filled = 0
        while filled < buffer.count {
            let got = try readSome(into: buffer.baseAddress! + filled, count: buffer.count - filled)
            if got == 0 { break }
            filled += got
        }
        return filled
    }

    /// One `read` of up to `count` bytes: 0 at the end of the file, retried when a signal interrupts it.
    ///
    /// - Throws: `DumpError/Kind/unreadable` when the read fails, or would block (`EAGAIN`, `EWOULDBLOCK`) and
    ///   the file does not wait for input.
    private func readSome(into pointer: UnsafeMutableRawPointer, count: Int) throws(DumpError) -> Int {
        while true {
            let got = Glibc.read(descriptor, pointer, count)
            if got >= 0 { return got }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK {
                if waitsForInput {
                    var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    _ = poll(&ready, 1, -1)
                    continue
                }
                throw DumpError(
                    .unreadable, path: path,
                    "reading \(what) would block: it is not a file that can be read to its end (a device or kernel file such as /proc/kmsg?)"
                )
            }
            throw DumpError(.unreadable, path: path, "cannot read \(what): \(String(cString: strerror(code)))")
        }
    }

    func closeFile() {
        if descriptor >= 0 {
            _ = close(descriptor)
            descriptor = -1
        }
    }
}

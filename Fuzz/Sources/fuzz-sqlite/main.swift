import ApexDumps
import Foundation

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

// KeychainSQLiteReader.read(path:) needs a file: each input is written to the same temporary file
// (any -wal/-shm left behind is removed first).
let fuzzPath = NSTemporaryDirectory() + "apex-fuzz-sqlite-\(getpid()).db"

let fuzzOne: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { bytes, count in
    let data = bytes.map { Data(bytes: $0, count: count) } ?? Data()
    for suffix in ["-wal", "-shm", "-journal"] { unlink(fuzzPath + suffix) }
    guard FileManager.default.createFile(atPath: fuzzPath, contents: data) else { return 0 }
    _ = try? KeychainSQLiteReader.read(path: fuzzPath)
    return 0
}

var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOne))

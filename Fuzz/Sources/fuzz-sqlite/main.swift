import ApexDumps
import Foundation
import FuzzDriver

// KeychainSQLiteReader.read(path:) needs a file: each input is written to the same temporary file
// (any -wal/-shm left behind is removed first).
let fuzzPath = NSTemporaryDirectory() + "apex-fuzz-sqlite-\(getpid()).db"

let fuzzOne: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { bytes, count in
    let data = fuzzInput(bytes, count)
    for suffix in ["-wal", "-shm", "-journal"] { unlink(fuzzPath + suffix) }
    guard FileManager.default.createFile(atPath: fuzzPath, contents: data) else { return 0 }
    _ = try? KeychainSQLiteReader.read(path: fuzzPath)
    return 0
}

runFuzzer(fuzzOne)

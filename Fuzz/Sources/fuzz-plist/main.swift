import ApexDumps
import Foundation
import FuzzDriver

// IOSPlistReader.read: any input must return records or throw DumpError.
let fuzzOne: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { bytes, count in
    let data = fuzzInput(bytes, count)
    _ = try? IOSPlistReader.read(data, path: "fuzz.plist")
    return 0
}

runFuzzer(fuzzOne)

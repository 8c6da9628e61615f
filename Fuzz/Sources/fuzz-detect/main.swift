import ApexDumps
import Foundation
import FuzzDriver

// DumpReader.detect: must classify any prefix without crashing.
let fuzzOne: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { bytes, count in
    let data = fuzzInput(bytes, count)
    _ = DumpReader.detect(data)
    return 0
}

runFuzzer(fuzzOne)

import ApexDumps
import Foundation
import FuzzDriver

// ObjectionJSONReader.read: any input must return records or throw DumpError.
let fuzzOne: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { bytes, count in
    let data = fuzzInput(bytes, count)
    _ = try? ObjectionJSONReader.read(data, path: "fuzz.json")
    return 0
}

runFuzzer(fuzzOne)

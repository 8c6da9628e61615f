import ApexDumps
import Foundation
import FuzzDriver

// DataStoreReader.read: any input must return entries or throw DumpError.
let fuzzOne: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { bytes, count in
    let data = fuzzInput(bytes, count)
    _ = try? DataStoreReader.read(data, path: "fuzz.preferences_pb")
    return 0
}

runFuzzer(fuzzOne)

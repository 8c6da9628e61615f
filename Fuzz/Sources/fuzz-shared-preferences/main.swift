import ApexDumps
import Foundation
import FuzzDriver

// SharedPreferencesReader.read: any input must return entries or throw DumpError.
let fuzzOne: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { bytes, count in
    let data = fuzzInput(bytes, count)
    _ = try? SharedPreferencesReader.read(data, path: "fuzz.xml")
    return 0
}

runFuzzer(fuzzOne)

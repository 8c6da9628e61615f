import ApexDumps
import Foundation
import FuzzDriver

// AccessControlDecoder: the input is tried both as DER and, when it is UTF-8, as the printed text form.
let fuzzOne: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { bytes, count in
    let data = fuzzInput(bytes, count)
    _ = try? AccessControlDecoder.decode(der: data)
    if let text = String(data: data, encoding: .utf8) {
        _ = AccessControlDecoder.decode(text: text)
    }
    return 0
}

runFuzzer(fuzzOne)

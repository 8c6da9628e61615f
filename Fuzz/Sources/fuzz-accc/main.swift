import ApexDumps
import Foundation

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

// AccessControlDecoder: the input is tried both as DER and, when it is UTF-8, as the printed text form.
let fuzzOne: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { bytes, count in
    let data = bytes.map { Data(bytes: $0, count: count) } ?? Data()
    _ = try? AccessControlDecoder.decode(der: data)
    if let text = String(data: data, encoding: .utf8) {
        _ = AccessControlDecoder.decode(text: text)
    }
    return 0
}

var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOne))

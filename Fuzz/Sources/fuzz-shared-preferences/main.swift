import ApexDumps
import Foundation

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

// SharedPreferencesReader.read: any input must return entries or throw DumpError.
let fuzzOne: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { bytes, count in
    let data = bytes.map { Data(bytes: $0, count: count) } ?? Data()
    _ = try? SharedPreferencesReader.read(data, path: "fuzz.xml")
    return 0
}

var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOne))

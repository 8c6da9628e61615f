import ApexDumps
import FuzzDriver

// An encrypted backup's keybag and keychain items: the input is read as a keybag (its class keys unwrapped under
// a fixed key, never derived: the rounds are the input's) and as a version-3 item blob (opened with fixed class
// keys).
let classKeys: [UInt32: [UInt8]] = Dictionary(
    uniqueKeysWithValues: (6...11).map { (UInt32($0), [UInt8](repeating: UInt8($0), count: 32)) })
let fuzzOne: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { bytes, count in
    let input = [UInt8](fuzzInput(bytes, count))
    if let keybag = try? BackupKeybag(input) {
        _ = try? keybag.classKeys(passwordKey: [UInt8](repeating: 7, count: 32))
    }
    if let blob = try? BackupItemBlob(input) {
        _ = try? blob.open(classKeys: classKeys)
        _ = blob.bytes
    }
    return 0
}

runFuzzer(fuzzOne)

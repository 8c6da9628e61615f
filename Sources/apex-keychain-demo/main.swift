// A small walk through the core on a bundled sample: writes each item of a JSON file into an in-memory
// keychain on a simulated device, reads it back, and prints what happened. It prints no value.
import ApexKeychain
import Foundation

struct Sample: Decodable {
    struct DeviceProfile: Decodable {
        var platform: String
        var osMajor: Int
        var biometry: BiometryType?
        var passcodeSet: Bool
    }
    struct Entry: Decodable {
        var service: String
        var key: String?
        var string: String?
        var bytesBase64: String?
        var credentials: Credentials?
        var server: String?
        var options: SetOptions?
    }
    var device: DeviceProfile
    var items: [Entry]
}

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("apex-keychain-demo: \(message)\n".utf8))
    exit(code)
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let path = arguments.first else {
    fail("usage: apex-keychain-demo SAMPLE.json", code: 64)
}
let sample: Sample
do {
    sample = try JSONDecoder().decode(Sample.self, from: try Data(contentsOf: URL(fileURLWithPath: path)))
} catch let error as KeychainError {
    fail("\(path): \(error)", code: 65)
} catch let error as CocoaError where error.code == .fileReadNoSuchFile {
    fail("\(path): no such file", code: 66)
} catch {
    fail("\(path): not a sample file (\(error))", code: 65)
}

let platform: Platform =
    switch sample.device.platform {
    case "ios": .iOS(major: sample.device.osMajor)
    case "android": .android(apiLevel: sample.device.osMajor)
    default: .linux
    }
let device = SimulatedDevice(
    platform: platform, biometry: sample.device.biometry, passcodeSet: sample.device.passcodeSet)
let database = InMemoryKeychainDatabase()

func row(_ columns: [String]) -> String {
    let widths = [16, 30, 12, 30, 30, 26]
    return zip(columns, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: " ")
}

print(
    "device: \(platform), biometry: \(sample.device.biometry?.rawValue ?? "none"), passcode: \(sample.device.passcodeSet)"
)
print(row(["SERVICE", "KEY", "KIND", "ACCESSIBLE", "ACCESS CONTROL", "RESULT"]))
var failures = 0
for entry in sample.items {
    let options = entry.options ?? SetOptions()
    let key = entry.key ?? (entry.server.map { "credentials:\($0)" } ?? "credentials")
    let kind = entry.credentials != nil ? "credentials" : (entry.bytesBase64 != nil ? "bytes" : "string")
    var result: String
    do {
        let keychain = try Keychain(KeychainOptions(service: entry.service), database: database, device: device)
        if let credentials = entry.credentials {
            try await keychain.setCredentials(
                credentials,
                CredentialsOptions(
                    server: entry.server, accessible: options.accessible, accessControl: options.accessControl,
                    authValidity: options.authValidity, synchronizable: options.synchronizable))
            result =
                try await keychain.getCredentials(CredentialsGetOptions(server: entry.server)) == credentials
                ? "written, verified" : "written, MISMATCH"
        } else if let base64 = entry.bytesBase64 {
            guard let bytes = Data(base64Encoded: base64) else { throw KeychainError(.INVALID_ARGUMENT, "bad base64") }
            try await keychain.setBytes(key, bytes, options)
            result = try await keychain.getBytes(key) == bytes ? "written, verified" : "written, MISMATCH"
        } else {
            let value = entry.string ?? ""
            try await keychain.setItem(key, value, options)
            result = try await keychain.getItem(key) == value ? "written, verified" : "written, MISMATCH"
        }
        if result.hasSuffix("MISMATCH") { failures += 1 }
    } catch let error as KeychainError {
        result = "refused: \(error.code.rawValue)"
    } catch {
        result = "refused: \(error)"
    }
    let shownKey = key.unicodeScalars.map { $0.value < 0x20 ? "\\u{\(String($0.value, radix: 16))}" : String($0) }
        .joined()
    print(
        row([
            entry.service, shownKey, kind, options.accessible?.rawValue ?? "(default)",
            options.accessControl?.rawValue ?? "(default)", result,
        ]))
}
print("prompts shown: \(device.promptCount)")
exit(failures == 0 ? 0 : 1)

import Foundation
import Testing

/// Issue 31 (text a person reads): at 80 columns, words broke mid-token (`whenPasscodeSetThisDe` / `viceOnly`).
/// The text wraps at spaces only; a token longer than its column goes on a line of its own, whole.
@Suite("Text wraps between tokens, never inside one")
struct TextWrapTests {
    /// Every bundled sample dump (a file the tool refuses when named, such as an app's own preferences, is left
    /// out), and every sample folder.
    static let samples: [String] = {
        let libraries =
            ["expo-secure-store", "react-native-keychain", "react-native-sensitive-info"]
            + ["react-native-encrypted-storage"]
        var paths: [String] = []
        for library in libraries {
            let root = samplesFolder.appendingPathComponent(library)
            let folders = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
            for folder in folders.sorted() {
                paths.append(root.appendingPathComponent(folder).path)
                let files = FileManager.default.enumerator(atPath: root.appendingPathComponent(folder).path)
                while let file = files?.nextObject() as? String {
                    let path = root.appendingPathComponent(folder).appendingPathComponent(file).path
                    var isFolder: ObjCBool = false
                    if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue {
                        paths.append(path)
                    }
                }
            }
        }
        return paths
    }()

    /// The words of `text`: its runs of characters without whitespace.
    static func tokens(_ text: String) -> [Substring] { text.split(whereSeparator: \.isWhitespace) }

    /// The labels a row's last column takes when it goes under the row (its header is the column's name).
    static let labels: Set<Substring> = ["reason:", "protection:"]

    @Test("the samples are found")
    func samplesFound() {
        #expect(Self.samples.count > 30, "\(Self.samples)")
    }

    @Test("inspect and migrate --dry-run at 80 columns: every token is one of the unwrapped text's, whole")
    func noTokenBroken() async throws {
        let sandbox = try Sandbox()
        var compared = 0
        for path in Self.samples {
            for command in [["inspect", path], ["migrate", "--dry-run", path]] {
                let unwrapped = try await sandbox.run(command)
                // A named file that is no keychain dump (65) has no text to compare.
                guard !unwrapped.stdout.isEmpty else { continue }
                let wrapped = try await sandbox.run(command, environment: ["COLUMNS": "80"])
                #expect(wrapped.status == unwrapped.status)
                let whole = Set(Self.tokens(unwrapped.out)).union(Self.labels)
                let broken = Self.tokens(wrapped.out).filter { !whole.contains($0) }
                #expect(broken.isEmpty, "\(command.joined(separator: " ")): \(broken.prefix(5))")
                let lines = wrapped.out.split(separator: "\n")
                #expect(lines.count >= unwrapped.out.split(separator: "\n").count)
                compared += 1
            }
        }
        #expect(compared > 50)
    }
}

/// Issue 31 (text a person reads): `inspect` printed 5 to 8 lines of DER hex per item at 80 columns.
@Suite("inspect shows access control as flags, its DER only with --verbose")
struct InspectAccessControlTests {
    @Test(
        "every iOS sample: flags, no hex without --verbose; the DER with it",
        arguments: [
            "react-native-keychain/ios", "expo-secure-store/ios", "react-native-sensitive-info/ios",
            "react-native-encrypted-storage/ios",
        ])
    func flagsNotHex(folder: String) async throws {
        let sandbox = try Sandbox()
        let plain = try await sandbox.run(["inspect", sample(folder)])
        #expect(plain.status == 0)
        #expect(!plain.out.contains("der:") && !plain.out.contains("hex:"), "\(plain.out)")
        #expect(!plain.out.contains("accessControlFlags="))
        let verbose = try await sandbox.run(["inspect", "--verbose", sample(folder)])
        // The raw forms as found too: DER as hex from a plist or SQLite export, objection's words from its JSON.
        #expect(verbose.out.contains("accessControl=der:") || folder.hasPrefix("react-native-encrypted-storage"))
        #expect(verbose.out.contains("accessControl=None") || !folder.hasPrefix("react-native-encrypted-storage"))
        #expect(verbose.out.contains("accessControlFlags="))
    }

    @Test("expo's biometric item: its flags by name")
    func expoFlags() async throws {
        let result = try await Sandbox().run(["inspect", sample("expo-secure-store/ios")])
        let line = try #require(result.out.split(separator: "\n").first { $0.contains("app:auth / authToken") })
        #expect(line.hasSuffix("accessControl=biometryCurrentSet, pdmn=ak, sync=0"), "\(line)")
    }
}

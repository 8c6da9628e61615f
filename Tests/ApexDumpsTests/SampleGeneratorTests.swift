import Foundation
import Testing

@testable import ApexDumps

/// The `dump-samples` executable, built beside this test binary (`APEX_DUMP_SAMPLES` overrides).
enum DumpSamplesTool {
    static let url: URL? = locate()

    private static func locate() -> URL? {
        if let path = ProcessInfo.processInfo.environment["APEX_DUMP_SAMPLES"] { return URL(fileURLWithPath: path) }
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var folder = URL(fileURLWithPath: me).deletingLastPathComponent()
        for _ in 0..<5 {
            let candidate = folder.appendingPathComponent("dump-samples")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        return nil
    }

    /// Runs the tool; returns its exit status and stderr.
    static func run(_ arguments: [String]) throws -> (status: Int32, errors: String) {
        let url = try #require(url, "dump-samples is not built beside the tests; run `swift build` first")
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: errorData, as: UTF8.self))
    }

    /// Generates the samples tree into a fresh folder.
    static func generate(into folder: DumpScratch) throws {
        let result = try run([folder.path])
        try #require(result.status == 0, "dump-samples failed: \(result.errors)")
    }
}

/// One row of the generated README's table: a file and the format it must be detected as.
struct SampleRow: Sendable {
    var path: String
    var format: DumpFormat
    /// False for decoys (`(not a keychain dump)`), which the CLI skips in a folder.
    var isKeychainDump: Bool

    /// The rows of a README.
    static func rows(_ readme: String) -> [SampleRow] {
        readme.split(separator: "\n").compactMap { line -> SampleRow? in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 4, cells[1].hasPrefix("`") else { return nil }
            let path = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let formatCell = cells[2]
            let formatName = formatCell.split(separator: "`").first.map(String.init) ?? ""
            guard let format = DumpFormat(rawValue: formatName) else { return nil }
            return SampleRow(path: path, format: format, isKeychainDump: !formatCell.contains("not a keychain dump"))
        }
    }
}

/// Every file under a folder, by relative path.
private func tree(_ root: String) throws -> [String: Data] {
    var files: [String: Data] = [:]
    let enumerator = FileManager.default.enumerator(atPath: root)
    while let relative = enumerator?.nextObject() as? String {
        var isDirectory: ObjCBool = false
        let full = root + "/" + relative
        if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
            files[relative] = try Data(contentsOf: URL(fileURLWithPath: full))
        }
    }
    return files
}

private let generatedFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Fixtures/generated").path

@Suite("Sample generator", .serialized)
struct SampleGeneratorTests {
    @Test("two runs write byte-identical trees")
    func deterministic() throws {
        let first = try DumpScratch()
        let second = try DumpScratch()
        try DumpSamplesTool.generate(into: first)
        try DumpSamplesTool.generate(into: second)
        let one = try tree(first.path)
        let two = try tree(second.path)
        #expect(!one.isEmpty)
        #expect(one.keys.sorted() == two.keys.sorted())
        for (path, data) in one where two[path] != data {
            Issue.record("\(path) differs between two runs")
        }
    }

    @Test("every generated file is detected as its intended format and read without error")
    func everyFileReads() throws {
        let folder = try DumpScratch()
        try DumpSamplesTool.generate(into: folder)
        let rows = SampleRow.rows(try String(contentsOfFile: folder.path + "/README.md", encoding: .utf8))
        let files = try tree(folder.path)
        // A backup is listed by its Manifest.plist: its other files, and the password beside its folder, are its.
        let backups = rows.filter { $0.format == .encryptedBackup }.map {
            ($0.path as NSString).deletingLastPathComponent
        }
        let unlisted = Set(files.keys).subtracting(["README.md"]).subtracting(rows.map(\.path)).filter { file in
            !backups.contains {
                file.hasPrefix($0 + "/") || file == ($0 as NSString).deletingLastPathComponent + "/password.txt"
            }
        }
        #expect(unlisted.isEmpty, "the README lists every file")
        #expect(!backups.isEmpty)
        for row in rows {
            let path = folder.path + "/" + row.path
            if row.format == .encryptedBackup {
                let backup = (path as NSString).deletingLastPathComponent
                var password = Array(try Data(contentsOf: URL(fileURLWithPath: backup + "/../password.txt")))
                if password.last == UInt8(ascii: "\n") { password.removeLast() }
                let scan = try DumpReader.scan(
                    paths: [path], backups: BackupAccess(password: { [password] _ in password }))
                #expect(scan.dumps.map(\.format) == [.encryptedBackup], "\(row.path)")
                if case .keychain(let records)? = scan.dumps.first?.content {
                    #expect(!records.isEmpty, "\(row.path)")
                }
                continue
            }
            let data = try #require(files[row.path])
            #expect(DumpReader.detect(data) == row.format, "\(row.path)")
            do {
                let dump = try DumpReader.read(path: path)
                #expect(dump.format == row.format, "\(row.path)")
                switch dump.content {
                case .keychain(let records): #expect(!records.isEmpty, "\(row.path)")
                case .preferences(let entries): #expect(!entries.isEmpty, "\(row.path)")
                }
            } catch {
                Issue.record("\(row.path): \(error)")
            }
        }
    }

    @Test("each android folder is an app data folder whose files discovery finds, decoys included")
    func androidFoldersDiscover() throws {
        let folder = try DumpScratch()
        try DumpSamplesTool.generate(into: folder)
        let rows = SampleRow.rows(try String(contentsOfFile: folder.path + "/README.md", encoding: .utf8))
        #expect(rows.contains { !$0.isKeychainDump && $0.path.hasPrefix("react-native-keychain/android/") })
        // react-native-encrypted-storage has one app data folder per version family (android, android-1.0.0, …).
        let encryptedStorage = Set(
            rows.compactMap { row -> String? in
                let parts = row.path.split(separator: "/")
                guard parts.first == "react-native-encrypted-storage", parts[1].hasPrefix("android") else { return nil }
                return "react-native-encrypted-storage/\(parts[1])"
            })
        #expect(encryptedStorage.count == 5)
        for library in ["react-native-keychain", "expo-secure-store", "react-native-sensitive-info"]
            + encryptedStorage.sorted()
        {
            let base = library.contains("/") ? library + "/" : "\(library)/android/"
            // Whether a file holds a library's data is for the importers (the CLI skips the decoys).
            let expected = rows.filter { $0.path.hasPrefix(base) }.map { folder.path + "/" + $0.path }
            #expect(try DumpReader.discover(folder.path + "/" + base) == expected.sorted(), "\(library)")
            let dumps = try DumpReader.readAll(paths: [folder.path + "/" + base])
            #expect(dumps.count == expected.count)
        }
    }

    @Test("the iOS dumps of react-native-keychain hold the same items in every format")
    func iosFormatsAgree() throws {
        let folder = try DumpScratch()
        try DumpSamplesTool.generate(into: folder)
        let base = folder.path + "/react-native-keychain/ios/"
        func summary(_ file: String) throws -> [String] {
            guard case .keychain(let records) = try DumpReader.read(path: base + file).content else { return [] }
            return records.map { record in
                let service = record.service?.text ?? record.server ?? ""
                return "\(record.itemClass)|\(service)|\(record.account?.text ?? "")|\(record.value)"
            }.sorted()
        }
        let plist = try summary("keychain.plist")
        #expect(plist.count == 11)
        #expect(try summary("keychain-binary.plist") == plist)
        #expect(try summary("keychain-export.sqlite") == plist)
    }

    @Test("the DataStore file overlaps the XML it was migrated from")
    func dataStoreOverlapsXML() throws {
        let folder = try DumpScratch()
        try DumpSamplesTool.generate(into: folder)
        let base = folder.path + "/react-native-keychain/android/"
        guard case .preferences(let xml) = try DumpReader.read(path: base + "shared_prefs/RN_KEYCHAIN.xml").content,
            case .preferences(let store) = try DumpReader.read(
                path: base + "files/datastore/RN_KEYCHAIN.preferences_pb"
            ).content
        else {
            Issue.record("not preferences")
            return
        }
        let xmlValues = Dictionary(xml.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
        let storeValues = Dictionary(store.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
        let shared = Set(xmlValues.keys).intersection(storeValues.keys)
        #expect(shared.isSuperset(of: [":u", ":p", ":c", "vault:u", "vault:p", "vault:c"]))
        #expect(xmlValues[":p"] != storeValues[":p"], "the default service was saved again after the migration")
        #expect(xmlValues["vault:p"] == storeValues["vault:p"], "vault was migrated unchanged")
        #expect(storeValues["auth:c"] == .string("KeystoreAESGCM"))
    }

    @Test("react-native-keychain values have their cipher's layout")
    func cipherLayouts() throws {
        let folder = try DumpScratch()
        try DumpSamplesTool.generate(into: folder)
        let base = folder.path + "/react-native-keychain/android/"
        for file in ["shared_prefs/RN_KEYCHAIN.xml", "files/datastore/RN_KEYCHAIN.preferences_pb"] {
            guard case .preferences(let entries) = try DumpReader.read(path: base + file).content else {
                Issue.record("not preferences")
                return
            }
            var values: [String: String] = [:]
            for entry in entries {
                if case .string(let text) = entry.value { values[entry.name] = text }
            }
            for (name, text) in values where name.hasSuffix(":u") || name.hasSuffix(":p") {
                let service = String(name.dropLast(2))
                let cipher = values[service + ":c"] ?? "FacebookConceal"
                let blob = try #require(Data(base64Encoded: text, options: .ignoreUnknownCharacters), "\(file) \(name)")
                #expect(text.contains("\n"), "Base64.DEFAULT ends every line with a newline: \(name)")
                switch cipher {
                case "KeystoreAESCBC": #expect(blob.count > 16 && (blob.count - 16) % 16 == 0, "\(name)")
                case "KeystoreRSAECB": #expect(blob.count == 256, "\(name)")
                case "KeystoreAESGCM", "KeystoreAESGCM_NoAuth": #expect(blob.count > 28, "\(name)")
                case "FacebookConceal": #expect(blob.prefix(2) == Data([1, 2]) && blob.count > 30, "\(name)")
                default: Issue.record("\(name): unexpected cipher \(cipher)")
                }
            }
        }
    }

    @Test("--large writes N-item dumps of both libraries: iOS plists and SQLite, Android prefs")
    func large() throws {
        let folder = try DumpScratch()
        let result = try DumpSamplesTool.run(["--large", "250", folder.path])
        try #require(result.status == 0, "\(result.errors)")
        let dumps = try DumpReader.readAll(paths: [folder.path])
        #expect(
            dumps.map(\.fileName).sorted() == [
                "RN_KEYCHAIN.xml", "crypto.KEY_256.xml", "expo-ios-250-binary.plist", "expo-ios-250.plist",
                "expo-ios-250.sqlite", "rnk-ios-250.plist",
            ])
        for dump in dumps {
            switch dump.content {
            case .keychain(let records):
                #expect(records.count == 250, "\(dump.fileName)")
            case .preferences(let entries) where dump.fileName == "RN_KEYCHAIN.xml":
                #expect(entries.count == 3 * 250, "each credential is :u, :p and :c")
            case .preferences(let entries):
                #expect(entries.map(\.name) == ["cipher_key"])
            }
        }
    }

    @Test("bad arguments are a usage error")
    func usage() throws {
        #expect(try DumpSamplesTool.run([]).status == 64)
        #expect(try DumpSamplesTool.run(["--large", "zero", "/tmp/x"]).status == 64)
    }

    @Test("the committed fixtures are the generator's current output")
    func fixturesAreCurrent() throws {
        let folder = try DumpScratch()
        try DumpSamplesTool.generate(into: folder)
        let fresh = try tree(folder.path)
        let committed = try tree(generatedFixtures)
        #expect(
            committed.keys.sorted() == fresh.keys.sorted(),
            "regenerate with `swift run dump-samples Tests/ApexDumpsTests/Fixtures/generated`")
        for (path, data) in fresh where committed[path] != nil && committed[path] != data {
            // A SQLite file records the library's version in its header: compare what it holds instead.
            if path.hasSuffix(".sqlite"),
                let committedDump = try? DumpReader.read(path: generatedFixtures + "/" + path),
                let freshDump = try? DumpReader.read(path: folder.path + "/" + path),
                case .keychain(let old) = committedDump.content, case .keychain(let new) = freshDump.content, old == new
            {
                continue
            }
            Issue.record("Fixtures/generated/\(path) is stale: regenerate it")
        }
    }
}

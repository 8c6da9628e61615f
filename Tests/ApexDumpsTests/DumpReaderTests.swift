import ApexTestSupport
import Foundation
import Synchronization
import Testing

@testable import ApexDumps

/// A temporary folder for one test (a ``ScratchFolder``), removed when the test ends, with paths as strings.
struct DumpScratch: Sendable {
    /// The folder.
    let folder: ScratchFolder
    /// Its path.
    var path: String { folder.url.path }

    init() throws { folder = try ScratchFolder("dumps") }

    /// Writes a file (creating its folders) and returns its path.
    @discardableResult
    func write(_ relative: String, _ data: Data) throws -> String {
        let url = URL(fileURLWithPath: path).appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
        return url.path
    }

    @discardableResult
    func write(_ relative: String, _ text: String) throws -> String { try write(relative, Data(text.utf8)) }

    func folder(_ relative: String) throws -> String {
        let full = path + "/" + relative
        try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
        return full
    }
}

/// Small valid files of each format, for the detection and folder tests.
enum DumpTestFiles {
    static let xmlPlist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <array><dict><key>svce</key><string>auth</string><key>acct</key><string>user</string></dict></array>
        </plist>

        """
    static let sharedPreferences = """
        <?xml version='1.0' encoding='utf-8' standalone='yes' ?>
        <map>
            <string name="auth:c">KeystoreAESCBC</string>
        </map>

        """
    static let dataStore = DataStoreProto.map([
        PreferenceEntry(name: "auth:c", value: .string("KeystoreAESGCM")),
        PreferenceEntry(name: "count", value: .int(3)),
    ])
    static let sqliteHeader = Data("SQLite format 3\0".utf8) + Data(repeating: 0, count: 84)
    /// An app's `Info.plist`: a valid plist that holds no keychain item.
    static let infoPlist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict><key>CFBundleIdentifier</key><string>com.example.app</string></dict>
        </plist>

        """
}

@Suite("Dump reader")
struct DumpReaderTests {
    // MARK: Detection

    static let detected: [(String, Data, DumpFormat)] = [
        ("binary plist", Data("bplist00".utf8) + Data([0xD0, 0x08]), .iosPlist),
        ("XML plist with a DOCTYPE", Data(DumpTestFiles.xmlPlist.utf8), .iosPlist),
        ("XML plist without prolog", Data("<plist version=\"1.0\"><array/></plist>".utf8), .iosPlist),
        (
            "XML plist with a BOM, a comment and an internal subset",
            Data([0xEF, 0xBB, 0xBF]) + Data("<!-- dump --><!DOCTYPE plist [ <!ENTITY x \"y\"> ]>\n<plist/>".utf8),
            .iosPlist
        ),
        ("SQLite header", DumpTestFiles.sqliteHeader, .keychainSQLite),
        ("SharedPreferences", Data(DumpTestFiles.sharedPreferences.utf8), .sharedPreferences),
        ("an empty SharedPreferences map", Data("<?xml version='1.0' ?><map />".utf8), .sharedPreferences),
        ("JSON array of objects", Data("[\n  {\n    \"account\": \"a\"\n  }\n]".utf8), .objectionJSON),
        ("empty JSON array", Data(" [ ] ".utf8), .objectionJSON),
        ("JSON object", Data("{\"genp\": []}".utf8), .objectionJSON),
        ("DataStore", DumpTestFiles.dataStore, .dataStore),
    ]

    @Test(
        "each format's bytes are detected",
        arguments: detected.map { DetectionCase(name: $0.0, data: $0.1, format: $0.2) })
    func detection(_ sample: DetectionCase) {
        #expect(DumpReader.detect(sample.data) == sample.format)
    }

    static let undetected: [(String, Data)] = [
        ("empty", Data()),
        ("text", Data("hello, world\nthis is not a dump\n".utf8)),
        ("key=value text", Data("auth:c=KeystoreAESCBC\n".utf8)),
        ("HTML", Data("<!DOCTYPE html><html><body/></html>".utf8)),
        ("XML with another root", Data("<?xml version=\"1.0\"?><resources/>".utf8)),
        ("an unclosed XML comment", Data("<!-- <map>".utf8)),
        ("RTF", Data("{\\rtf1\\ansi}".utf8)),
        ("a JSON array of numbers", Data("[1, 2, 3]".utf8)),
        ("UTF-16 text", Data("hello".utf16.flatMap { [UInt8($0), 0] })),
        ("a truncated DataStore file", DumpTestFiles.dataStore.dropLast()),
        ("a lone protobuf varint field", Data([0x08, 0x01])),
        ("zeros", Data(repeating: 0, count: 64)),
    ]

    @Test(
        "text and other bytes are not detected",
        arguments: undetected.map { DetectionCase(name: $0.0, data: $0.1, format: nil) })
    func noDetection(_ sample: DetectionCase) {
        #expect(DumpReader.detect(sample.data) == nil)
    }

    @Test("random bytes are not detected")
    func randomBytes() {
        var generator = DumpTestRandom(seed: 0xD37EC7)
        for length in 1...300 {
            let data = Data((0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
            guard let format = DumpReader.detect(data) else { continue }
            // Only a leading byte that happens to be a format's first character can pass, and then only by prefix.
            Issue.record("\(length) random bytes detected as \(format)")
        }
    }

    // MARK: Reading one file

    @Test("a missing file is unreadable, and the error names it")
    func missingFile() throws {
        let folder = try DumpScratch()
        let path = folder.path + "/nothing.plist"
        #expect(throws: DumpError(.unreadable, path: path, "no such file")) { try DumpReader.read(path: path) }
    }

    @Test("a folder given as a file is unreadable")
    func folderAsFile() throws {
        let folder = try DumpScratch()
        #expect(throws: DumpError(.unreadable, path: folder.path, "a folder, not a file")) {
            try DumpReader.read(path: folder.path)
        }
    }

    @Test("a FIFO is refused without blocking")
    func fifo() throws {
        let folder = try DumpScratch()
        let path = folder.path + "/pipe.plist"
        try #require(mkfifo(path, 0o600) == 0)
        #expect(throws: DumpError(.unreadable, path: path, "not a regular file")) { try DumpReader.read(path: path) }
    }

    /// Character devices that never end (or say nothing), given as a dump directly or through a link with a dump's
    /// name: refused before a byte is read, whatever their size says.
    static let devices: [(name: String, target: String)] = [
        ("/dev/zero", "/dev/zero"), ("/dev/urandom", "/dev/urandom"), ("/dev/null", "/dev/null"),
        ("a link named keychain.plist to /dev/zero", "/dev/zero"),
    ]

    @Test("a device given as a dump is refused without reading it", .timeLimit(.minutes(5)), arguments: devices.indices)
    func device(index: Int) throws {
        let (name, target) = Self.devices[index]
        let folder = try DumpScratch()
        var path = target
        if name.hasPrefix("a link") {
            path = folder.path + "/keychain.plist"
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        }
        #expect(throws: DumpError(.unreadable, path: path, "not a regular file"), "\(name)") {
            try DumpReader.read(path: path)
        }
    }

    @Test(
        "a link to a device inside an app folder is left out, as FIFOs and sockets are: the rest is read",
        .timeLimit(.minutes(5)))
    func deviceInAppFolder() throws {
        let folder = try DumpScratch()
        let prefs = try folder.write("app/shared_prefs/SecureStore.xml", DumpTestFiles.sharedPreferences)
        let link = try folder.folder("app/shared_prefs") + "/RN_KEYCHAIN.xml"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/dev/urandom")
        #expect(try DumpReader.readAll(paths: [folder.path + "/app"]).map(\.path) == [prefs])
        // Named, it is refused as what it is.
        #expect(throws: DumpError(.unreadable, path: link, "not a regular file")) {
            try DumpReader.readAll(paths: [link])
        }
    }

    @Test("a link to nothing, or in a loop, found in a folder is left out: the rest of the folder is read")
    func danglingLinksInFolder() throws {
        let folder = try DumpScratch()
        try folder.write("app/shared_prefs/SecureStore.xml", DumpTestFiles.sharedPreferences)
        let app = try folder.folder("app")
        // As an app data folder pulled from a phone has it.
        try FileManager.default.createSymbolicLink(atPath: app + "/lib", withDestinationPath: "/nonexistent/app/lib")
        try FileManager.default.createSymbolicLink(atPath: app + "/loop", withDestinationPath: app + "/loop")
        try FileManager.default.createSymbolicLink(
            atPath: try folder.folder("app/shared_prefs") + "/gone.xml", withDestinationPath: app + "/gone.xml")
        let dumps = try DumpReader.readAll(paths: [app])
        #expect(dumps.map(\.path) == [app + "/shared_prefs/SecureStore.xml"])
    }

    /// A read that says EAGAIN: the reader opens every file without blocking, and a regular file such as
    /// `/proc/kmsg` then answers so until the kernel logs something. (Reading `/proc/kmsg` itself would take the
    /// kernel's messages from whoever reads them, so a pipe with a writer and nothing written stands in for it.)
    @Test("a read that would block (EAGAIN) is an error naming the file, not a spin", .timeLimit(.minutes(5)))
    func readWouldBlock() throws {
        // Nothing to read, and some bytes first (the reader reads them, then meets EAGAIN).
        for prefix in ["", "bplist00"] {
            var ends: [Int32] = [0, 0]
            try #require(pipe(&ends) == 0)
            let (output, input) = (ends[0], ends[1])
            try #require(fcntl(output, F_SETFL, fcntl(output, F_GETFL) | O_NONBLOCK) == 0)
            if !prefix.isEmpty { #expect(write(input, prefix, prefix.utf8.count) == prefix.utf8.count) }
            let outcome = Self.withDeadline(seconds: 20, unblock: { close(input) }) {
                let reader = DumpFile(descriptor: output, path: "/proc/kmsg", size: 0)
                return Result { () throws(DumpError) in try reader.readBytes(upTo: 1 << 20) }
            }
            switch outcome {
            case nil:
                Issue.record("the read did not end within 20 seconds (a spin on EAGAIN)")
                continue
            case .success(let data)?:
                Issue.record("the read ended with \(data.count) bytes instead of an error")
            case .failure(let error)?:
                #expect(error.kind == .unreadable)
                #expect(error.path == "/proc/kmsg")
                #expect(error.message.contains("would block"), "\(error.message)")
            }
            close(input)
        }
    }

    /// Runs `body` on a thread and waits for it at most `seconds`; nil when it has not ended by then, after calling
    /// `unblock` (which should make it end, so that no thread is left spinning).
    static func withDeadline<T: Sendable>(
        seconds: Double, unblock: @escaping @Sendable () -> Void, _ body: @escaping @Sendable () -> T
    ) -> T? {
        let box = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let value = body()
            box.withLock { $0 = value }
            done.signal()
        }
        guard done.wait(timeout: .now() + seconds) == .success else {
            unblock()
            return nil
        }
        return box.withLock { $0 }
    }

    @Test("an empty file is not a dump: empty file")
    func emptyFile() throws {
        let folder = try DumpScratch()
        let path = try folder.write("RN_KEYCHAIN.preferences_pb", Data())
        #expect(throws: DumpError(.notADump, path: path, "empty file")) { try DumpReader.read(path: path) }
    }

    @Test("a file of unknown format is not a dump: unknown format, whatever its name")
    func unknownFile() throws {
        let folder = try DumpScratch()
        let path = try folder.write("keychain.plist", "sample-token-0001 is not a plist\n")
        #expect {
            try DumpReader.read(path: path)
        } throws: { error in
            guard let error = error as? DumpError else { return false }
            return error.kind == .notADump && error.path == path && error.message.hasPrefix("unknown format: ")
                && !error.description.contains("sample-token")
        }
    }

    @Test("the format comes from the content, not the name")
    func contentNotName() throws {
        let folder = try DumpScratch()
        let dataStore = try folder.write("misnamed.plist", DumpTestFiles.dataStore)
        let prefs = try folder.write("misnamed.json", DumpTestFiles.sharedPreferences)
        let dump = try DumpReader.read(path: dataStore)
        #expect(dump.format == .dataStore)
        #expect(dump.path == dataStore)
        guard case .preferences(let entries) = dump.content else {
            Issue.record("not preferences")
            return
        }
        #expect(entries.map(\.name) == ["auth:c", "count"])
        #expect(try DumpReader.read(path: prefs).format == .sharedPreferences)
    }

    @Test("a reader's error comes through with the path")
    func readerError() throws {
        let folder = try DumpScratch()
        let path = try folder.write("broken.preferences_pb", Data([0x0A, 0x05, 0x0A, 0x01, 0x6B]))
        // DetectionCase as nothing (it does not parse), so the file is of an unknown format.
        #expect(throws: DumpError.self) { try DumpReader.read(path: path) }
        let prefsPath = try folder.write("broken.xml", "<map><string name=\"a\">unclosed</map>")
        #expect {
            try DumpReader.read(path: prefsPath)
        } throws: { error in
            (error as? DumpError).map { $0.kind == .malformed && $0.path == prefsPath } ?? false
        }
    }
}

/// A detection case; only the name shows in the test log.
struct DetectionCase: Sendable, CustomTestStringConvertible {
    let name: String
    let data: Data
    let format: DumpFormat?
    var testDescription: String { name }
}

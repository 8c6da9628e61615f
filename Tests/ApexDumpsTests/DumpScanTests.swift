import Foundation
import Testing

@testable import ApexDumps

#if canImport(Glibc)
    import Glibc
#endif

/// Folders, streams and the files that are not keychain dumps.
extension DumpReaderTests {
    // MARK: Folders

    /// An Android app data folder and a folder of iOS dumps, with the files a search must skip.
    private func makeLayout(_ folder: DumpScratch) throws {
        let prefs = DumpTestFiles.sharedPreferences
        try folder.write("app/shared_prefs/RN_KEYCHAIN.xml", prefs)
        try folder.write("app/shared_prefs/crypto.KEY_256.xml", prefs)
        try folder.write("app/shared_prefs/SecureStore.xml", prefs)
        try folder.write("app/shared_prefs/%40anonymous%2Fapp-1234-SecureStore.xml", prefs)
        try folder.write("app/shared_prefs/com.example.app_preferences.xml", prefs)
        try folder.write("app/shared_prefs/RN_KEYCHAIN.xml.bak", prefs)
        try folder.write("app/files/datastore/RN_KEYCHAIN.preferences_pb", DumpTestFiles.dataStore)
        try folder.write("app/files/settings.json", "{\"a\": 1}")
        try folder.write("app/files/datastore/nested/deeper.json", "{}")
        try folder.write("app/databases/RKStorage.db", DumpTestFiles.sqliteHeader)
        try folder.write("app/cache/http.json", "[]")
        try folder.write("app/app_webview/Default/Preferences.plist", DumpTestFiles.xmlPlist)
        try folder.write("ios/keychain.plist", DumpTestFiles.xmlPlist)
        try folder.write("ios/export.sqlite", DumpTestFiles.sqliteHeader)
        try folder.write("ios/export.sqlite-wal", Data([1]))
        try folder.write("ios/export.sqlite-shm", Data([1]))
        try folder.write("ios/export.db-journal", Data([1]))
        try folder.write("ios/keychain-2.db", DumpTestFiles.sqliteHeader)
        try folder.write("ios/Objection.JSON", "[]")
        try folder.write("ios/notes.txt", "notes")
        try folder.write("ios/.hidden.plist", DumpTestFiles.xmlPlist)
        try folder.write(".git/config.json", "{}")
        try folder.write("a/b/c/d/e/f/g/h/deep.plist", DumpTestFiles.xmlPlist)
        try folder.write("a/b/c/d/e/f/g/h/i/too-deep.plist", DumpTestFiles.xmlPlist)
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/loop", withDestinationPath: folder.path)
        try FileManager.default.createSymbolicLink(
            atPath: folder.path + "/ios/linked.plist", withDestinationPath: folder.path + "/ios/keychain.plist")
    }

    @Test("discover finds every file of an app data folder's prefs and datastore and of a folder of dumps, sorted")
    func discover() throws {
        let folder = try DumpScratch()
        try makeLayout(folder)
        let found = try DumpReader.discover(folder.path).map { String($0.dropFirst(folder.path.count + 1)) }
        #expect(
            found == [
                "a/b/c/d/e/f/g/h/deep.plist",
                "app/files/datastore/RN_KEYCHAIN.preferences_pb",
                "app/files/datastore/nested/deeper.json",
                "app/shared_prefs/%40anonymous%2Fapp-1234-SecureStore.xml",
                "app/shared_prefs/RN_KEYCHAIN.xml",
                "app/shared_prefs/RN_KEYCHAIN.xml.bak",
                "app/shared_prefs/SecureStore.xml",
                "app/shared_prefs/com.example.app_preferences.xml",
                "app/shared_prefs/crypto.KEY_256.xml",
                "ios/Objection.JSON",
                "ios/export.sqlite",
                "ios/keychain-2.db",
                "ios/keychain.plist",
                "ios/linked.plist",
                "ios/notes.txt",
            ])
        // Given the app data folder itself, the same rules apply; a trailing slash changes nothing.
        let app = try DumpReader.discover(folder.path + "/app/")
        #expect(app.first == folder.path + "/app/files/datastore/RN_KEYCHAIN.preferences_pb")
        #expect(app.count == 8)
    }

    @Test("discover refuses a missing folder and a file")
    func discoverErrors() throws {
        let folder = try DumpScratch()
        let missing = folder.path + "/missing"
        #expect(throws: DumpError(.unreadable, path: missing, "no such file or folder")) {
            try DumpReader.discover(missing)
        }
        let file = try folder.write("a.plist", DumpTestFiles.xmlPlist)
        #expect(throws: DumpError(.unreadable, path: file, "not a folder")) { try DumpReader.discover(file) }
    }

    @Test("scan reads a folder's dumps, whatever their names, and lists the files that are not dumps, in order")
    func scanFolder() throws {
        let folder = try DumpScratch()
        try folder.write("app/shared_prefs/RN_KEYCHAIN.xml", DumpTestFiles.sharedPreferences)
        try folder.write("app/shared_prefs/crypto.KEY_256.xml", "")
        try folder.write("app/files/datastore/RN_KEYCHAIN.preferences_pb", DumpTestFiles.dataStore)
        try folder.write("dumps/Info.plist", DumpTestFiles.infoPlist)
        try folder.write("dumps/backup-1.bin", DumpTestFiles.xmlPlist)
        try folder.write("dumps/empty.plist", Data())
        try folder.write("dumps/package.json", "{\"name\": \"app\", \"version\": \"1.0.0\"}")
        try folder.write("dumps/photo.jpg", Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data(repeating: 7, count: 1000))
        try folder.write("dumps/readme.json", "this is not JSON")
        let scan = try DumpReader.scan(paths: [folder.path])
        #expect(scan.dumps.map(\.format) == [.dataStore, .sharedPreferences, .iosPlist])
        #expect(
            scan.dumps.map(\.path) == [
                folder.path + "/app/files/datastore/RN_KEYCHAIN.preferences_pb",
                folder.path + "/app/shared_prefs/RN_KEYCHAIN.xml",
                folder.path + "/dumps/backup-1.bin",
            ])
        let skipped = scan.skipped.map { ($0.path.dropFirst(folder.path.count + 1), $0.kind, $0.message) }
        #expect(
            skipped.map(\.0) == [
                "app/shared_prefs/crypto.KEY_256.xml", "dumps/Info.plist", "dumps/empty.plist",
                "dumps/package.json", "dumps/photo.jpg", "dumps/readme.json",
            ])
        #expect(skipped.allSatisfy { $0.1 == .notADump })
        #expect(
            skipped.map(\.2) == [
                "empty file",
                "not a keychain dump: the top-level dictionary has none of the class arrays genp, inet, cert, keys, idnt",
                "empty file",
                "not a keychain dump: the top level is a dictionary, expected an array of objection's items",
                "unknown format: not an iOS keychain plist, a keychain SQLite export, objection JSON, an Android SharedPreferences XML file or a DataStore preferences_pb file",
                "unknown format: not an iOS keychain plist, a keychain SQLite export, objection JSON, an Android SharedPreferences XML file or a DataStore preferences_pb file",
            ])
        // Dumps and skipped files keep one order, and a folder's files are never "named".
        #expect(scan.entries.count == 9)
        for entry in scan.entries {
            if case .dump(_, let inFolder) = entry { #expect(inFolder) }
        }
        #expect(try DumpReader.readAll(paths: [folder.path]).map(\.path) == scan.dumps.map(\.path))
    }

    @Test("scan: a damaged dump in a folder is an error, not a skip")
    func scanDamaged() throws {
        let folder = try DumpScratch()
        try folder.write("dumps/Info.plist", DumpTestFiles.infoPlist)
        let damaged = try folder.write("dumps/keychain.plist", Data(DumpTestFiles.xmlPlist.utf8).dropLast(20))
        #expect {
            try DumpReader.scan(paths: [folder.path])
        } throws: { error in
            (error as? DumpError)?.kind == .malformed && (error as? DumpError)?.path == damaged
        }
    }

    @Test("scan: a named file that is not a dump is an error, whatever made it so")
    func scanNamedNotADump() throws {
        let folder = try DumpScratch()
        let info = try folder.write("Info.plist", DumpTestFiles.infoPlist)
        let empty = try folder.write("empty.json", Data())
        for path in [info, empty] {
            #expect {
                try DumpReader.scan(paths: [path])
            } throws: { error in
                (error as? DumpError)?.kind == .notADump && (error as? DumpError)?.path == path
            }
        }
    }

    @Test("a stream is read to its end, waiting for bytes even when the pipe does not block", .timeLimit(.minutes(5)))
    func stream() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let (output, input) = (ends[0], ends[1])
        defer { close(output) }
        // A non-blocking read end says EAGAIN until the writer has written: the reader must wait, not fail.
        try #require(fcntl(output, F_SETFL, fcntl(output, F_GETFL) | O_NONBLOCK) == 0)
        let bytes = Array(DumpTestFiles.sharedPreferences.utf8)
        let writer = Thread {
            usleep(200_000)
            bytes.withUnsafeBytes { _ = write(input, $0.baseAddress, 10) }
            usleep(200_000)
            bytes.withUnsafeBytes { _ = write(input, $0.baseAddress! + 10, bytes.count - 10) }
            close(input)
        }
        writer.start()
        let dump = try DumpReader.read(stream: output, name: DumpReader.standardInputName)
        #expect(dump.path == "(stdin)" && dump.format == .sharedPreferences)
        guard case .preferences(let entries) = dump.content else {
            Issue.record("not preferences")
            return
        }
        #expect(entries == [PreferenceEntry(name: "auth:c", value: .string("KeystoreAESCBC"))])
        // The descriptor is the caller's: still open.
        #expect(fcntl(output, F_GETFD) >= 0)
    }

    @Test("scan: a large file that is no format is skipped after its first bytes, however large")
    func scanLargeUnknown() throws {
        let folder = try DumpScratch()
        let large = try folder.write("video.mp4", Data())
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: large))
        try handle.truncate(atOffset: UInt64(DumpLimits.maxFileBytes) + 4096)
        try handle.close()
        try folder.write("keychain.plist", DumpTestFiles.xmlPlist)
        let scan = try DumpReader.scan(paths: [folder.path])
        #expect(scan.dumps.map(\.fileName) == ["keychain.plist"])
        #expect(scan.skipped.map(\.path) == [large])
    }

    @Test("readAll: an unknown file named explicitly is an error naming it")
    func readAllExplicitUnknown() throws {
        let folder = try DumpScratch()
        let good = try folder.write("RN_KEYCHAIN.preferences_pb", DumpTestFiles.dataStore)
        let unknown = try folder.write("readme.json", "this is not JSON")
        #expect {
            try DumpReader.readAll(paths: [good, unknown])
        } throws: { error in
            guard let error = error as? DumpError else { return false }
            return error.kind == .notADump && error.path == unknown && error.message.hasPrefix("unknown format")
        }
    }

    @Test("readAll: a missing path is unreadable")
    func readAllMissing() throws {
        let folder = try DumpScratch()
        let missing = folder.path + "/gone"
        #expect(throws: DumpError(.unreadable, path: missing, "no such file")) {
            try DumpReader.readAll(paths: [missing])
        }
    }

    @Test("readAll reads a file once, however often it is named")
    func readAllOnce() throws {
        let folder = try DumpScratch()
        let file = try folder.write("prefs/RN_KEYCHAIN.xml", DumpTestFiles.sharedPreferences)
        let dumps = try DumpReader.readAll(paths: [file, folder.path, folder.path + "/prefs/../prefs/RN_KEYCHAIN.xml"])
        #expect(dumps.map(\.path) == [file])
    }
}

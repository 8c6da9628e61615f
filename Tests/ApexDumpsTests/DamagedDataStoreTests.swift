import Foundation
import Testing

@testable import ApexDumps

/// A DataStore file that does not parse: damaged, never skipped in favour of the older SharedPreferences copy.
extension DumpReaderTests {
    @Test("an app folder whose DataStore file is cut short is malformed, naming the file, not read without it")
    func damagedDataStoreInAppFolder() throws {
        let folder = try DumpScratch()
        try folder.write("app/shared_prefs/RN_KEYCHAIN.xml", DumpTestFiles.sharedPreferences)
        // An interrupted `adb pull`: the last byte is missing.
        let cut = try folder.write(
            "app/files/datastore/RN_KEYCHAIN.preferences_pb", DumpTestFiles.dataStore.dropLast())
        #expect(DumpReader.detect(DumpTestFiles.dataStore.dropLast()) == nil)
        #expect {
            try DumpReader.scan(paths: [folder.path + "/app"])
        } throws: { error in
            guard let error = error as? DumpError else { return false }
            return error.kind == .malformed && error.path == cut
                && error.message.hasPrefix("not a valid DataStore PreferenceMap: ")
        }
        #expect(throws: DumpError.self) { try DumpReader.read(path: cut) }
    }

    @Test("a file whose first bytes are a whole preference entry and that does not parse is malformed, any name")
    func damagedDataStoreByContent() throws {
        let folder = try DumpScratch()
        let cut = try folder.write("state.bin", DumpTestFiles.dataStore.dropLast())
        #expect {
            try DumpReader.read(path: cut)
        } throws: { error in
            (error as? DumpError).map { $0.kind == .malformed && $0.path == cut } ?? false
        }
        // Text named as a DataStore file is no DataStore file at all: malformed too, not skipped.
        let text = try folder.write("other.preferences_pb", "text, not protobuf")
        #expect {
            try DumpReader.scan(paths: [folder.path])
        } throws: { error in
            (error as? DumpError).map { $0.kind == .malformed && $0.path == text } ?? false
        }
        // Other files that are no format at all are still skipped.
        try FileManager.default.removeItem(atPath: cut)
        try FileManager.default.removeItem(atPath: text)
        try folder.write("notes.bin", Data([0x0A, 0x05, 0x0A, 0x01]))
        #expect(try DumpReader.scan(paths: [folder.path]).skipped.count == 1)
    }
}

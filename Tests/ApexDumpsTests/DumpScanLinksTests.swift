import Foundation
import Testing

@testable import ApexDumps

#if canImport(Glibc)
    import Glibc
#endif

/// Files a folder's search reaches twice, and links to what is not a file.
extension DumpReaderTests {
    @Test("scan reads a file reached twice by a hard link once, in a folder and named")
    func scanHardLinkOnce() throws {
        let folder = try DumpScratch()
        let file = try folder.write("dumps/a.plist", DumpTestFiles.xmlPlist)
        let linked = folder.path + "/dumps/b.plist"
        try FileManager.default.linkItem(atPath: file, toPath: linked)
        let scan = try DumpReader.scan(paths: [folder.path + "/dumps"])
        #expect(scan.dumps.map(\.path) == [file])
        // Named after the folder: the same file again, read once.
        let again = try DumpReader.scan(paths: [folder.path + "/dumps", linked])
        #expect(again.dumps.map(\.path) == [file])
        // And named first, then found in the folder.
        let named = try DumpReader.scan(paths: [linked, folder.path + "/dumps"])
        #expect(named.dumps.map(\.path) == [linked])
    }

    @Test("a folder's search leaves out a link to a device, as it leaves out the device itself")
    func discoverSkipsLinkToDevice() throws {
        let folder = try DumpScratch()
        let prefs = try folder.write("app/shared_prefs/RN_KEYCHAIN.xml", DumpTestFiles.sharedPreferences)
        try FileManager.default.createSymbolicLink(
            atPath: folder.path + "/app/shared_prefs/null.xml", withDestinationPath: "/dev/null")
        try FileManager.default.createSymbolicLink(
            atPath: folder.path + "/app/shared_prefs/zero.xml", withDestinationPath: "/dev/zero")
        #expect(try DumpReader.discover(folder.path + "/app") == [prefs])
        let scan = try DumpReader.scan(paths: [folder.path + "/app"])
        #expect(scan.dumps.map(\.path) == [prefs])
        #expect(scan.skipped.isEmpty)
        // Named, the link is still refused as what it is.
        #expect(throws: DumpError.self) { try DumpReader.scan(paths: [folder.path + "/app/shared_prefs/null.xml"]) }
    }
}

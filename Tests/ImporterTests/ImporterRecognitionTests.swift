import ApexDumps
import ApexMigration
import ExpoSecureStoreImporter
import Foundation
import ReactNativeEncryptedStorageImporter
import ReactNativeKeychainImporter
import ReactNativeSensitiveInfoImporter
import SampleDumps
import Testing

/// Every generated sample is claimed by its own library's importer and by no other: each importer runs alone on
/// each file, with and without `--from` naming it.
@Suite struct ImporterRecognitionTests {
    static let importers: [any Importer] = [
        ReactNativeKeychainImporter(), ExpoSecureStoreImporter(), ReactNativeSensitiveInfoImporter(),
        ReactNativeEncryptedStorageImporter(),
    ]

    /// The sample files of the libraries' folders (README and benchmark files aside), read by the real readers.
    static func sampleDumps() throws -> [(library: String, dump: Dump, isKeychainDump: Bool)] {
        try SampleTree.files().compactMap { file in
            guard file.format != nil, let library = file.path.split(separator: "/").first.map(String.init),
                SourceLibrary(rawValue: library) != nil
            else { return nil }
            return (library, try RNSI.sample(file.path), file.isKeychainDump)
        }
    }

    /// Android recognition, as the CLI asks each importer.
    static func recognisers(_ dump: Dump, library: SourceLibrary?) -> [SourceLibrary] {
        var found: [SourceLibrary] = []
        if ReactNativeKeychainImporter.recognises(dump) { found.append(.reactNativeKeychain) }
        if ExpoSecureStoreImporter.recognises(dump) { found.append(.expoSecureStore) }
        if ReactNativeSensitiveInfoImporter.recognises(dump, library: library) {
            found.append(.reactNativeSensitiveInfo)
        }
        if ReactNativeEncryptedStorageImporter.recognises(dump) { found.append(.reactNativeEncryptedStorage) }
        return found
    }

    @Test("no sample record is claimed by two importers; without --from, each file only by its own library's")
    func oneImporterPerSample() throws {
        let samples = try Self.sampleDumps()
        #expect(samples.contains { $0.library == "react-native-sensitive-info" })
        for (library, dump, isKeychainDump) in samples {
            for named in [nil] + SourceLibrary.allCases.map(Optional.some) {
                let options = ImportOptions(libraries: named.map { [$0] })
                let mode = "\(dump.path) with --from \(named?.rawValue ?? "auto")"
                var owner: [SourceOrigin: String] = [:]
                var claimers: [String] = []
                for importer in Self.importers {
                    let items = try importer.importItems(from: [dump], options: options)
                    if !items.isEmpty { claimers.append(importer.library.rawValue) }
                    for item in items {
                        if let other = owner.updateValue(importer.library.rawValue, forKey: item.origin) {
                            Issue.record("\(mode): \(item.origin.location) claimed by \(other) and \(importer.library)")
                        }
                    }
                }
                // A key file holds no items of its own; --from react-native-sensitive-info may take what carries
                // no mark of any library (react-native-keychain's generic passwords then stay out of its import).
                // react-native-encrypted-storage's iOS samples hold a react-native-keychain item beside its own (the
                // bundle id's service beside the empty one), as an app's keychain does.
                let beside: Set<String> =
                    library == SourceLibrary.reactNativeEncryptedStorage.rawValue && dump.format.platform == .ios
                    ? [SourceLibrary.reactNativeKeychain.rawValue] : []
                if named == nil {
                    #expect(claimers.allSatisfy { $0 == library || beside.contains($0) }, "\(mode)")
                    #expect(isKeychainDump || claimers.isEmpty, "\(mode)")
                }
                if case .preferences = dump.content {
                    let recognised = Self.recognisers(dump, library: named).map(\.rawValue)
                    #expect(recognised == (isKeychainDump ? [library] : []), "\(mode) recognised")
                }
            }
        }
    }

    @Test("no sample value shows in any text of react-native-sensitive-info's items")
    func secrecy() throws {
        let dumps = try Self.sampleDumps().filter { $0.library == "react-native-sensitive-info" }.map(\.dump)
        for options in [
            ImportOptions(), RNSI.named, ImportOptions(bundleID: "com.example.rnsiapp", serviceMap: ["payments": "p"]),
        ] {
            let items = try ReactNativeSensitiveInfoImporter().importItems(from: dumps, options: options)
            #expect(items.count == 11 + 13)
            var secrets: [String] = []
            for item in items {
                if case .value(let data) = item.value { secrets.append(String(decoding: data, as: UTF8.self)) }
            }
            // The 6.x HMAC key item is skipped without reading its value.
            #expect(secrets.count == 10 + 3)
            // The sealed values' ciphertext, as found in the files, must not show either.
            for dump in dumps {
                guard case .preferences(let entries) = dump.content else { continue }
                for entry in entries { if case .string(let text) = entry.value { secrets.append(text) } }
            }
            expectNoSecrets(items, secrets)
        }
    }
}

import Foundation
import Testing

/// Review (command line, item 6): `--from` filtering, a dump no library's items were found in, and a
/// `--service-map` source that matches nothing left no trace. Each prints a warning on stderr, and the items
/// `--from` leaves out are listed as `skipped`.
@Suite("migrate says what it left out")
struct LeftOutWarningsTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    static let bundle = ["--bundle-id", "com.example.sampleapp"]

    @Test("--from lists the other libraries' items as skipped, and says how many")
    func fromFilter() async throws {
        let result = try await sandbox.run(
            [
                "migrate", sample("react-native-keychain/android"), sample("expo-secure-store/android"),
                "--from", "expo-secure-store", "--format", "json",
            ] + Self.bundle)
        #expect(result.status == 0)
        let report = try #require(JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        let items = try #require(report["items"] as? [[String: Any]])
        let others = items.filter { ($0["source"] as? [String: Any])?["library"] as? String == "react-native-keychain" }
        #expect(others.count == 10)
        for item in others {
            #expect(item["action"] as? String == "skipped")
            #expect((item["reason"] as? String)?.hasPrefix("an item of ") == true)
            #expect((item["reason"] as? String)?.contains("only expo-secure-store was asked for") == true)
        }
        #expect(items.contains { $0["action"] as? String == "sealed" })
        #expect(
            result.err.contains(
                "warning: --from expo-secure-store: 10 react-native-keychain item(s) found and skipped\n"))
    }

    @Test("a --service-map source that no service of the dumps is gets a warning; one that matches does not")
    func unmatchedServiceMap() async throws {
        let plist = sample("react-native-keychain/ios/keychain.plist")
        let typo = try await sandbox.run(
            ["migrate", plist, "--service-map", "authh=login", "--service-map", "auth=login"] + Self.bundle)
        #expect(typo.status == 0)
        #expect(
            typo.messages
                == "warning: --service-map 'authh=…' matches no service of the dumps (services are compared byte for byte, as found)\n"
        )
        let quiet = try await sandbox.run(["migrate", plist, "--service-map", "authh=login", "--quiet"] + Self.bundle)
        #expect(quiet.messages == "")
        // The empty FROM names react-native-keychain's Android default service, which its sample has.
        let empty = try await sandbox.run(
            ["migrate", sample("react-native-keychain/android"), "--service-map", "=main"] + Self.bundle)
        #expect(!empty.messages.contains("--service-map"))
        // Items that record no service take one their importer implies, which the map names.
        let implied = try await sandbox.run(
            ["migrate", sample("react-native-sensitive-info/android"), "--service-map", "app=legacy"])
        #expect(!implied.messages.contains("--service-map"), "\(implied.err)")
        let noService = try await sandbox.run(
            ["migrate", sample("react-native-encrypted-storage/android-1.0.0"), "--service-map", "=myapp"])
        #expect(!noService.messages.contains("--service-map"), "\(noService.err)")
    }

    @Test("a dump in which no library's items were found gets a warning; a key file an importer uses does not")
    func unrecognisedDump() async throws {
        let certificates = try PropertyListSerialization.data(
            fromPropertyList: [
                "cert": [["agrp": "A1B2C3D4E5.com.example.app", "pdmn": "ck", "labl": "a certificate"]]
            ],
            format: .xml, options: 0)
        let dump = try sandbox.write("certificates.plist", certificates)
        let result = try await sandbox.run(["migrate", dump] + Self.bundle)
        #expect(result.status == 0)
        #expect(result.messages == "warning: \(dump): no library's items were found in it (ios-plist)\n")
        let android = try await sandbox.run(["migrate", sample("react-native-keychain/android")] + Self.bundle)
        #expect(!android.err.contains("warning: "), "\(android.err)")
    }

    @Test("a FacebookConceal key file without react-native-keychain's entries gets a warning naming what is missing")
    func concealKeyFileAlone() async throws {
        let expected =
            ": no library's items were found in it: it is the key of react-native-keychain's FacebookConceal entries, "
            + "which are in react-native-keychain's SharedPreferences file (shared_prefs/RN_KEYCHAIN.xml); give that "
            + "file beside it\n"
        let keyFile = sample("react-native-keychain/android/shared_prefs/crypto.KEY_256.xml")
        // Known by its content under another name too.
        let renamed = try sandbox.write("key.xml", try Data(contentsOf: URL(fileURLWithPath: keyFile)))
        for path in [keyFile, renamed] {
            let migrate = try await sandbox.run(["migrate", path] + Self.bundle)
            #expect(migrate.status == 0)
            #expect(migrate.out.contains("summary: found 0,"))
            #expect(migrate.messages == "warning: \(path)" + expected)
            let quiet = try await sandbox.run(["migrate", path, "--quiet"] + Self.bundle)
            #expect(quiet.messages == "")
            let inspect = try await sandbox.run(["inspect", path])
            #expect(inspect.status == 0)
            #expect(inspect.messages == "warning: \(path)" + expected)
        }
        // With the entries' file beside it, the key is used: no warning.
        let entries = sample("react-native-keychain/android/shared_prefs/RN_KEYCHAIN.xml")
        let both = try await sandbox.run(["migrate", keyFile, entries] + Self.bundle)
        #expect(both.status == 0)
        #expect(both.messages == "", "\(both.err)")
        let inspected = try await sandbox.run(["inspect", keyFile, entries])
        #expect(inspected.messages == "", "\(inspected.err)")
    }

    @Test("inspect warns of a dump in which no library's items were found, as migrate does")
    func inspectUnrecognisedDump() async throws {
        let certificates = try PropertyListSerialization.data(
            fromPropertyList: ["cert": [["agrp": "A1B2C3D4E5.com.example.app", "pdmn": "ck"]]], format: .xml, options: 0
        )
        let dump = try sandbox.write("certificates.plist", certificates)
        let result = try await sandbox.run(["inspect", dump])
        #expect(result.status == 0)
        #expect(result.out.contains("found 0 item(s)"))
        #expect(result.messages == "warning: \(dump): no library's items were found in it (ios-plist)\n")
    }
}

import ApexDumps
import ApexMigration
import Foundation
import Testing

/// `RecordClaims.sensitiveInfoShape`: the one predicate that says which iOS records are react-native-sensitive-info's
/// (its importer claims them, react-native-keychain's leaves them).
@Suite("record claims: react-native-sensitive-info")
struct RecordClaimsTests {
    static func record(
        service: String = "app", account: String = "token", generic: Data? = nil, label: String? = nil
    ) -> KeychainRecord {
        KeychainRecord(
            location: "genp item 1", itemClass: "genp", service: .string(service), account: .string(account),
            generic: generic.map { .data($0) }, value: .data(Data("v".utf8)), protection: "ak", label: label)
    }

    static let v56 = Data(#"{"accessControl":"none","securityLevel":"software","timestamp":1700000000}"#.utf8)
    static let v6 = Data(
        #"{"accessControl":"none","securityLevel":"software","backend":"keychain","timestamp":1700000000}"#.utf8)

    @Test("JSON metadata in gena, the 6.x HMAC key, and no gena under the classic service are its; others are not")
    func shapes() {
        let auto = ImportOptions()
        func shape(
            _ record: KeychainRecord, _ options: ImportOptions = ImportOptions()
        ) -> RecordClaims
            .SensitiveInfoShape?
        { RecordClaims.sensitiveInfoShape(record, options: options) }
        if case .metadata(let metadata) = shape(Self.record(service: "default", generic: Self.v56), auto) {
            #expect(metadata.accessControl == "none" && metadata.securityLevel == "software")
            #expect(metadata.backend == nil)
        } else {
            Issue.record("5.6.x metadata not recognised")
        }
        if case .metadata(let metadata) = shape(Self.record(service: "default", generic: Self.v6), auto) {
            #expect(metadata.backend == "keychain")
        } else {
            Issue.record("6.x metadata not recognised")
        }
        #expect(shape(Self.record(service: "com.example.app.rnsi.hmac", account: "metadata")) == .hmacKey)
        #expect(shape(Self.record(service: ".rnsi.hmac", account: "metadata")) == nil, "no service before the suffix")
        #expect(shape(Self.record()) == .classic)
        // expo-secure-store's key in gena, JSON that is not the metadata, a label, Firebase's marker, no service.
        #expect(shape(Self.record(generic: Data("token".utf8))) == nil)
        #expect(shape(Self.record(generic: Data(#"{"accessControl":"none"}"#.utf8))) == nil)
        #expect(shape(Self.record(label: "Sign in")) == nil)
        #expect(shape(Self.record(account: "_pfo")) == nil)
        #expect(shape(Self.record(service: "")) == nil)
        // Another service without gena: only when the user names the library; under `app`, never when they name
        // react-native-keychain.
        #expect(shape(Self.record(service: "auth")) == nil)
        #expect(shape(Self.record(service: "auth"), ImportOptions(libraries: [.reactNativeSensitiveInfo])) == .classic)
        #expect(shape(Self.record(), ImportOptions(libraries: [.reactNativeKeychain])) == nil)
    }
}

import ApexDumpModel
import ApexMigration
import Foundation

/// Items other SDKs write into react-native-keychain's services, and the attributes react-native-keychain
/// never sets.
enum KnownForeignItems {
    /// Why a record is recognisably not react-native-keychain's, or nil.
    static func reason(_ record: KeychainRecord) -> String? {
        if record.knownClass == .genericPassword, record.account?.text == "_pfo" {
            return
                "another SDK's item: Firebase's marker item, which shares the app's default service (react-native-keychain issues #363 and #648)"
        }
        if let attribute = markerAttribute(record) {
            return "not react-native-keychain's item: it has \(attribute), which react-native-keychain never sets"
        }
        return nil
    }

    /// The first attribute react-native-keychain never writes that the record carries.
    private static func markerAttribute(_ record: KeychainRecord) -> String? { NoteText.foreignAttribute(record) }

    /// Whether the record is expo-secure-store's: its account and generic attribute hold the same key bytes.
    ///
    /// expo-secure-store writes the key into both (as data; its services are `S`, `S:no-auth`, `S:auth`), and
    /// react-native-keychain never writes a generic attribute, so such an item is never react-native-keychain's.
    static func isExpoSecureStore(_ record: KeychainRecord) -> Bool { RecordClaims.isExpoSecureStore(record) }

    /// Whether the record is left to react-native-encrypted-storage's importer: a generic password with no
    /// service. react-native-keychain always writes one (the bundle id unless the app names another), and an
    /// empty service could not name a target service anyway.
    static func isEncryptedStorageShape(_ record: KeychainRecord) -> Bool {
        RecordClaims.isEncryptedStorageShape(record)
    }
}

import ApexKeychain
import ApexKeychainApple
import Foundation

/// The dictionaries the old libraries pass to `SecItemAdd` on iOS, keyed by the framework's strings: the
/// libraries' items as they are on a phone, with no creator mark.
enum LibraryQueries {
    /// react-native-keychain v10 `setGenericPassword` (`apple-secitem.md` §4.1): `svce` the bundle id or
    /// `options.service`, `acct` the username as a string, an explicit `sync`, `nleg`, and `pdmn` (default `ck`) or,
    /// with an access control, `accc` made of the accessible and its flags.
    static func keychainGeneric(
        service: String, username: String, password: String, sync: Bool = false, accessible: String = "ck",
        accessControl: AccessControlFlags? = nil
    ) -> SecItemDictionary {
        keychain(
            SecItemConstant.genericPassword, .service, service, username, password, sync, accessible, accessControl)
    }

    /// react-native-keychain v10 `setInternetCredentials` (§4.1): class `inet`, `srvr`, `acct`, `v_Data`, `sync`,
    /// `nleg`, and `pdmn` or `accc`.
    static func keychainInternet(
        server: String, username: String, password: String, sync: Bool = false, accessible: String = "ck",
        accessControl: AccessControlFlags? = nil
    ) -> SecItemDictionary {
        keychain(
            SecItemConstant.internetPassword, .server, server, username, password, sync, accessible, accessControl)
    }

    private static func keychain(
        _ itemClass: String, _ nameKey: SecItemKey, _ name: String, _ username: String, _ password: String,
        _ sync: Bool, _ accessible: String, _ accessControl: AccessControlFlags?
    ) -> SecItemDictionary {
        var query: SecItemDictionary = [
            .itemClass: .string(itemClass), nameKey: .string(name), .account: .string(username),
            .synchronizable: .bool(sync), .valueData: .data(Data(password.utf8)),
            .useDataProtectionKeychain: .bool(true),
        ]
        protect(&query, accessible, accessControl)
        return query
    }

    /// expo-secure-store `setValueWithKeyAsync` (§4.2): `svce` the keychain service with `:no-auth` or `:auth`
    /// (none for the legacy, pre-12.8 variant), `acct` and `gena` the key's UTF-8 bytes as data, `v_Data`, and
    /// `pdmn` (default `ak`) or, with `requireAuthentication`, `accc` of `biometryCurrentSet`.
    static func expo(
        key: String, value: String, service: String = "app", requireAuthentication: Bool = false,
        legacy: Bool = false, accessible: String = "ak"
    ) -> SecItemDictionary {
        let suffix = legacy ? "" : requireAuthentication ? ":auth" : ":no-auth"
        var query: SecItemDictionary = [
            .itemClass: .string(SecItemConstant.genericPassword), .service: .string(service + suffix),
            .generic: .data(Data(key.utf8)), .account: .data(Data(key.utf8)), .valueData: .data(Data(value.utf8)),
        ]
        protect(&query, accessible, requireAuthentication ? .biometryCurrentSet : nil)
        return query
    }

    /// react-native-sensitive-info 5.5.8 `setItem` (`react-native-sensitive-info.md` §2.1): `svce` the keychain
    /// service (default `app`), `sync` the option or `syna` when absent, `acct` the key as a string, `v_Data`;
    /// `pdmn` only when given (else Apple's default, `ak`); with `touchID`, `accc` of `akpu` and the one flag.
    static func sensitiveInfo(
        key: String, value: String, service: String = "app", accessible: String? = nil,
        touchID: AccessControlFlags? = nil
    ) -> SecItemDictionary {
        var query: SecItemDictionary = [
            .itemClass: .string(SecItemConstant.genericPassword), .service: .string(service),
            .synchronizable: .string(SecItemConstant.synchronizableAny), .account: .string(key),
            .valueData: .data(Data(value.utf8)),
        ]
        if let touchID {
            query[.accessControl] = .accessControl(SecAccessControlSpec(protection: "akpu", flags: touchID))
        } else if let accessible {
            query[.accessible] = .string(accessible)
        }
        return query
    }

    /// react-native-encrypted-storage `setItem` (`react-native-encrypted-storage.md` §"iOS"): class, `acct` the key,
    /// `v_Data`, nothing else (no service, Apple's default `ak`).
    static func encryptedStorage(key: String, value: String) -> SecItemDictionary {
        [
            .itemClass: .string(SecItemConstant.genericPassword), .account: .string(key),
            .valueData: .data(Data(value.utf8)),
        ]
    }

    private static func protect(
        _ query: inout SecItemDictionary, _ accessible: String, _ accessControl: AccessControlFlags?
    ) {
        if let accessControl {
            query[.accessControl] = .accessControl(SecAccessControlSpec(protection: accessible, flags: accessControl))
        } else {
            query[.accessible] = .string(accessible)
        }
    }
}

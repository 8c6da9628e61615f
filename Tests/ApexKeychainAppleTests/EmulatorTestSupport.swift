import ApexKeychain
import ApexKeychainApple
import Foundation

/// The app's default access group on a `SimulatedDevice()`.
let appGroup = "ABCDE12345.com.example.app"
/// A second group of the app (a keychain-access-groups entry).
let sharedGroup = "ABCDE12345.shared"
/// The fixed clock of a `SimulatedDevice()`: 2026-01-01.
let deviceStart = Date(timeIntervalSince1970: 1_767_225_600)

/// A device and an emulator that follows it.
func makeEmulator(
    _ device: SimulatedDevice = SimulatedDevice(), groups: [String]? = nil
) -> (device: SimulatedDevice, keychain: SecItemEmulator) {
    (device, SecItemEmulator(device: device, accessGroups: groups))
}

/// A plain generic-password add: `{class genp, svce, acct, v_Data}` plus `extra`.
func genericPassword(
    service: String = "svc", account: String = "user", secret: String = "secret",
    _ extra: SecItemDictionary = [:]
) -> SecItemDictionary {
    let base: SecItemDictionary = [
        .itemClass: .string("genp"), .service: .string(service), .account: .string(account),
        .valueData: .data(Data(secret.utf8)),
    ]
    return base.merging(extra) { _, new in new }
}

/// A search of the generic passwords of one service, plus `extra`.
func search(service: String = "svc", _ extra: SecItemDictionary = [:]) -> SecItemDictionary {
    let base: SecItemDictionary = [.itemClass: .string("genp"), .service: .string(service)]
    return base.merging(extra) { _, new in new }
}

/// The UTF-8 bytes of a text.
func bytes(_ text: String) -> Data { Data(text.utf8) }

/// react-native-keychain's queries, as `apple-secitem.md` §4.1 and §8.1 give them (v10 and HEAD).
enum RNK {
    /// How the item is protected: `pdmn`, or `accc`.
    enum Protection {
        case accessible(String)
        case accessControl(SecAccessControlSpec)
    }

    /// setGenericPassword's add: `{class genp, svce, acct, sync, v_Data, nleg, (accc | pdmn), [agrp]}`.
    static func add(
        service: String, username: String, password: String, protection: Protection = .accessible("ck"),
        sync: Bool = false, accessGroup: String? = nil
    ) -> SecItemDictionary {
        var query: SecItemDictionary = [
            .itemClass: .string("genp"), .service: .string(service), .account: .string(username),
            .synchronizable: .bool(sync), .valueData: .data(bytes(password)), .useDataProtectionKeychain: .bool(true),
        ]
        switch protection {
        case .accessible(let pdmn): query[.accessible] = .string(pdmn)
        case .accessControl(let spec): query[.accessControl] = .accessControl(spec)
        }
        if let accessGroup { query[.accessGroup] = .string(accessGroup) }
        return query
    }

    /// The reset (delete) before each set: `{class genp, svce, sync, r_Attributes true, r_Data false, [agrp]}`.
    static func reset(service: String, sync: Bool = false) -> SecItemDictionary {
        [
            .itemClass: .string("genp"), .service: .string(service), .synchronizable: .bool(sync),
            .returnAttributes: .bool(true), .returnData: .bool(false),
        ]
    }

    /// getGenericPassword: `{class genp, svce, sync, r_Attributes, r_Data, m_Limit One, u_OpPrompt}`.
    static func get(service: String, sync: Bool = false) -> SecItemDictionary {
        [
            .itemClass: .string("genp"), .service: .string(service), .synchronizable: .bool(sync),
            .returnAttributes: .bool(true), .returnData: .bool(true), .matchLimit: .string("m_LimitOne"),
            .operationPrompt: .string("Authenticate to retrieve secret"),
        ]
    }

    /// hasGenericPassword: `{class, m_Limit One, sync, svce, u_AuthUI u_AuthUIF}`, no return keys.
    static func has(service: String) -> SecItemDictionary {
        [
            .itemClass: .string("genp"), .matchLimit: .string("m_LimitOne"), .synchronizable: .bool(false),
            .service: .string(service), .authenticationUI: .string("u_AuthUIF"),
        ]
    }

    /// getAllGenericPasswordServices: `{r_Attributes, m_Limit All, class genp, [u_AuthUI u_AuthUIS]}`, no sync.
    static func allServices(skipUIAuth: Bool = false) -> SecItemDictionary {
        var query: SecItemDictionary = [
            .returnAttributes: .bool(true), .matchLimit: .string("m_LimitAll"), .itemClass: .string("genp"),
        ]
        if skipUIAuth { query[.authenticationUI] = .string("u_AuthUIS") }
        return query
    }
}

/// expo-secure-store's queries (`apple-secitem.md` §4.2, §8.1): `acct` and `gena` are Data.
enum Expo {
    /// `{class genp, svce: service[":auth" | ":no-auth"], gena: Data(key), acct: Data(key)}`.
    static func base(key: String, service: String = "app", requireAuthentication: Bool?) -> SecItemDictionary {
        let suffix = requireAuthentication.map { $0 ? ":auth" : ":no-auth" } ?? ""
        return [
            .itemClass: .string("genp"), .service: .string(service + suffix), .generic: .data(bytes(key)),
            .account: .data(bytes(key)),
        ]
    }

    /// set's add: base + v_Data + (pdmn | accc(pdmn, biometryCurrentSet)).
    static func set(key: String, value: String, requireAuthentication: Bool = false) -> SecItemDictionary {
        var query = base(key: key, requireAuthentication: requireAuthentication)
        query[.valueData] = .data(bytes(value))
        if requireAuthentication {
            query[.accessControl] = .accessControl(.init(protection: "ak", flags: .biometryCurrentSet))
        } else {
            query[.accessible] = .string("ak")
        }
        return query
    }

    /// get: base + m_Limit One + r_Data (+ u_OpPrompt).
    static func get(key: String, requireAuthentication: Bool?) -> SecItemDictionary {
        var query = base(key: key, requireAuthentication: requireAuthentication)
        query[.matchLimit] = .string("m_LimitOne")
        query[.returnData] = .bool(true)
        query[.operationPrompt] = .string("Unlock")
        return query
    }
}

extension SecItemResult {
    /// The data of a `.data` result.
    var data: Data? { if case .data(let data) = self { data } else { nil } }
    /// The dictionary of an `.attributes` result.
    var attributes: SecItemDictionary? { if case .attributes(let dictionary) = self { dictionary } else { nil } }
    /// The entries of a `.list` result.
    var list: [SecItemResult]? { if case .list(let entries) = self { entries } else { nil } }
}

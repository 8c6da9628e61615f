import ApexKeychain
import ApexKeychainApple
import Foundation
import Synchronization

/// One SecItem call, with the dictionaries it was given.
enum RecordedCall: Sendable, Equatable {
    case add(SecItemDictionary)
    case copyMatching(SecItemDictionary)
    case update(SecItemDictionary, SecItemDictionary)
    case delete(SecItemDictionary)

    /// The query (the first dictionary) of the call.
    var query: SecItemDictionary {
        switch self {
        case .add(let query), .copyMatching(let query), .update(let query, _), .delete(let query): query
        }
    }
}

/// SecItemCalls that record every dictionary and answer from a script: each call takes the next scripted answer,
/// and once the script is spent, what `otherwise` says (success and no result by default). Not a keychain: it
/// stores nothing, so a test says exactly what the keychain answered and sees exactly what was asked.
final class ScriptedSecItemCalls: SecItemCalls {
    typealias Answer = (status: SecItemStatus, result: SecItemResult)

    private let state: Mutex<(calls: [RecordedCall], script: [Answer])>
    private let otherwise: @Sendable (RecordedCall) -> Answer

    init(_ script: [Answer] = [], otherwise: @escaping @Sendable (RecordedCall) -> Answer = { _ in (.success, .none) })
    {
        state = Mutex(([], script))
        self.otherwise = otherwise
    }

    /// Every call so far, in order.
    var calls: [RecordedCall] { state.withLock { $0.calls } }

    private func answer(_ call: RecordedCall) -> Answer {
        let scripted = state.withLock { state -> Answer? in
            state.calls.append(call)
            return state.script.isEmpty ? nil : state.script.removeFirst()
        }
        return scripted ?? otherwise(call)
    }

    func add(_ attributes: SecItemDictionary) -> SecItemStatus { answer(.add(attributes)).status }

    func copyMatching(_ query: SecItemDictionary) -> (status: SecItemStatus, result: SecItemResult) {
        answer(.copyMatching(query))
    }

    func update(_ query: SecItemDictionary, _ attributesToUpdate: SecItemDictionary) -> SecItemStatus {
        answer(.update(query, attributesToUpdate)).status
    }

    func delete(_ query: SecItemDictionary) -> SecItemStatus { answer(.delete(query)).status }
}

/// Result dictionaries as a keychain returns them (`apple-secitem.md` §2.4), and the names the tests share.
enum Fixture {
    static let service = "com.example.app"
    static let group = "ABCDE12345.com.example.app"
    static let created = Date(timeIntervalSince1970: 1_700_000_000)
    static let modified = Date(timeIntervalSince1970: 1_700_000_500)
    static let creatorMark: SecItemValue = .number(0x4170_784B)

    /// The package's metadata (`gena`) of an item with `accessControl`.
    static func metadata(_ accessControl: AccessControl = .none) -> Data {
        Data("apx=1;enc=s;ac=\(accessControl.rawValue);av=0;lbl=0;os=18".utf8)
    }

    /// The attributes of one of the package's generic passwords, as a listing returns them.
    static func ownEntry(
        _ account: String, accessControl: AccessControl = .none, pdmn: String = "ck", reference: Data? = nil,
        value: Data? = nil
    ) -> SecItemDictionary {
        var entry: SecItemDictionary = [
            .service: .string(service), .account: .string(account), .accessGroup: .string(group),
            .creator: creatorMark, .generic: .data(metadata(accessControl)), .accessible: .string(pdmn),
            .synchronizable: .number(0), .creationDate: .date(created), .modificationDate: .date(modified),
        ]
        if let reference { entry[.valuePersistentRef] = .data(reference) }
        if let value { entry[.valueData] = .data(value) }
        return entry
    }

    /// Another library's generic password: no creator mark, no metadata.
    static func foreignEntry(
        _ account: String, service: String = service, reference: Data? = nil, value: Data? = nil
    ) -> SecItemDictionary {
        var entry: SecItemDictionary = [
            .service: .string(service), .account: .string(account), .accessGroup: .string(group),
            .accessible: .string("ak"), .synchronizable: .number(0), .creationDate: .date(created),
            .modificationDate: .date(modified),
        ]
        if let reference { entry[.valuePersistentRef] = .data(reference) }
        if let value { entry[.valueData] = .data(value) }
        return entry
    }

    /// A listing's result.
    static func list(_ entries: SecItemDictionary...) -> ScriptedSecItemCalls.Answer {
        (.success, .list(entries.map(SecItemResult.attributes)))
    }

    /// The attributes of one of the package's items under `account`, as the core writes them.
    static func ownAttributes(
        _ account: String, accessControl: AccessControl = .none, protectionDomain: ProtectionDomain = .ck
    ) -> ItemAttributes {
        ItemAttributes(
            service: service, account: account, accessGroup: group, creator: apexCreator,
            generic: metadata(accessControl), protectionDomain: protectionDomain,
            accessControl: accessControl.flags, createdAt: created, modifiedAt: modified)
    }

    /// The package's own items of the service, as the core queries them.
    static let ownQuery = ItemQuery(
        itemClass: .genericPassword, service: service, accessGroup: group, creator: apexCreator)
}

import ApexKeychain
import Foundation
import Testing

/// The table from a database's status (a keychain's `OSStatus`, `apple-secitem.md` §1.5) to a ``KeychainError``
/// code, one row per status, through a database that fails the call with it: a read after a prompt, a write, and
/// the reads that never prompt.
@Suite("Database statuses")
struct StatusMappingTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let status: KeychainDatabaseError.Status
        let osStatus: Int32
        let code: KeychainErrorCode
        /// What the message says of it.
        let says: String

        init(_ status: KeychainDatabaseError.Status, _ osStatus: Int32, _ code: KeychainErrorCode, _ says: String) {
            self.status = status
            self.osStatus = osStatus
            self.code = code
            self.says = says
        }

        var testDescription: String { "\(status.rawValue) (\(osStatus))" }

        var error: KeychainDatabaseError { KeychainDatabaseError(status, "injected", osStatus: osStatus) }
    }

    static let rows: [Row] = [
        Row(.duplicateItem, -25299, .INTERNAL, "database error: injected (OSStatus -25299)"),
        Row(.itemNotFound, -25300, .INTERNAL, "database error: injected (OSStatus -25300)"),
        Row(.interactionNotAllowed, -25308, .INTERACTION_NOT_ALLOWED, "can't be used now"),
        Row(.damaged, -26275, .INTERNAL, "is damaged"),
        Row(.io, -36, .INTERNAL, "database error: injected (OSStatus -36)"),
        Row(.authFailed, -25293, .AUTHENTICATION_FAILED, "the keychain refused the authentication"),
        Row(.userCanceled, -128, .USER_CANCELED, "the user canceled the prompt"),
        Row(.missingEntitlement, -34018, .MISSING_ENTITLEMENT, "not entitled to access group"),
        Row(.notAvailable, -25291, .INTERNAL, "the keychain is not available"),
        Row(.invalidQuery, -50, .INTERNAL, "database error: injected (OSStatus -50)"),
        Row(.other, -99999, .INTERNAL, "database error: injected (OSStatus -99999)"),
    ]

    static let secret = "s3cret-value"

    /// Fails every look-up of attributes or accounts with `error`.
    static func failLookups(_ database: RecordingDatabase, with error: KeychainDatabaseError) {
        database.fail { call in
            switch call {
            case .accounts, .attributes, .attributesOrAccount: error
            default: nil
            }
        }
    }

    struct Rig {
        let device = SimulatedDevice()
        let database = RecordingDatabase()
        let keychain: Keychain

        init() throws {
            keychain = try Keychain(KeychainOptions(service: "svc.status"), database: database, device: device)
        }
    }

    @Test(
        "a read after a prompt that the keychain fails surfaces the row's code (itemNotFound: the item went, nil)",
        arguments: rows)
    func readAfterPrompt(row: Row) async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("k", Self.secret, SetOptions(accessControl: .biometryAny))
        rig.database.fail { call in
            if case .value = call { return row.error }
            return nil
        }
        var read: String?
        let error = await thrown { read = try await rig.keychain.getItem("k") }
        #expect(rig.device.promptCount == 1)
        if row.status == .itemNotFound {
            #expect(error == nil)
            #expect(read == nil)
            return
        }
        let thrown = try #require(error)
        #expect(thrown.code == row.code)
        #expect(thrown.message.contains("item 'k' of service 'svc.status'"), "\(thrown.message)")
        #expect(thrown.message.contains(row.says), "\(thrown.message)")
        #expect(!thrown.message.contains(Self.secret))
    }

    @Test("a write that the keychain fails surfaces the row's code, and names no value", arguments: rows)
    func write(row: Row) async throws {
        let rig = try Rig()
        rig.database.fail { call in
            if case .add = call { return row.error }
            return nil
        }
        let error = try #require(await thrown { try await rig.keychain.setItem("k", Self.secret) })
        #expect(error.code == row.code)
        #expect(error.message.contains(row.says), "\(error.message)")
        #expect(!error.message.contains(Self.secret))
    }

    @Test(
        "hasItem: a look-up the keychain answers interactionNotAllowed found an item; any other status is an error",
        arguments: rows)
    func hasItem(row: Row) async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("k", Self.secret, SetOptions(accessControl: .biometryAny))
        Self.failLookups(rig.database, with: row.error)
        var found: Bool?
        let error = await thrown { found = try await rig.keychain.hasItem("k") }
        if row.status == .interactionNotAllowed {
            #expect(error == nil)
            #expect(found == true)
        } else {
            #expect(error?.code == row.code)
        }
        #expect(rig.device.promptCount == 0)
        #expect(rig.database.calls.filter(\.readsValue).isEmpty)
    }

    @Test(
        "getItemInfo and getAllKeys answered interactionNotAllowed can't describe the item: INTERACTION_NOT_ALLOWED, no prompt"
    )
    func describingNeedsTheAttributes() async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("k", Self.secret, SetOptions(accessControl: .biometryAny))
        Self.failLookups(rig.database, with: KeychainDatabaseError(.interactionNotAllowed, "locked", osStatus: -25308))
        #expect(await errorCode { _ = try await rig.keychain.getItemInfo("k") } == .INTERACTION_NOT_ALLOWED)
        #expect(await errorCode { _ = try await rig.keychain.getAllKeys() } == .INTERACTION_NOT_ALLOWED)
        #expect(rig.device.promptCount == 0)
    }
}

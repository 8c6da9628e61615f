import ApexKeychain
import Foundation
import Testing

@testable import ApexKeychainApple

/// The status table, one test case per row, end to end: the `OSStatus` a SecItem call answers, the database error
/// it becomes (status and number), and the `KeychainError` code the core gives for it.
@Suite("SecItem status table")
struct StatusTableTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var status: SecItemStatus
        var number: Int32
        var databaseStatus: KeychainDatabaseError.Status
        var code: KeychainErrorCode
        /// What the core's message must hold: the status's name or its number (empty: the code says it all).
        var shown: String

        var testDescription: String { "\(number) -> \(databaseStatus.rawValue) -> \(code.rawValue)" }
    }

    static let rows: [Row] = [
        Row(
            status: .itemNotFound, number: -25300, databaseStatus: .itemNotFound, code: .INTERNAL,
            shown: "OSStatus -25300"),
        Row(
            status: .duplicateItem, number: -25299, databaseStatus: .duplicateItem, code: .INTERNAL,
            shown: "OSStatus -25299"),
        Row(
            status: .interactionNotAllowed, number: -25308, databaseStatus: .interactionNotAllowed,
            code: .INTERACTION_NOT_ALLOWED, shown: "errSecInteractionNotAllowed"),
        Row(status: .authFailed, number: -25293, databaseStatus: .authFailed, code: .AUTHENTICATION_FAILED, shown: ""),
        Row(status: .userCanceled, number: -128, databaseStatus: .userCanceled, code: .USER_CANCELED, shown: ""),
        Row(
            status: .missingEntitlement, number: -34018, databaseStatus: .missingEntitlement,
            code: .MISSING_ENTITLEMENT, shown: ""),
        Row(
            status: .notAvailable, number: -25291, databaseStatus: .notAvailable, code: .INTERNAL,
            shown: "errSecNotAvailable"),
        Row(status: .param, number: -50, databaseStatus: .invalidQuery, code: .INTERNAL, shown: "OSStatus -50"),
        Row(status: .decode, number: -26275, databaseStatus: .damaged, code: .INTERNAL, shown: "errSecDecode"),
        Row(status: .io, number: -36, databaseStatus: .io, code: .INTERNAL, shown: "OSStatus -36"),
        Row(status: .unimplemented, number: -4, databaseStatus: .other, code: .INTERNAL, shown: "OSStatus -4"),
        Row(status: .noSuchAttr, number: -25303, databaseStatus: .other, code: .INTERNAL, shown: "OSStatus -25303"),
        Row(
            status: SecItemStatus(rawValue: -99_999), number: -99_999, databaseStatus: .other, code: .INTERNAL,
            shown: "OSStatus -99999"),
    ]

    static let secret = "the-secret-value"

    /// Calls that list one of the package's items under "token" and answer `status` to every write.
    static func calls(answering status: SecItemStatus) -> ScriptedSecItemCalls {
        ScriptedSecItemCalls(otherwise: { call in
            if case .copyMatching = call { return Fixture.list(Fixture.ownEntry("token")) }
            return (status, .none)
        })
    }

    @Test("each status becomes its database error and its KeychainError code", arguments: rows)
    func row(_ row: Row) async throws {
        #expect(row.status.rawValue == row.number)

        // The database error: the status, the number, the call named and no value.
        let database = SecItemKeychainDatabase(calls: Self.calls(answering: row.status))
        let key = Fixture.ownAttributes("token").primaryKey
        let item = KeychainItem(attributes: Fixture.ownAttributes("token"), value: Data(Self.secret.utf8))
        let thrown = #expect(throws: KeychainDatabaseError.self) { try database.replace(key, with: item) }
        #expect(thrown?.status == row.databaseStatus)
        #expect(thrown?.osStatus == row.number)
        #expect(thrown?.message.contains("SecItemUpdate") == true)
        #expect(thrown?.message.contains(Self.secret) == false)

        // The core's code for it: a set over the database, whose replace (or, when the old item is locked away, the
        // staged add) answers the status.
        let keychain = try Keychain(
            KeychainOptions(service: Fixture.service),
            database: SecItemKeychainDatabase(calls: Self.calls(answering: row.status)),
            device: SimulatedDevice())
        let error = await #expect(throws: KeychainError.self) { try await keychain.setItem("token", Self.secret) }
        #expect(error?.code == row.code)
        if !row.shown.isEmpty { #expect(error?.message.contains(row.shown) == true) }
        #expect(error?.message.contains(Self.secret) == false)
    }

    @Test("the table has one row per named status, and every other status is other with its number")
    func table() {
        #expect(SecItemStatusTable.rows.count == 10)
        #expect(Set(SecItemStatusTable.rows.map(\.status.rawValue)).count == SecItemStatusTable.rows.count)
        for row in SecItemStatusTable.rows {
            #expect(Self.rows.contains { $0.status == row.status && $0.databaseStatus == row.databaseStatus })
        }
        let other = SecItemStatusTable.error(SecItemStatus(rawValue: -1), from: .copyMatching)
        #expect(other.status == .other && other.osStatus == -1 && other.message == "SecItemCopyMatching failed")
        let named = SecItemStatusTable.error(.duplicateItem, from: .add)
        #expect(named.message == "SecItemAdd: errSecDuplicateItem")
    }
}

import ApexKeychain

/// The one table from a SecItem call's `OSStatus` to `KeychainDatabaseError`
/// (`apple-secitem.md` §1.5 for the numbers). The core maps each database status to a `KeychainError` code.
///
/// The error keeps the status number (`KeychainDatabaseError.osStatus`) and names the call and the
/// status, never a value, a key or a service.
enum SecItemStatusTable {
    /// One row: a status, its framework name, and what the database reports.
    struct Row: Sendable {
        var status: SecItemStatus
        var name: String
        var databaseStatus: KeychainDatabaseError.Status
    }

    /// Every status with a meaning of its own; any other maps to `other`.
    static let rows: [Row] = [
        Row(status: .itemNotFound, name: "errSecItemNotFound", databaseStatus: .itemNotFound),
        Row(status: .duplicateItem, name: "errSecDuplicateItem", databaseStatus: .duplicateItem),
        // A locked device's class key, or an item that needs the user under a non-interactive context (§2.7, §2.9).
        Row(
            status: .interactionNotAllowed, name: "errSecInteractionNotAllowed", databaseStatus: .interactionNotAllowed),
        Row(status: .authFailed, name: "errSecAuthFailed", databaseStatus: .authFailed),
        Row(status: .userCanceled, name: "errSecUserCanceled", databaseStatus: .userCanceled),
        Row(status: .missingEntitlement, name: "errSecMissingEntitlement", databaseStatus: .missingEntitlement),
        // No key for the item's class: an `akpu` item without a passcode (§2.9, §2.10).
        Row(status: .notAvailable, name: "errSecNotAvailable", databaseStatus: .notAvailable),
        // Every private item-query error is this number too (§1.5, `SecBasePriv.h` 70–86).
        Row(status: .param, name: "errSecParam", databaseStatus: .invalidQuery),
        Row(status: .decode, name: "errSecDecode", databaseStatus: .damaged),
        Row(status: .io, name: "errSecIO", databaseStatus: .io),
    ]

    /// The four calls, as the errors name them.
    enum Call: String, Sendable {
        case add = "SecItemAdd"
        case copyMatching = "SecItemCopyMatching"
        case update = "SecItemUpdate"
        case delete = "SecItemDelete"
    }

    /// The database error for a failed `call` that answered `status`.
    static func error(_ status: SecItemStatus, from call: Call) -> KeychainDatabaseError {
        guard let row = rows.first(where: { $0.status == status }) else {
            return KeychainDatabaseError(.other, "\(call.rawValue) failed", osStatus: status.rawValue)
        }
        return KeychainDatabaseError(row.databaseStatus, "\(call.rawValue): \(row.name)", osStatus: status.rawValue)
    }
}

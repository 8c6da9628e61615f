import ApexKeychain

/// The name of one migration's records in the target (its ledger and its completion marker): two migrations
/// share their records exactly when they have the same id, so each independent migration names its own. There is
/// no default.
///
/// An id is 1 to ``maxLength`` UTF-16 code units, without U+0000 (the rule of the keys it goes into,
/// `NameProblem`): ``init(_:)`` refuses any other, so a `Migration` is never refused for its id.
///
/// ```swift
/// let id = MigrationID("legacy-v1")!  // a constant of the app: checked by its first test run
/// ```
public struct MigrationID: Sendable, Hashable, CustomStringConvertible {
    /// The id as given, as the ledger's keys hold it.
    public let rawValue: String

    /// The id `rawValue`, or nil when it can't name a migration (``problem(of:)`` says why).
    public init?(_ rawValue: String) {
        guard Self.problem(of: rawValue) == nil else { return nil }
        self.rawValue = rawValue
    }

    /// The longest id, in UTF-16 code units: the ledger's longest record key, `journal:<id>:<32 hex digits>`, must
    /// be a key the package can hold (`NameProblem.maxLength`).
    public static let maxLength = NameProblem.maxLength - longestLedgerKey(id: "").utf16.count

    /// Why `rawValue` can't name a migration (empty, longer than ``maxLength``, or holding U+0000), or nil when it
    /// can: the rule of the keys it goes into (`NameProblem`), for the longest of them.
    public static func problem(of rawValue: String) -> String? {
        let rule = "a migration id must be 1 to \(maxLength) characters (UTF-16 code units) without U+0000"
        if rawValue.isEmpty { return "the migration id is empty: \(rule)" }
        switch NameProblem(of: longestLedgerKey(id: rawValue)) {
        case nil, .empty?: return nil
        case .tooLong?: return "the migration id is \(rawValue.utf16.count) UTF-16 code units long: \(rule)"
        case .containsNUL?: return "the migration id holds U+0000: \(rule)"
        }
    }

    /// The id as given.
    public var description: String { rawValue }

    private static func longestLedgerKey(id: String) -> String {
        Ledger.journalKey(id: id, digest: String(repeating: "0", count: 2 * Ledger.digestBytes))
    }
}

import ApexKeychain

/// Why an item of a migration is where it is, for programs: an app `switch`es on it. The report keeps the human
/// text beside it (``PlannedAction/reason``, ``MigrationReport/Item/reason``), and the JSON report writes it as
/// `reasonCode` (``code``).
public enum MigrationReason: Sendable, Hashable, Codable {
    /// The keychain refused the write, or would: a device that can't give the protection (never weaker), a
    /// locked device, a cancelled prompt, a fault.
    case keychain(KeychainErrorCode)
    /// The importer found no way to keep the item in the package: a protection with no equivalent (an
    /// and-combination, an application password), a value that can't be read, a name the package can't hold.
    case noEquivalent
    /// The importer left the item out on purpose (another SDK's item, one filtered out by the user).
    case skipped
    /// An older copy the source library itself never reads.
    case shadowed
    /// The value can't be read off the source device (an Android Keystore key): it must be migrated on that device.
    case sealed
    /// The item has no place in the package (no target).
    case noTarget
    /// Other source items map to the same target key.
    case sharedTargetKey
    /// Another library's item holds the target key.
    case heldByAnotherLibrary
    /// A different item of the package holds the target key.
    case heldByDifferentItem
    /// An item of the package that this migration did not write holds the target key, behind access control:
    /// its value can't be compared without a prompt.
    case heldByUnverifiedItem
    /// The target key changed between the plan and the write: another writer put an item there first.
    case changedAfterPlan
    /// The item was written, but read back different.
    case readBackDiffers
    /// The item can be migrated only with what the run was not given (FacebookConceal's key file, the bundle id,
    /// a service only the app can name, the access control the keychain does not disclose): pending until a run
    /// is given it.
    case needsInput
    /// On the device: the item has access control, and its value is read only through a prompt, which the run
    /// was not allowed to show (``MigrationPolicy/ProtectedSourceItems/leavePending``): pending until a run may
    /// show one (``MigrationPolicy/ProtectedSourceItems/readWithPrompt(_:accessControl:)``).
    case needsPrompt
    /// The target service is the one that holds the migration's own records (``Migration/ledgerService``): no item
    /// is ever written there. Final, as an item without a target is: a run with a service map
    /// (``ImportOptions/serviceMap``) that moves it elsewhere plans it anew (``Migration/run(progress:)`` plans
    /// every item), and a pending item, retried under its old target, would hold a start-up migration open for
    /// good.
    case reservedService

    /// The keychain refusals that can go away on their own, by the user's hand or with an app update: a passcode
    /// set later, biometrics enrolled, the device unlocked, a prompt answered, biometrics no longer locked out, an
    /// access group the app's entitlements did not hold yet (`MISSING_ENTITLEMENT`: app configuration, which an
    /// update can fix).
    public static let transientCodes: Set<KeychainErrorCode> = [
        .PASSCODE_NOT_SET, .BIOMETRY_NOT_ENROLLED, .INTERACTION_NOT_ALLOWED, .USER_CANCELED, .USER_FALLBACK,
        .BIOMETRY_LOCKOUT, .AUTHENTICATION_FAILED, .MISSING_ENTITLEMENT,
    ]

    /// The reason as the JSON report writes it: the `KeychainErrorCode` name, or the case's name.
    public var code: String {
        switch self {
        case .keychain(let code): code.rawValue
        case .noEquivalent: "noEquivalent"
        case .skipped: "skipped"
        case .shadowed: "shadowed"
        case .sealed: "sealed"
        case .noTarget: "noTarget"
        case .sharedTargetKey: "sharedTargetKey"
        case .heldByAnotherLibrary: "heldByAnotherLibrary"
        case .heldByDifferentItem: "heldByDifferentItem"
        case .heldByUnverifiedItem: "heldByUnverifiedItem"
        case .changedAfterPlan: "changedAfterPlan"
        case .readBackDiffers: "readBackDiffers"
        case .needsInput: "needsInput"
        case .needsPrompt: "needsPrompt"
        case .reservedService: "reservedService"
        }
    }

    /// Decodes the reason from its ``code``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let code = try container.decode(String.self)
        guard let reason = MigrationReason(code: code) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown reason code '\(code)'")
        }
        self = reason
    }

    /// Encodes the reason as its ``code``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(code)
    }

    /// The reason a ``code`` names.
    public init?(code: String) {
        if let keychain = KeychainErrorCode(rawValue: code) {
            self = .keychain(keychain)
            return
        }
        let all: [MigrationReason] = [
            .noEquivalent, .skipped, .shadowed, .sealed, .noTarget, .sharedTargetKey, .heldByAnotherLibrary,
            .heldByDifferentItem, .heldByUnverifiedItem, .changedAfterPlan, .readBackDiffers, .needsInput,
            .needsPrompt, .reservedService,
        ]
        guard let found = all.first(where: { $0.code == code }) else { return nil }
        self = found
    }
}

/// Whether an item's outcome can still change on a later run. Raw values are the report's `state` strings.
public enum ItemState: String, Sendable, Codable, CaseIterable {
    /// Nothing a later run can do: migrated, already there, or never migratable (no equivalent protection,
    /// sealed, skipped, shadowed).
    case final
    /// A later run may still migrate it: blocked for a reason that can go away, a conflict, a failed or
    /// unverified write, or (in a dry run) a write to come. A migration with a pending item is not complete.
    case pending
    /// Pending, but the policy says to stop trying (``MigrationPolicy/GiveUp``). It no longer holds the
    /// migration open.
    case givenUp

    /// The state of an action with its reason and, after a run, its result.
    static func of(_ action: MigrationAction, cause: MigrationReason?, result: ItemResult?) -> ItemState {
        switch action {
        case .create:
            return result == .verified ? .final : .pending
        case .exists, .sealed, .shadowed, .skipped:
            return .final
        case .conflict:
            return .pending
        case .blocked:
            if case .keychain(let code) = cause, MigrationReason.transientCodes.contains(code) { return .pending }
            if cause == .needsInput || cause == .needsPrompt { return .pending }
            return .final
        }
    }
}

import ApexKeychain

extension Migration {
    /// The service of the package's own keychain that holds a migration's records (its ledger): internal to the
    /// migration, so tools hide it from listings and keep it from being cleared by mistake.
    public static let ledgerService = Ledger.service

    /// Whether `service` is ``ledgerService`` (byte for byte, as the keychain compares services): reserved for the
    /// migration's records, in every access group. A migration never writes an item there (such an item is
    /// `blocked`, ``MigrationReason/reservedService``), and tools should refuse it as the target of a write.
    public static func isReservedService(_ service: String) -> Bool { ExactText.equal(service, ledgerService) }
}

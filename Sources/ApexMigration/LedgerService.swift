extension Migration {
    /// The service of the package's own keychain that holds a migration's records (its ledger): internal to the
    /// migration, so tools hide it from listings and keep it from being cleared by mistake.
    public static let ledgerService = Ledger.service
}

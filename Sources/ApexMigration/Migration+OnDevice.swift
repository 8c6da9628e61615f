import ApexKeychain

extension Migration {
    /// The start-up migration on the device: the other libraries' items and the package's items are in one
    /// keychain (`database`, through `device`), which is both the source and the target. The database and the
    /// device are given once, so the two can't be given mismatched.
    ///
    /// ```swift
    /// let migration = Migration.onDevice(
    ///     id: MigrationID("legacy-v1")!, importers: [ExpoSecureStoreImporter()], database: database, device: device,
    ///     policy: MigrationPolicy(removeSource: true))
    /// ```
    /// - Parameters:
    ///   - id: names the migration's records (``init(id:importers:source:target:policy:)``).
    ///   - importers: one per library the app used, in order of precedence.
    ///   - database: the keychain the app uses from now on, which holds the old libraries' items too.
    ///   - device: the device the keychain is on.
    ///   - policy: what is allowed; ``MigrationPolicy/protectedSourceItems`` says whether the run may prompt.
    public static func onDevice(
        id: MigrationID, importers: [any Importer], database: any KeychainDatabase, device: any Device,
        policy: MigrationPolicy = .init()
    ) -> Migration {
        Migration(
            id: id, importers: importers, source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device), policy: policy)
    }

    /// Marks the items with access control whose values the source did not read (``DatabaseSource/unread``): the
    /// importers saw records without a value (a `sealed` item) or, for an access control the keychain does not
    /// disclose, with an unknown protection (`blocked`). Each becomes `blocked` with the source's cause (pending
    /// for a prompt not allowed or not passed) and its reason, which says what the app can do. An item an importer
    /// decided on for another reason (skipped, shadowed, an access control without an equivalent) keeps it.
    static func markUnread(_ actions: inout [PlannedAction], _ source: DatabaseSource) {
        guard !source.unread.isEmpty else { return }
        for index in actions.indices {
            guard let unread = source.unread[actions[index].item.origin.location] else { continue }
            let action = actions[index]
            let blockedForIt =
                action.action == .blocked
                && (unread.importerReason.map { action.reason?.contains($0) ?? false } ?? false)
            guard action.action == .sealed || blockedForIt else { continue }
            actions[index].action = unread.cause == .skipped ? .skipped : .blocked
            actions[index].cause = unread.cause
            actions[index].reason = unread.reason
        }
    }
}

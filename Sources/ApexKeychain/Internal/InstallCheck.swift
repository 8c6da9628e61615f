/// What runs before every call of every keychain: the access-group entitlement, then the app's install check.
///
/// The install check is the app's, not one keychain's: it runs on the first call of any keychain of a device, in
/// each device session, before that call reaches the database, and again on every call until it passes.
/// - The marker is set whether or not the app declares `ApexKeychainClearOnReinstall`, so an update that turns
///   the setting on deletes nothing on devices that already had the app.
/// - With the setting, no marker means a new install: the package's own items of the app's default access group
///   are removed (not synchronizable ones, not a shared group's, not another library's), then the marker is
///   recorded. The marker says "this install is clean" only once it is: a removal that fails records nothing, and
///   the call fails, as every call after it does until a removal passes and the marker is recorded. A removal
///   repeated after a crash or an unrecordable marker is harmless: no call went on in between, so it removes only
///   what the first would have removed. The marker is read and the items removed with no other writer of the
///   database in between, so a call of another keychain that passed its check never loses what it wrote.
/// - A marker that can't be read never passes for "no marker", and one that can't be written never for a
///   recorded one. With the setting it fails every call (`INTERACTION_NOT_ALLOWED` before the first unlock, as the platform's
///   preferences read empty then; `INTERNAL` otherwise). Without it, it fails every write with the same error
///   (`setItem`, `setBytes`, `setCredentials`, and `checkWrite`, which answers for one): an item written while
///   the marker is missing would be taken for a new install's by an update that turns the setting on. Calls that
///   write nothing (reads, listings, removals) go on, as nothing is ever removed without the setting.
extension Keychain {
    /// Runs the checks every call begins with.
    /// - Parameter writing: whether the call writes an item (or answers whether a write would pass).
    /// - Returns: the device's state they were made on, for a call that needs it (one look at the device).
    @discardableResult
    func prepare(writing: Bool = false) throws(KeychainError) -> DeviceState {
        if !entitled {
            throw KeychainError(
                .MISSING_ENTITLEMENT,
                "the app's keychain-access-groups entitlement doesn't hold the access group of service '\(service)'")
        }
        let state = device.state()
        if context.installCheckedSession.withLock({ $0.map { ExactText.equal($0, state.session) } ?? false }) {
            return state
        }
        if device.clearOnReinstall {
            try clearIfInstalledAnew(state)
        } else {
            do {
                try markInstalled(state)
            } catch {
                if writing { throw error }
                return state
            }
        }
        context.installCheckedSession.withLock { $0 = state.session }
        return state
    }

    private func clearIfInstalledAnew(_ state: DeviceState) throws(KeychainError) {
        guard state.unlockedSinceBoot else {
            throw KeychainError(
                .INTERACTION_NOT_ALLOWED, "clearOnReinstall can't run before the device is first unlocked")
        }
        // The removal is done (committed, on a store) before the marker is recorded.
        let found = try run {
            try database.exclusively { () throws -> Bool in
                if try markerFound() { return true }
                do throws(KeychainDatabaseError) {
                    try database.delete(
                        matching: ItemQuery(
                            itemClass: .genericPassword, accessGroup: device.defaultAccessGroup,
                            creator: apexCreator, synchronizable: false))
                } catch {
                    throw KeychainError(
                        error.status == .interactionNotAllowed ? .INTERACTION_NOT_ALLOWED : .INTERNAL,
                        "clearOnReinstall can't remove the previous install's items, so no call goes on: \(error.message)"
                    )
                }
                return false
            }
        }
        if !found { try recordMarker() }
    }

    /// Records the install marker when it is missing (without the setting: nothing is removed).
    private func markInstalled(_ state: DeviceState) throws(KeychainError) {
        guard state.unlockedSinceBoot else {
            throw KeychainError(
                .INTERACTION_NOT_ALLOWED,
                "the app's install marker can't be read before the device is first unlocked, so nothing is written")
        }
        if try !markerFound() { try recordMarker() }
    }

    private func markerFound() throws(KeychainError) -> Bool {
        do {
            return try device.hasInstallMarker()
        } catch {
            throw Self.markerError(error, "read")
        }
    }

    private func recordMarker() throws(KeychainError) {
        do {
            try device.setInstallMarker()
        } catch {
            throw Self.markerError(error, "written")
        }
    }

    private static func markerError(_ error: any Error, _ what: String) -> KeychainError {
        if let error = error as? KeychainError { return error }
        return KeychainError(.INTERNAL, "the app's install marker can't be \(what): \(error)")
    }
}

/// What runs before every call of every keychain: the access-group entitlement, then the app's install check.
///
/// The install check is the app's, not one keychain's: it runs on the first call of any keychain of a device, in
/// each device session, before that call reaches the database.
/// - The marker is set whether or not the app declares `ApexKeychainClearOnReinstall`, so an update that turns
///   the setting on deletes nothing on devices that already had the app.
/// - With the setting, no marker means a new install: the marker is recorded, then the package's own items of the
///   app's default access group are removed (not synchronizable ones, not a shared group's, not another
///   library's). The marker is written first: a removal that fails leaves items, never a second removal later.
/// - A marker that can't be read or written never passes for "no marker". With the setting it fails the call
///   (`INTERACTION_NOT_ALLOWED` before the first unlock, as the platform's preferences read empty then;
///   `INTERNAL` otherwise) and deletes nothing; without it the call goes on and the next call checks again.
extension Keychain {
    /// Runs the checks every call begins with.
    /// - Returns: the device's state they were made on, for a call that needs it (one look at the device).
    @discardableResult
    func prepare() throws(KeychainError) -> DeviceState {
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
            guard state.unlockedSinceBoot, (try? markInstalled()) != nil else { return state }
        }
        context.installCheckedSession.withLock { $0 = state.session }
        return state
    }

    private func clearIfInstalledAnew(_ state: DeviceState) throws(KeychainError) {
        guard state.unlockedSinceBoot else {
            throw KeychainError(
                .INTERACTION_NOT_ALLOWED, "clearOnReinstall can't run before the device is first unlocked")
        }
        try run {
            try database.atomically {
                if try markInstalled() { return }
                try database.delete(
                    matching: ItemQuery(
                        itemClass: .genericPassword, accessGroup: device.defaultAccessGroup, creator: apexCreator,
                        synchronizable: false))
            }
        }
    }

    /// Records the install marker when it is missing; returns whether it was there.
    private func markInstalled() throws(KeychainError) -> Bool {
        let found: Bool
        do {
            found = try device.hasInstallMarker()
        } catch {
            throw Self.markerError(error, "read")
        }
        if found { return true }
        do {
            try device.setInstallMarker()
        } catch {
            throw Self.markerError(error, "written")
        }
        return false
    }

    private static func markerError(_ error: any Error, _ what: String) -> KeychainError {
        if let error = error as? KeychainError { return error }
        return KeychainError(.INTERNAL, "the app's install marker can't be \(what): \(error)")
    }
}

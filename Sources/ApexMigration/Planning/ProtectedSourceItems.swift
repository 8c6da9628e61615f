import ApexKeychain

extension MigrationPolicy {
    /// What a run on the device does with the other libraries' items that have access control (react-native-keychain's
    /// `accessControl`, expo-secure-store's `requireAuthentication` items under `<service>:auth`): their values are
    /// read only through a prompt.
    public enum ProtectedSourceItems: Sendable, Equatable {
        /// Don't read them: each is `blocked` and stays ``ItemState/pending`` (``MigrationReason/needsInput``), with a
        /// reason that names this policy, and the migration stays open until a run allows a prompt. A launch never
        /// prompts. The default.
        case leavePending
        /// Read them through one prompt for the run: the device evaluates one request (with `prompt`'s texts), and
        /// the context it leaves opens every protected item's value and the read-back of its target, so the user
        /// sees one prompt, not one per item. A read the shared context doesn't open (`authFailed`,
        /// `interactionNotAllowed`: the item's access control asks for another authentication) falls back to a
        /// prompt of its own. Call it when the app may show a prompt: after the app's UI is up, not at launch.
        ///
        /// A keychain that doesn't disclose an item's access-control constraints (on iOS, other libraries'
        /// items: `apple-secitem.md` §2.4) can't say how the new item must be protected: such an item is never
        /// written weaker, and stays pending unless `accessControl` names the access control the app gave its items
        /// with the old library (react-native-keychain's `accessControl` option, expo's `requireAuthentication`:
        /// `biometryCurrentSet` since expo-secure-store 12.0). The app vouches for it: the new item gets exactly that.
        case readWithPrompt(Prompt, accessControl: AccessControl? = nil)
    }
}

/// What a device keeps of a prompt that passed, for the database's next reads: on iOS, the evaluated `LAContext`
/// that reaches the keychain as `kSecUseAuthenticationContext`, so that the user sees one prompt, not two.
///
/// The core never looks inside one: it hands the context a ``Device`` gave it to the ``KeychainDatabase`` read
/// that follows the prompt, and keeps it with an authValidity window for the reads the window opens. A device
/// whose database needs nothing (the simulated one, a store's) gives none.
public protocol AuthenticationContext: AnyObject, Sendable {}

/// How a prompt ended, and what the device keeps of it for the read that follows.
public struct Authentication: Sendable {
    /// How the prompt ended.
    public var result: AuthenticationResult
    /// The evaluated context, when the prompt passed on a device whose database reads with one.
    public var context: (any AuthenticationContext)?

    /// Creates an outcome.
    public init(result: AuthenticationResult, context: (any AuthenticationContext)? = nil) {
        self.result = result
        self.context = context
    }
}

import ApexKeychain

/// One `LAContext`, as the binding wraps it and the tests script it: what the keychain asks of a context that
/// reaches it as `kSecUseAuthenticationContext`.
public protocol LocalAuthenticationContext: AuthenticationContext {
    /// Whether the context has passed an evaluation of `accessControl` (`evaluateAccessControl` for using the
    /// item, or a policy evaluation that satisfies it), so that a read of an item with it needs no new prompt.
    func hasEvaluated(_ accessControl: SecAccessControlSpec) -> Bool
}

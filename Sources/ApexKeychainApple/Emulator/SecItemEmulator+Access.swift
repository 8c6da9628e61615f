import ApexKeychain
import Foundation

extension DeviceState {
    /// Whether the key of a protection class is available (`apple-secitem.md` §2.9, SecKeybagSupport.c:200–340):
    /// `ak`, `aku` and `akpu` only while unlocked; `ck` and `cku` from the first unlock on; `dk` and `dku` always.
    func classKeyAvailable(_ protection: String) -> Bool {
        switch protection {
        case "ak", "aku", "akpu": !isLocked && unlockedSinceBoot
        case "ck", "cku": unlockedSinceBoot
        default: true
        }
    }
}

extension AuthenticationResult {
    /// The status a SecItem call answers when the keychain's prompt ends this way (SecItem.m:204–216, §2.7):
    /// LAErrorUserCancel → errSecUserCanceled; LAErrorNotInteractive → errSecInteractionNotAllowed; every other
    /// LocalAuthentication error (failed, fallback, lockout, unavailable) → errSecAuthFailed.
    var secItemStatus: SecItemStatus {
        switch self {
        case .success: .success
        case .canceled: .userCanceled
        case .notInteractive: .interactionNotAllowed
        case .failed, .fallback, .lockout, .unavailable: .authFailed
        }
    }
}

extension EmulatorState {
    /// What the device's state does to the stored items, checked at every call.
    mutating func follow(_ device: DeviceState) {
        // "Disabling the device passcode will cause all previously protected items to be deleted" (SecItem.h:585–594,
        // secd-81-item-acl.m `item_with_akpu`, §2.10).
        if !device.passcodeSet { rows.removeAll { $0.protection == "akpu" } }
        // A biometryCurrentSet item is invalidated when the enrolled set changes (SecAccessControl.h, §2.7, last
        // bullet): the Secure Enclave key that opens its data is gone, for good. Its metadata isn't sealed by that
        // key, so its row stays and its attributes still list; a read of its data finds nothing (§2.4: rows that
        // can't be decrypted are skipped; Valet treats such items as removed, §2.7). A delete removes it.
        for index in rows.indices where !rows[index].invalidated {
            guard let spec = rows[index].accessControl, spec.flags.contains(.biometryCurrentSet) else { continue }
            if rows[index].enrolledSet != device.enrolledSet { rows[index].invalidated = true }
        }
    }

    /// Whether a search that decrypts (`r_Data`, `r_Ref`) may return a row, asking the user when the row's
    /// access control needs it (SecItemAuthDo, SecItem.m:1496–1576, §2.7).
    /// - Parameter satisfied: the access controls a prompt of this call passed: the client layer evaluates one
    ///   context per call and retries with it, so one prompt opens every row with the same access control.
    /// - Returns: false when `u_AuthUIS` skips the row.
    /// - Throws: errSecInteractionNotAllowed when no prompt may be shown; how the prompt failed otherwise.
    mutating func authorizeRead(
        _ row: EmulatorRow, _ query: ParsedQuery, satisfied: inout Set<SecAccessControlSpec>
    ) throws(EmulatorFailure) -> Bool {
        guard let spec = row.accessControl, spec.hasConstraints else { return true }
        // An already evaluated context passes without UI (SecItem.h:1023–1032; kSecUseAuthenticationContext).
        if satisfied.contains(spec) || query.contextSatisfies(spec) { return true }
        // `u_AuthUIS`: rows that answer errSecAuthNeeded are dropped (SecItemDb.c:1074–1077, `q_skip_acl_items`).
        if query.authenticationUI == SecItemConstant.authenticationUISkip { return false }
        // `u_AuthUIF`, `u_NoAuthUI`, or an LAContext with interactionNotAllowed: no UI → errSecInteractionNotAllowed
        // (SecItem.m:1545–1550, §2.7).
        if query.authenticationUI == SecItemConstant.authenticationUIFail || query.context == .nonInteractive {
            throw EmulatorFailure(.interactionNotAllowed)
        }
        // Otherwise the client evaluates the access control on the caller's context, or on a new one (a library's
        // own query with `u_OpPrompt`): the user sees a prompt, whose outcome the test scripts.
        promptsShown += 1
        let status = promptOutcome.secItemStatus
        guard status == .success else { throw EmulatorFailure(status) }
        satisfied.insert(spec)
        return true
    }

    /// Whether SecItemUpdate may change a row. Updating an item whose access control has constraints reads the
    /// old item's data, which needs the user (`apple-secitem.md` §2.5; practice: Valet removes and re-adds such
    /// items "to prevent … calling SecItemUpdate … which would cause iOS to prompt"). What iOS answers is
    /// UNCONFIRMED (§6); the emulator's choice: a context that has evaluated the access control passes, anything
    /// else — no context, a non-interactive one, a prompt string — is errSecInteractionNotAllowed, so that a
    /// caller that updates such an item in place is caught. It never prompts on an update.
    func authorizeUpdate(_ row: EmulatorRow, _ query: ParsedQuery) throws(EmulatorFailure) {
        guard let spec = row.accessControl, spec.hasConstraints, !query.contextSatisfies(spec) else { return }
        throw EmulatorFailure(.interactionNotAllowed)
    }
}

extension ParsedQuery {
    /// Whether the query's `u_AuthCtx` has evaluated `spec`.
    func contextSatisfies(_ spec: SecAccessControlSpec) -> Bool {
        guard case .evaluated(let context)? = context, let context = context as? any LocalAuthenticationContext
        else { return false }
        return context.hasEvaluated(spec)
    }
}

extension SimulatedDevice.Evaluation: LocalAuthenticationContext {
    /// Whether the prompt this evaluation passed was for `accessControl`: its request names the item's access
    /// control, whose flags are the ones the item was written with.
    public func hasEvaluated(_ accessControl: SecAccessControlSpec) -> Bool {
        request.accessControl.flags == accessControl.flags
    }
}

import Foundation

/// The argument rules of the storage model, shared by every call.
enum Validation {
    /// The longest authValidity, in seconds.
    static let maxAuthValidity = 2_147_483_647

    /// A key or a service: non-empty, at most 256 UTF-16 code units, no U+0000 (``NameProblem``).
    static func name(_ value: String, _ what: String) throws(KeychainError) {
        switch NameProblem(of: value) {
        case nil: return
        case .empty: throw .invalid("\(what) must not be empty")
        case .tooLong: throw .invalid("\(what) is longer than \(NameProblem.maxLength) characters")
        case .containsNUL: throw .invalid("\(what) must not contain U+0000")
        }
    }

    /// A stored string (value, label, username, password): no U+0000. Names the field, never the content.
    static func storedString(_ value: String, _ what: String) throws(KeychainError) {
        if value.utf8.contains(0) { throw .invalid("\(what) must not contain U+0000") }
    }

    /// A stored string given as bytes: UTF-8 (ASCII is told at once) without U+0000. Names the field, never the
    /// content.
    static func storedText(_ value: Data, _ what: String) throws(KeychainError) {
        let (utf8, nul) = value.withUnsafeBytes { raw in
            (raw.allSatisfy { $0 < 0x80 } || String(validUTF8: raw) != nil, raw.contains(0))
        }
        guard utf8 else { throw .invalid("\(what) is not UTF-8") }
        if nul { throw .invalid("\(what) must not contain U+0000") }
    }

    /// The combinations the storage model forbids.
    static func protection(
        accessible: Accessible, accessControl: AccessControl, authValidity: Int, synchronizable: Bool
    ) throws(KeychainError) {
        guard (0...maxAuthValidity).contains(authValidity) else {
            throw .invalid("authValidity must be between 0 and \(maxAuthValidity) seconds")
        }
        if accessControl.isBoundToCurrentSet, authValidity > 0 {
            throw .invalid(
                "accessControl '\(accessControl.rawValue)' can't have authValidity > 0: every read must check the enrolled biometrics"
            )
        }
        if synchronizable, accessible.isThisDeviceOnly {
            throw .invalid("synchronizable items can't be '\(accessible.rawValue)'")
        }
        if synchronizable, accessControl != .none {
            throw .invalid("synchronizable items can't have accessControl '\(accessControl.rawValue)'")
        }
    }
}

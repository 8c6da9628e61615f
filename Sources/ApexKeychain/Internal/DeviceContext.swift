import Foundation

/// What the package keeps per device object for as long as it lives, shared by every ``Keychain`` on it: the
/// prompt queue and authValidity windows, the session whose install check passed, the warnings given, and the
/// last write's metadata bytes.
final class DeviceContext: Sendable {
    private struct Entry: Sendable {
        weak var device: (any Device)?
        let context: DeviceContext
    }

    private static let contexts = Locked<[ObjectIdentifier: Entry]>([:])

    /// The context of `device` (one per device object while it lives). A new one asks the device to tell it when
    /// the session ends, and then closes every authValidity window (``PromptCoordinator/endSession()``).
    static func of(_ device: any Device) -> DeviceContext {
        let (context, made) = contexts.withLock { contexts in
            let id = ObjectIdentifier(device)
            if let entry = contexts[id], entry.device === device { return (entry.context, false) }
            contexts = contexts.filter { $0.value.device != nil }
            let context = DeviceContext()
            contexts[id] = Entry(device: device, context: context)
            return (context, true)
        }
        if made { device.whenSessionEnds { [weak context] in context?.prompts.endSession() } }
        return context
    }

    /// Shows the device's prompts one at a time and keeps its authValidity windows.
    let prompts = PromptCoordinator()
    /// The device session (launch and foreground) in which the install check last passed.
    let installCheckedSession = Locked<String?>(nil)
    private let warned = Locked<Set<KeychainWarning.Code>>([])
    /// The metadata of the last write and its bytes: writes in a row (a migration's thousands) mostly keep the
    /// same, and encoding it was about a fifteenth of a write.
    private let lastMetadata = Locked<(metadata: ItemMetadata, encoded: Data)?>(nil)

    /// `metadata.encoded()`, the bytes kept from the last call when its metadata was the same.
    func encoded(_ metadata: ItemMetadata) -> Data {
        let kept = lastMetadata.withLock { last in last.flatMap { $0.metadata == metadata ? $0.encoded : nil } }
        if let kept { return kept }
        let encoded = metadata.encoded()
        lastMetadata.withLock { $0 = (metadata, encoded) }
        return encoded
    }

    /// Gives `device` the warning `code` once for as long as this context lives.
    func warnOnce(_ device: any Device, _ code: KeychainWarning.Code, _ message: @autoclosure () -> String) {
        guard warned.withLock({ $0.insert(code).inserted }) else { return }
        device.warn(KeychainWarning(code, message()))
    }
}

import ApexKeychain
import Foundation

/// How a ``DatabaseSource`` opens the items with access control: one prompt for the run, its context reused.
extension DatabaseSource {
    /// Why a protected item's value was not read.
    enum OpenFailure: Error {
        /// The item went between the listing and the read.
        case gone
        /// The prompt, or the keychain, refused: the reason can go away (a cancelled prompt, a locked device).
        case refused(KeychainErrorCode, String)
        /// The value can't be opened.
        case damaged(String)
    }

    /// What ``open(_:_:_:_:)`` read.
    struct Opened {
        /// Each item's value, or why there is none, in the order asked.
        var results: [Result<Data, OpenFailure>]
        /// The contexts the prompts that passed left, with the access control each was evaluated for.
        var authentications: [(accessControl: AccessControl, context: any AuthenticationContext)]
    }

    /// Reads the values of `items` (each with the access control it is protected by) through as few prompts as
    /// the platform allows: one `Device.evaluate` per access control among them (one for the run, when they share
    /// one), whose context opens every item of that access control (`apple-secitem.md` §3.2: an evaluated context
    /// satisfies the item's ACL without new UI). A read that the shared context doesn't open (`authFailed` or
    /// `interactionNotAllowed`) falls back to a prompt of its own for that item.
    static func open(
        _ items: [(attributes: ItemAttributes, accessControl: AccessControl)], _ database: any KeychainDatabase,
        _ device: any Device, _ prompt: Prompt
    ) async -> Opened {
        var results = [Result<Data, OpenFailure>?](repeating: nil, count: items.count)
        var opened = Opened(results: [], authentications: [])
        var order: [AccessControl] = []
        var groups: [AccessControl: [Int]] = [:]
        for (index, item) in items.enumerated() {
            if groups[item.accessControl] == nil { order.append(item.accessControl) }
            groups[item.accessControl, default: []].append(index)
        }
        for accessControl in order {
            let members = groups[accessControl] ?? []
            guard let first = members.first else { continue }
            let shared = await device.evaluate(request(items[first].attributes, accessControl, prompt))
            guard shared.result == .success else {
                let failure = refusal(shared.result, accessControl, device.state())
                for index in members { results[index] = .failure(failure) }
                continue
            }
            if let context = shared.context { opened.authentications.append((accessControl, context)) }
            for index in members {
                let key = items[index].attributes.primaryKey
                do throws(KeychainDatabaseError) {
                    results[index] = .success(try database.value(for: key, authentication: shared.context))
                } catch  where error.status == .authFailed || error.status == .interactionNotAllowed {
                    // The shared context does not open this item: a prompt of its own.
                    let own = await device.evaluate(request(items[index].attributes, accessControl, prompt))
                    guard own.result == .success else {
                        results[index] = .failure(refusal(own.result, accessControl, device.state()))
                        continue
                    }
                    do throws(KeychainDatabaseError) {
                        results[index] = .success(try database.value(for: key, authentication: own.context))
                    } catch {
                        results[index] = .failure(failure(error))
                    }
                } catch {
                    results[index] = .failure(failure(error))
                }
            }
        }
        opened.results = results.map { $0 ?? .failure(.refused(.INTERNAL, "the item was not read")) }
        return opened
    }

    /// The prompt for an item of `accessControl`: the request names the item's own access control and class, so
    /// that a device that evaluates the item's access control (iOS `evaluateAccessControl`) evaluates the right one.
    static func request(
        _ item: ItemAttributes, _ accessControl: AccessControl, _ prompt: Prompt
    ) -> AuthenticationRequest {
        AuthenticationRequest(
            policy: Keychain.promptPolicy(for: accessControl), prompt: prompt, service: item.service, key: item.account,
            accessControl: accessControl, accessible: item.protectionDomain.accessible)
    }

    /// A prompt that did not pass, as the refusal of the items it was for.
    static func refusal(
        _ result: AuthenticationResult, _ accessControl: AccessControl, _ state: DeviceState
    ) -> OpenFailure {
        switch result {
        case .success: return .refused(.INTERNAL, "the prompt passed but the item was not read")
        case .canceled: return .refused(.USER_CANCELED, "the user canceled the prompt")
        case .fallback: return .refused(.USER_FALLBACK, "the user chose the fallback button")
        case .failed: return .refused(.AUTHENTICATION_FAILED, "the user failed to authenticate")
        case .lockout: return .refused(.BIOMETRY_LOCKOUT, "biometrics are locked out after too many attempts")
        case .notInteractive: return .refused(.INTERACTION_NOT_ALLOWED, "no prompt can be shown here")
        case .unavailable:
            if !accessControl.usesBiometry || !state.passcodeSet {
                return .refused(.PASSCODE_NOT_SET, "the item needs a device passcode, and none is set")
            }
            return .refused(.BIOMETRY_NOT_ENROLLED, "no biometrics are enrolled")
        }
    }

    /// A read the keychain refused, as the item's failure.
    static func failure(_ error: KeychainDatabaseError) -> OpenFailure {
        switch error.status {
        case .itemNotFound: .gone
        case .userCanceled: .refused(.USER_CANCELED, "the user canceled the prompt")
        case .authFailed: .refused(.AUTHENTICATION_FAILED, "the keychain refused the authentication")
        case .interactionNotAllowed: .refused(.INTERACTION_NOT_ALLOWED, "the item can't be read now")
        default: .damaged("the value can't be read: \(error.status.rawValue)")
        }
    }
}

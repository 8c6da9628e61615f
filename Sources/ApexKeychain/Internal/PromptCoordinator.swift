/// Shows one device's prompts one at a time, in the order the reads asked, and keeps its authValidity windows
/// with the context each window's prompt left.
///
/// Every keychain on a device shares the device's coordinator (``DeviceContext``). A window belongs to one device
/// session (a launch, until the app goes to the background), one service and one access control; it lives in
/// memory only, so the first read after start always prompts. It is opened by a prompt of a read whose
/// authValidity is above 0, and lasts that read's authValidity; a read uses it only if its own authValidity is
/// above 0, and only while the last prompt that passed is no older than its own authValidity (on Android each
/// key's Keystore validity is an outer limit). A later prompt of the same service and access control never
/// shortens it: the window stays open until the latest end any of its prompts gave it, and closes only then or
/// when the session ends.
///
/// A window keeps the ``AuthenticationContext`` of the last prompt that passed for it (seed 000: "the LAContext
/// that passed is kept per service and accessControl for that many seconds and handed to the next reads"), and a
/// read the window opens is handed that context. The contexts are dropped with their windows:
/// - every window at once when the session ends (seed 000: "it is dropped when the app goes to the background"):
///   ``endSession()``, which the device calls at the transition (``Device/whenSessionEnds(_:)``); on a device that
///   doesn't tell, at the first read of the next session, whose device state names another session;
/// - a window that closed, when a read finds it so;
/// - the windows that keep a context the keychain refused, at once (``forget(_:)``), so that the next read prompts.
actor PromptCoordinator {
    private struct WindowKey: Hashable {
        var session: String
        var service: String
        var accessControl: AccessControl

        static func == (a: WindowKey, b: WindowKey) -> Bool {
            ExactText.equal(a.session, b.session) && ExactText.equal(a.service, b.service)
                && a.accessControl == b.accessControl
        }

        func hash(into hasher: inout Hasher) {
            ExactText.hash(session, into: &hasher)
            ExactText.hash(service, into: &hasher)
            hasher.combine(accessControl)
        }
    }

    /// Past this many windows in one session, the closed ones are dropped.
    private static let maxWindows = 4096

    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private struct Window {
        /// When the last prompt that kept its context passed.
        var passedAt: Double
        /// When the window closes: the latest end its prompts gave it.
        var closesAt: Double
        /// What the last prompt that passed for it left, for the reads it opens.
        var context: (any AuthenticationContext)?
    }

    private struct Windows {
        var byKey: [WindowKey: Window] = [:]
        /// The session of the windows kept: those of an earlier one are closed for good. Nil once it ended.
        var session: String?
    }

    /// Behind a lock of its own rather than the actor, so that the end of a session and a refused context drop
    /// their contexts at once, from whatever thread tells.
    private let windows = Locked(Windows())

    /// Authorises one read of an item with `request.accessControl`: no prompt while a window is open for it (see
    /// the type's rules), and the window's context; otherwise one prompt through ``Device/evaluate(_:)``, after
    /// every prompt asked for before it, and the context it left.
    func authorize(device: any Device, request: AuthenticationRequest, authValidity: Int) async -> Authentication {
        await acquire()
        defer { release() }
        let before = device.state()
        let key = WindowKey(session: before.session, service: request.service, accessControl: request.accessControl)
        let open = windows.withLock { w -> Authentication? in
            if let session = w.session, !ExactText.equal(session, before.session) { w.byKey = [:] }
            w.session = before.session
            guard let window = w.byKey[key] else { return nil }
            if before.uptime >= window.closesAt {
                w.byKey[key] = nil
            } else if authValidity > 0, before.uptime - window.passedAt < Double(authValidity) {
                return Authentication(result: .success, context: window.context)
            }
            return nil
        }
        if let open { return open }
        let authentication = await device.evaluate(request)
        if authentication.result == .success, authValidity > 0 {
            let after = device.state()
            windows.withLock { w in
                // The app went to the background during the prompt (its session ended, or another one is named):
                // the prompt's context opens no window of the new session.
                guard let session = w.session, ExactText.equal(session, before.session),
                    ExactText.equal(after.session, before.session)
                else { return }
                if w.byKey.count >= Self.maxWindows {
                    w.byKey = w.byKey.filter { after.uptime < $0.value.closesAt }
                }
                let now = after.uptime
                let closesAt = now + Double(authValidity)
                w.byKey[key] = Window(
                    passedAt: now, closesAt: max(closesAt, w.byKey[key]?.closesAt ?? closesAt),
                    context: authentication.context)
            }
        }
        return authentication
    }

    /// Closes every window at once, dropping the contexts they keep: the device's session ended (the app went to
    /// the background). A read after it prompts.
    nonisolated func endSession() {
        windows.withLock { $0 = Windows() }
    }

    /// Drops the windows that keep `context`: the keychain refused a read with it, so it opens nothing any more,
    /// and the next read of those windows prompts.
    nonisolated func forget(_ context: any AuthenticationContext) {
        windows.withLock { w in w.byKey = w.byKey.filter { $0.value.context !== context } }
    }

    /// How many reads wait for the prompt on screen (tests use it to know a read has queued).
    var waitingCount: Int { waiting.count }

    private func acquire() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            busy = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}

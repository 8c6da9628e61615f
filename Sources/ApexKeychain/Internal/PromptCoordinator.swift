/// Shows one device's prompts one at a time, in the order the reads asked, and keeps its authValidity windows.
///
/// Every keychain on a device shares the device's coordinator (``DeviceContext``). A window belongs to one device
/// session (a launch, until the app goes to the background), one service and one access control; it lives in
/// memory only, so the first read after start always prompts. It is opened by a prompt of a read whose
/// authValidity is above 0, and lasts that read's authValidity; a read uses it only if its own authValidity is
/// above 0, and only while the last prompt that passed is no older than its own authValidity (on Android each
/// key's Keystore validity is an outer limit). A later prompt of the same service and access control never
/// shortens it: the window stays open until the latest end any of its prompts gave it, and closes only then or
/// when the session ends.
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

    /// Past this many windows, those of other sessions (closed for good) are dropped.
    private static let maxWindows = 4096

    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private struct Window {
        /// When the last prompt that kept its context passed.
        var passedAt: Double
        /// When the window closes: the latest end its prompts gave it.
        var closesAt: Double
    }

    private var windows: [WindowKey: Window] = [:]

    /// Authorises one read: no prompt while a window is open for it (see the type's rules); otherwise one
    /// prompt, after every prompt asked for before it.
    func authorize(
        device: any Device, request: AuthenticationRequest, accessControl: AccessControl, authValidity: Int
    ) async -> AuthenticationResult {
        await acquire()
        defer { release() }
        let before = device.state()
        let key = WindowKey(session: before.session, service: request.service, accessControl: accessControl)
        if authValidity > 0, let window = windows[key], before.uptime < window.closesAt,
            before.uptime - window.passedAt < Double(authValidity)
        {
            return .success
        }
        let result = await device.authenticate(request)
        if result == .success, authValidity > 0 {
            if windows.count >= Self.maxWindows {
                windows = windows.filter { ExactText.equal($0.key.session, before.session) }
            }
            let now = device.state().uptime
            let closesAt = now + Double(authValidity)
            windows[key] = Window(passedAt: now, closesAt: max(closesAt, windows[key]?.closesAt ?? closesAt))
        }
        return result
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

import Synchronization

/// Shows one device's prompts one at a time, in the order the reads asked, and keeps its authValidity windows.
///
/// Every keychain on a device shares the device's coordinator. A window belongs to one device session (a launch,
/// until the app goes to the background), one service and one access control; it lives in memory only, so the
/// first read after start always prompts.
actor PromptCoordinator {
    private struct Entry: Sendable {
        weak var device: (any Device)?
        let coordinator: PromptCoordinator
    }

    private static let coordinators = Mutex<[ObjectIdentifier: Entry]>([:])

    /// The coordinator of `device` (one per device object while it lives).
    static func of(_ device: any Device) -> PromptCoordinator {
        coordinators.withLock { coordinators in
            let id = ObjectIdentifier(device)
            if let entry = coordinators[id], entry.device === device { return entry.coordinator }
            coordinators = coordinators.filter { $0.value.device != nil }
            let coordinator = PromptCoordinator()
            coordinators[id] = Entry(device: device, coordinator: coordinator)
            return coordinator
        }
    }

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
    private var openedAt: [WindowKey: Double] = [:]

    /// Authorises one read: no prompt while a window opened by an earlier prompt is still open for
    /// `authValidity` seconds; otherwise one prompt, after every prompt asked for before it.
    func authorize(
        device: any Device, request: AuthenticationRequest, accessControl: AccessControl, authValidity: Int
    ) async -> AuthenticationResult {
        await acquire()
        defer { release() }
        let before = device.state()
        let key = WindowKey(session: before.session, service: request.service, accessControl: accessControl)
        if authValidity > 0, let opened = openedAt[key], before.uptime - opened < Double(authValidity) {
            return .success
        }
        let result = await device.authenticate(request)
        if result == .success {
            if openedAt.count >= Self.maxWindows {
                openedAt = openedAt.filter { ExactText.equal($0.key.session, before.session) }
            }
            openedAt[key] = device.state().uptime
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

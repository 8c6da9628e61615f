extension SecItemEmulator {
    /// One call the emulator answered: one keychain round trip.
    public struct Call: Sendable, Equatable {
        /// Which of the four calls.
        public enum Kind: String, Sendable, Equatable, CaseIterable {
            /// `SecItemAdd`.
            case add
            /// `SecItemCopyMatching`.
            case copyMatching
            /// `SecItemUpdate`.
            case update
            /// `SecItemDelete`.
            case delete
        }

        /// Which call.
        public let kind: Kind
        /// The dictionary it was made with (the attributes of an add, the query of the others).
        public let query: SecItemDictionary
        /// SecItemUpdate's `attributesToUpdate`; nil for the other calls.
        public let attributesToUpdate: SecItemDictionary?
        /// What the call answered.
        public let status: SecItemStatus

        /// Records a call.
        public init(
            kind: Kind, query: SecItemDictionary, attributesToUpdate: SecItemDictionary? = nil, status: SecItemStatus
        ) {
            self.kind = kind
            self.query = query
            self.attributesToUpdate = attributesToUpdate
            self.status = status
        }
    }

    /// Every call since the emulator was made or ``resetCalls()`` was, in order.
    public var calls: [Call] { state.withLock { $0.calls } }

    /// Forgets the calls made so far (the items stay).
    public func resetCalls() { state.withLock { $0.calls.removeAll() } }

    /// How many calls of one kind ``calls`` holds.
    public func count(of kind: Call.Kind) -> Int { state.withLock { s in s.calls.count { $0.kind == kind } } }
}

extension EmulatorState {
    /// Records a call and passes its status on.
    mutating func record(
        _ kind: SecItemEmulator.Call.Kind, _ query: SecItemDictionary, _ attributesToUpdate: SecItemDictionary? = nil,
        status: SecItemStatus
    ) -> SecItemStatus {
        calls.append(
            SecItemEmulator.Call(kind: kind, query: query, attributesToUpdate: attributesToUpdate, status: status))
        return status
    }
}

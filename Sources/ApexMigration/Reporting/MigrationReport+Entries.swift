extension MigrationReport {
    /// One item of a plan or a run, with the action and state such a report always gives it (an inventory's
    /// items have neither). Every other field is the item's own (`entry.source`, `entry.cause`, `entry.result`…).
    @dynamicMemberLookup
    public struct Entry: Sendable, Equatable {
        /// The item as the report holds it.
        public var item: Item
        /// What the plan does.
        public var action: MigrationAction
        /// Whether a later run may still change it.
        public var state: ItemState

        /// The item's field at `keyPath`.
        public subscript<T>(dynamicMember keyPath: KeyPath<Item, T>) -> T { item[keyPath: keyPath] }
    }

    /// The items of a plan or a run (``Migration/Outcome/ran(_:)``), each with its action and state not optional;
    /// empty for an inventory (`inspect`), whose items have none.
    public var entries: [Entry] {
        items.compactMap { item in
            guard let action = item.action, let state = item.state else { return nil }
            return Entry(item: item, action: action, state: state)
        }
    }

    /// The entry of the item whose key is `key` in the target (its ``ItemTarget/key``), the first when several
    /// share it; nil when none has.
    public func entry(forKey key: String) -> Entry? {
        entries.first { $0.item.target?.key == key }
    }
}

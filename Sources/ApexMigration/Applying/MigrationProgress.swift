/// How far a run's writes have got: what its progress callback is told (``Migration/run(progress:)``), as each
/// batch of items is written and read back, and once more when the last one is.
public struct MigrationProgress: Sendable, Equatable {
    /// The items done so far: written and read back, or failed. At most ``total``.
    public let done: Int
    /// The items the run writes (the plan's `create`s); the others need no write.
    public let total: Int

    /// `done` of `total` items done.
    public init(done: Int, total: Int) {
        self.done = done
        self.total = total
    }

    /// The share of the items done, from 0 to 1; 1 when there is nothing to write.
    public var fractionDone: Double { total > 0 ? Double(min(done, total)) / Double(total) : 1 }

    /// Whether every item is done.
    public var isFinished: Bool { done >= total }
}

import Foundation
import Synchronization

/// `migrate`'s progress on stderr (a terminal): a bar with a count and a rate, drawn only once the run has taken
/// over ``delay``, so that a quick run prints nothing but its report.
///
///     migrating [=========>              ]  1200/3000 items, 850 items/s
///
/// The line is redrawn in place at most every ``interval``, and ends with a newline: when every item is done, or
/// by ``end()`` when the run stops early, so that an error never runs into it.
final class ProgressBar: Sendable {
    /// How long a run goes before the bar appears.
    static let delay = Duration.seconds(1)
    /// The shortest time between two redraws.
    static let interval = Duration.milliseconds(100)
    /// The bar's width between its brackets.
    static let width = 24

    private struct State {
        /// Whether a line is on the terminal, not yet ended by a newline.
        var open = false
        var lastDrawn: ContinuousClock.Instant?
        /// The first count reported and when: the rate is measured from there.
        var first: (done: Int, at: ContinuousClock.Instant)?
    }

    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private let state = Mutex(State())
    private let write: @Sendable (String) -> Void

    /// A bar whose time starts now, written with `write` (stderr by default).
    init(write: @escaping @Sendable (String) -> Void = { Console.writeError($0) }) {
        start = clock.now
        self.write = write
    }

    /// Records that `done` of `total` items are done, and redraws the bar when it is due.
    func update(done: Int, total: Int) {
        let now = clock.now
        state.withLock { state in
            if state.first == nil { state.first = (done, now) }
            let finished = done >= total
            guard now - start >= Self.delay else { return }
            if !finished, let last = state.lastDrawn, now - last < Self.interval { return }
            state.lastDrawn = now
            var rate: Double?
            if let first = state.first, done > first.done {
                let elapsed = (now - first.at).components
                let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
                if seconds > 0 { rate = Double(done - first.done) / seconds }
            }
            write("\r" + Self.line(done: done, total: total, rate: rate) + "\u{1B}[K" + (finished ? "\n" : ""))
            state.open = !finished
        }
    }

    /// Ends a line left open by a run that stopped before its last item.
    func end() {
        state.withLock { state in
            if state.open { write("\n") }
            state.open = false
        }
    }

    /// `migrating [=====>     ]   120/500 items, 85 items/s`; the count is padded to the total's width, so that
    /// the line keeps its length.
    static func line(done: Int, total: Int, rate: Double?) -> String {
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 1
        let filled = Int((fraction * Double(width)).rounded(.down))
        var bar = String(repeating: "=", count: filled)
        if filled < width { bar += ">" + String(repeating: " ", count: width - filled - 1) }
        let count = String(done)
        let padding = String(repeating: " ", count: max(0, String(total).count - count.count))
        let speed = rate.map { "\(Int($0.rounded())) items/s" } ?? "- items/s"
        return "migrating [\(bar)] \(padding)\(count)/\(total) items, \(speed)"
    }
}

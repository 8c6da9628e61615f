import Dispatch
import Foundation

/// The clock of a run's batching and timings: `DispatchTime`'s uptime in nanoseconds, which every platform the
/// package declares has (iOS 15.1, macOS 12), where `ContinuousClock` and `Duration` need iOS 16 and macOS 13.
/// It never goes back; on Apple platforms it stands still while the device sleeps, which a batch's few
/// milliseconds and a run's stages, measured while the app runs, don't notice.
struct MonotonicClock: Sendable {
    /// A point in time, in nanoseconds since an unspecified start (the system's boot).
    struct Instant: Sendable, Comparable {
        /// Nanoseconds since the clock's start.
        var nanoseconds: UInt64

        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

        /// The time from `rhs` to `lhs`, in seconds (negative when `lhs` comes first).
        static func - (lhs: Instant, rhs: Instant) -> TimeInterval {
            lhs >= rhs
                ? TimeInterval(lhs.nanoseconds - rhs.nanoseconds) / 1e9
                : -TimeInterval(rhs.nanoseconds - lhs.nanoseconds) / 1e9
        }
    }

    /// The current instant.
    var now: Instant { Instant(nanoseconds: DispatchTime.now().uptimeNanoseconds) }
}

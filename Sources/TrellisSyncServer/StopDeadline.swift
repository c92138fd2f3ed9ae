import Foundation
import Logging
import Synchronization

/// The latest moment a stopping server process may still run (docs/SYNC.md, "Shutdown"). Armed
/// when the stop begins (SIGTERM or SIGINT, the parent process gone, a service that ended); if
/// the process is still running then, it logs why and exits with status 1.
///
/// The deadline waits on a kernel thread of its own, not in a task: main.swift cancels every
/// task of the server once the HTTP server has stopped, and a cancelled fallback is gone exactly
/// when it is needed. What it bounds is what ignores cancellation: PostgresNIO's queries, its
/// `LISTEN` and its connection pool wait for a PostgreSQL that stopped answering (stopped, or on
/// the far side of a network that drops packets) for as long as the TCP connection stays up
/// (vapor/postgres-nio issue 599). A thread also fires when every thread of the cooperative pool
/// is held.
final class StopDeadline: Sendable {
    /// The earliest deadline armed so far.
    private let armed = Mutex<ContinuousClock.Instant?>(nil)
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Exits the process at `deadline` (logging `reason`) unless it has ended before; an earlier
    /// deadline armed before stays.
    func arm(at deadline: ContinuousClock.Instant, reason: String) {
        let isEarliest = armed.withLock { armed in
            if let earlier = armed, earlier <= deadline { return false }
            armed = deadline
            return true
        }
        guard isEarliest else { return }
        let logger = logger
        Thread.detachNewThread {
            let clock = ContinuousClock()
            while clock.now < deadline {
                let left = clock.now.duration(to: deadline).components
                Thread.sleep(forTimeInterval: Double(left.seconds) + Double(left.attoseconds) / 1e18)
            }
            logger.error("\(reason): exiting now (status 1)")
            exit(1)
        }
    }

    /// ``arm(at:reason:)`` `after` from now.
    func arm(after delay: Duration, reason: String) {
        arm(at: ContinuousClock.now + delay, reason: reason)
    }
}

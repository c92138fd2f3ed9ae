/// Time a wait has had to run, not time on the wall clock: each poll counts at most
/// ``longestStep``. A wall-clock deadline charges a wait for the time the whole test process
/// stood still: in full parallel runs at load ~25 the long synchronous tests have held every
/// thread of the cooperative pool for minutes (897 of 927 tests reported "passed after 903 s"
/// at the same instant), and waits then woke past their deadline before the work they waited
/// for had had a turn, and failed. A wait that really hangs still uses its patience up, one poll
/// at a time, and fails. The one copy for the test targets.
public struct RunningTime: Sendable {
    /// The most one poll counts.
    public static let longestStep: Duration = .milliseconds(100)
    /// The patience.
    public let limit: Duration
    private var spent: Duration = .zero
    private var last = ContinuousClock.now

    /// Patience of `limit`, counted from now.
    public init(_ limit: Duration) { self.limit = limit }

    /// Patience of `seconds`, counted from now.
    public init(seconds: Double) { limit = .milliseconds(Int64(seconds * 1000)) }

    /// Counts the time since the last poll (at most ``longestStep``); true once over ``limit``.
    public mutating func isUsedUp() -> Bool {
        let now = ContinuousClock.now
        spent += min(now - last, Self.longestStep)
        last = now
        return spent >= limit
    }
}

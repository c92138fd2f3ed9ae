import Foundation

/// Where sync sessions and the history watch run, so that one user's large uploads cannot hold
/// up another user's small ones (issue 36 item 4; docs/SYNC.md, "Limits").
///
/// A large message costs CPU in proportion to its size before any of it reaches PostgreSQL:
/// unmasking the WebSocket frame (done by the task that reads the connection), checking its
/// UTF-8, decoding it, checking and merging it, encoding its documents; reading what it added to
/// the history costs as much again. On Swift's cooperative pool (a thread per core, no
/// preemption) each of these jobs holds a thread until it is done, and on a two-core server two
/// of them (an upload and the history watch reading the previous one) hold every thread: each
/// other session's upload then waits for one to end, seconds for a 16 MB message in a debug
/// build (measured in docs/SYNC.md, "Fairness between users").
///
/// So each connection's reading task, its session and the history watch run on ``executor``,
/// ``threadCount`` kernel threads that take jobs in arrival order: a long job holds one of them,
/// the other sessions' jobs run on the others, and the kernel shares the CPU between them in
/// time slices of a few milliseconds instead of making them wait for it. Large jobs of more
/// connections than there are threads queue behind each other; the rate limits per connection
/// (``ConnectionRateLimit``) bound how often one connection can start one.
enum SessionThreads {
    static let threadCount = max(16, 4 * ProcessInfo.processInfo.activeProcessorCount)
    static let executor = ThreadPoolExecutor(name: "trellis-sync session", threads: threadCount)
}

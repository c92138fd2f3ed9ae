import Foundation

/// The lock a write transaction of this process holds for its whole life (and an opening of
/// database handles for its short read): it may be released on another thread than the one that
/// took it (a write transaction of an actor-confined Realm may end on another thread), and it
/// traps instead of deadlocking when the thread holding it asks again.
///
/// Waiters take turns in the order they came, threads and `asyncWrite` tasks alike: when the
/// gate is released it is handed to the first waiter. A plain lock lets the thread that just
/// released it take it again before the woken waiters run, so under steady load some writers
/// waited for thousands of commits, keeping everything their frozen Realms pin alive (the
/// soak's file grew to a gigabyte), and an `asyncWrite` that polled for it waited longer still.
final class HandleGate: Sendable {
    private struct Waiter {
        let ticket: UInt64
        /// The task to resume; nil for a thread waiting in ``acquire()``.
        let continuation: CheckedContinuation<Void, any Error>?
    }
    private struct State {
        var isHeld = false
        /// The thread holding the gate, when a thread took it (not for a task's turn).
        var holder: pthread_t?
        var nextTicket: UInt64 = 0
        /// Waiters in the order they came.
        var queue: [Waiter] = []
        /// The waiting thread the gate was handed to, until it wakes up and takes it.
        var handedTo: UInt64?
    }
    // @unchecked: guarded by `condition`.
    private nonisolated(unsafe) var state = State()
    private let condition = NSCondition()

    /// Takes the gate, waiting for the turn of every waiter that came first.
    func acquire() {
        condition.lock()
        defer { condition.unlock() }
        if state.isHeld, let holder = state.holder, pthread_equal(holder, pthread_self()) != 0 {
            preconditionFailure("Trellis internal error: a thread asked for the database-handle lock it already "
                + "holds (a read transaction needing new handles began inside this thread's write transaction).")
        }
        if !state.isHeld, state.queue.isEmpty {
            state.isHeld = true
            state.holder = pthread_self()
            return
        }
        state.nextTicket += 1
        let ticket = state.nextTicket
        state.queue.append(Waiter(ticket: ticket, continuation: nil))
        while state.handedTo != ticket { condition.wait() }
        state.handedTo = nil
        state.holder = pthread_self()
    }

    /// Waits for the gate without blocking a thread, in turn with the other waiters. Throws
    /// `CancellationError` (and never takes the gate) when the task is cancelled before its turn.
    func acquireSuspending() async throws {
        let ticket = withLock { state -> UInt64 in
            state.nextTicket += 1
            return state.nextTicket
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case taken, cancelled, waiting }
                let outcome = withLock { state -> Outcome in
                    // Cancelled before it could queue: the handler below found nothing to remove.
                    if Task.isCancelled { return .cancelled }
                    if !state.isHeld, state.queue.isEmpty {
                        state.isHeld = true
                        state.holder = nil
                        return .taken
                    }
                    state.queue.append(Waiter(ticket: ticket, continuation: continuation))
                    return .waiting
                }
                switch outcome {
                case .taken: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .waiting: break
                }
            }
        } onCancel: {
            let removed = withLock { state -> Waiter? in
                guard let index = state.queue.firstIndex(where: { $0.ticket == ticket }) else { return nil }
                return state.queue.remove(at: index)
            }
            removed?.continuation?.resume(throwing: CancellationError())
        }
    }

    /// Takes the gate if no one holds it or waits for it, without waiting; returns whether it
    /// was taken.
    func tryAcquire() -> Bool {
        withLock { state in
            guard !state.isHeld, state.queue.isEmpty else { return false }
            state.isHeld = true
            state.holder = pthread_self()
            return true
        }
    }

    /// Whether a transaction of this process holds the gate (a write, or an opening of handles).
    var isHeld: Bool { withLock { $0.isHeld } }

    /// How many threads and tasks wait for the gate.
    var waiterCount: Int { withLock { $0.queue.count } }

    /// Releases the gate: hands it to the first waiter, if any.
    func release() {
        let next = withLock { state -> CheckedContinuation<Void, any Error>? in
            state.holder = nil
            guard !state.queue.isEmpty else {
                state.isHeld = false
                return nil
            }
            let waiter = state.queue.removeFirst()
            if let continuation = waiter.continuation { return continuation }
            state.handedTo = waiter.ticket
            condition.broadcast()
            return nil
        }
        next?.resume()
    }

    private func withLock<T>(_ body: (inout State) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(&state)
    }
}

import Synchronization

extension Realm {
    /// Opens a Realm confined to `actor`: usable in the actor's isolated code whatever thread
    /// the actor runs on (a Realm opened with `init(configuration:)` belongs to one thread).
    ///
    /// ```swift
    /// actor Store {
    ///     var realm: Realm!
    ///     init() async throws { realm = try await Realm(actor: self) }
    /// }
    /// ```
    ///
    /// With `downloadBeforeOpen` (``OpenBehavior``), a synced Realm (TrellisSync) is returned
    /// only once everything its subscriptions select on the server is downloaded.
    public init<A: Actor>(configuration: Configuration = .defaultConfiguration, actor: isolated A,
                          downloadBeforeOpen: OpenBehavior = .never) async throws
    {
        let download = downloadBeforeOpen.downloads(configuration)
        self.init(opened: try RealmOpener.open(configuration, confinement: .actor(actor)))
        configuration.syncHook?.realmDidOpen(configuration)
        if download { try await Self.downloadFromServer(configuration) }
    }

    /// Opens a Realm confined to the calling actor (see ``init(configuration:actor:)``), with
    /// Realm's `downloadBeforeOpen` parameter (``OpenBehavior``; a local Realm never downloads).
    public static func open(configuration: Configuration = .defaultConfiguration,
                            _isolation actor: isolated any Actor = #isolation,
                            downloadBeforeOpen: OpenBehavior = .never) async throws -> Realm
    {
        let download = downloadBeforeOpen.downloads(configuration)
        let realm = Realm(opened: try RealmOpener.open(configuration, confinement: .actor(actor)))
        configuration.syncHook?.realmDidOpen(configuration)
        if download { try await Self.downloadFromServer(configuration) }
        return realm
    }

    /// Runs `block` in a write transaction and commits it, first waiting, without blocking the
    /// calling thread, for the other writes of this file in this process (`asyncWrite`s and
    /// synchronous writes on other threads).
    ///
    /// Only for a Realm of the main thread or of an actor, as in Realm (another stops the
    /// program with Realm's message). Until it returns, ``isPerformingAsynchronousWriteOperations``
    /// is true.
    ///
    /// It returns once the commit is complete: on disk, and delivered to the observers of the
    /// file's Realms confined to actors in this process. (Realm's returns when its asynchronous
    /// commit's completion runs, after the commit reached the disk, by which time its notifier
    /// has handed the change to the other Realms; an observer on another actor invalidated right
    /// after `asyncWrite` returns still gets the change, as docs-realm's
    /// testObserveObjectOnActor expects. Trellis's commit is on disk when it ends, so it waits
    /// for those deliveries instead, without blocking: a delivery runs a notification block on
    /// its actor.)
    ///
    /// Honours cancellation: a task cancelled before its turn throws `CancellationError` and
    /// writes nothing, also while it waits for another write. A writer in another process is
    /// waited for inside LMDB, as `write` does, which cannot be interrupted.
    @discardableResult
    public func asyncWrite<Result>(_isolation actor: isolated (any Actor)? = #isolation,
                                   _ block: () throws -> Result) async throws -> Result
    {
        guard core.confinement.isActor || core.confinementIsMainThread else {
            throwRealmException("asyncWrite() can only be called on main thread or actor-isolated Realms")
        }
        core.verifyThread()
        // Checked before waiting: the turn would never come while this Realm holds the write.
        if isInWriteTransaction { throwRealmException("The Realm is already in a write transaction") }
        try Task.checkCancellation()
        // Realm's `isPerformingAsynchronousWriteOperations`: from the request to the completion.
        let operations = core.asyncWrites
        let operation = operations.nextId()
        operations.schedule(operation)
        _ = operations.start(operation)
        defer { operations.finish(operation) }
        let result: Result
        let deliveries: [Task<Void, Never>]
        do {
            let gate = core.file.asyncWriters
            try await gate.enter()
            defer { gate.leave() }
            // Another thread of this process holding a write: wait for it by suspending, in turn
            // with the threads waiting for it, so that cancelling the task stops the wait (a
            // writer in another process is waited for inside LMDB, which cannot be interrupted).
            let handleGate = core.file.environment.handles.gate
            try await handleGate.acquireSuspending()
            if Task.isCancelled {
                handleGate.release()
                throw CancellationError()
            }
            core.beginWrite(holdingGate: true)
            do {
                result = try block()
            } catch {
                if isInWriteTransaction { cancelWrite() }
                throw error
            }
            deliveries = isInWriteTransaction ? try core.commitWrite() : []
        }
        // After the turn is handed on: the deliveries run on other actors (see above).
        for delivery in deliveries { await delivery.value }
        return result
    }
}

/// Lets `asyncWrite`s of one file take turns by suspending rather than blocking a thread.
final class AsyncWriteGate: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var isTaken = false
        var nextId: UInt64 = 0
        var waiting: [Waiter] = []
    }
    private let state = Mutex(State())

    /// Waits for the turn; throws `CancellationError` if the task is cancelled while waiting
    /// (it then never takes the turn).
    func enter() async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextId += 1
            return state.nextId
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case go, cancelled, wait }
                let outcome = state.withLock { state -> Outcome in
                    // Cancelled before it could queue: the handler below ran and found nothing
                    // to remove, so queueing now would wait for a turn it must not take.
                    if Task.isCancelled { return .cancelled }
                    if !state.isTaken {
                        state.isTaken = true
                        return .go
                    }
                    state.waiting.append(Waiter(id: id, continuation: continuation))
                    return .wait
                }
                switch outcome {
                case .go: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> Waiter? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiting.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    func leave() {
        let next = state.withLock { state -> Waiter? in
            if state.waiting.isEmpty {
                state.isTaken = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.continuation.resume()
    }
}

import Dispatch
import Foundation
import Synchronization

/// The identifier of an asynchronous write (``Realm/beginAsyncWrite(_:)``), for cancelling it.
public typealias AsyncTransactionId = UInt32

extension Realm {
    // MARK: - Asynchronous writes (callback form)

    /// Runs `block` in a write transaction and commits it, then calls `onComplete` with the
    /// commit's error, if any. Returns an identifier for ``cancelAsyncWrite(_:)``.
    ///
    /// On a Realm confined to a dispatch queue (or the main queue) or to an actor, the write runs
    /// later on that queue or actor, in the order the writes were asked for, as in Realm (an
    /// actor's Realm may be handed a write from outside the actor: it still runs on the actor,
    /// where its notifications are delivered). On a thread without a run loop (most Linux
    /// threads) there is no later turn to wait for: the write runs before this returns, and
    /// `onComplete` is called then.
    @discardableResult
    public func writeAsync(_ block: @escaping () -> Void, onComplete: ((Swift.Error?) -> Void)? = nil)
        -> AsyncTransactionId
    {
        beginAsyncWrite {
            block()
            self.commitAsyncWrite { error in onComplete?(error) }
        }
    }

    /// Begins a write transaction asynchronously and calls `block` inside it; `block` ends it
    /// with ``commitAsyncWrite(allowGrouping:_:)``, ``commitWrite(withoutNotifying:)`` or
    /// ``cancelWrite()``. As in Realm, returning without one of these cancels the write (its
    /// changes are rolled back). Returns an identifier for ``cancelAsyncWrite(_:)`` (before
    /// `block` ran).
    @discardableResult
    public func beginAsyncWrite(_ block: @escaping () -> Void) -> AsyncTransactionId {
        // An actor's Realm runs the write on its actor whoever asks (the documentation's
        // `await actor.realm.writeAsync { … }`); any other Realm only on its own thread or queue.
        if !core.confinement.isActor { core.verifyThread() }
        if core.isFrozen { throwRealmException("Can't perform transactions on a frozen Realm") }
        let queue = core.asyncWrites
        let id = queue.nextId()
        let run = { [core] in
            guard queue.start(id) else { return }  // cancelled meanwhile
            defer { queue.finish(id) }
            Realm(core: core).beginWrite()
            let transaction = core.writeTransaction
            block()
            // Still the transaction begun above: the block neither committed nor cancelled it.
            if let transaction, core.writeTransaction === transaction { core.cancelWrite() }
        }
        if !runOnALaterTurn(id, ConfinedWork(run: run)) {
            queue.schedule(id)
            run()
        }
        return id
    }

    /// Runs `work` on a later turn of the Realm's dispatch queue (or of the main queue) or
    /// actor, registered under `id` so that ``cancelAsyncWrite(_:)`` can drop it; false, doing
    /// nothing, when the Realm belongs to a plain thread, which has no later turn.
    private func runOnALaterTurn(_ id: AsyncTransactionId, _ work: ConfinedWork) -> Bool {
        if case .queue(let confining) = core.confinement {
            core.asyncWrites.schedule(id)
            confining.async { work.run() }
        } else if core.confinementIsMainThread {
            core.asyncWrites.schedule(id, inOrder: work.run)
            MainThreadTurn.request(for: core)
        } else if case .actor(let actor) = core.confinement {
            // Tasks may start in any order: each runs the oldest work waiting, so the writes and
            // their completions run in the order they were asked for.
            let queue = core.asyncWrites
            queue.schedule(id, inOrder: work.run)
            Task { await ActorTurn.run(on: actor) { queue.runOldestInOrder() } }
        } else {
            return false
        }
        return true
    }

    /// Commits the write transaction begun by ``beginAsyncWrite(_:)`` (or any write), then
    /// calls `onComplete` with the commit's error, if any. Returns an identifier: passed to
    /// ``cancelAsyncWrite(_:)`` before `onComplete` ran, it drops the call (the commit stays).
    ///
    /// As in Realm, the data is committed (and visible to this Realm) when this returns, and
    /// `onComplete` comes later: on a Realm confined to a dispatch queue or the main queue, on
    /// that queue once the current block has returned, with ``isPerformingAsynchronousWriteOperations``
    /// true until then. A thread without a run loop (most Linux threads) has no later turn to
    /// wait for: there `onComplete` is called before this returns. `allowGrouping` is accepted
    /// for Realm's signature; every commit is made durable before this returns.
    @discardableResult
    public func commitAsyncWrite(allowGrouping: Bool = false, _ onComplete: ((Swift.Error?) -> Void)? = nil)
        -> AsyncTransactionId
    {
        core.verifyThread()
        let queue = core.asyncWrites
        let id = queue.nextId()
        let failure: Swift.Error?
        do {
            try commitWrite()
            failure = nil
        } catch {
            failure = error
        }
        guard let onComplete else { return id }
        let complete = ConfinedWork {
            guard queue.start(id) else { return }  // cancelled meanwhile
            defer { queue.finish(id) }
            onComplete(failure)
        }
        if !runOnALaterTurn(id, complete) { onComplete(failure) }
        return id
    }

    /// Cancels an asynchronous write that has not begun yet: its block never runs.
    ///
    /// Given a ``commitAsyncWrite(allowGrouping:_:)``'s identifier before its completion ran,
    /// the completion is dropped and the commit stays, as in Realm. An identifier of a write
    /// that is no longer waiting (it ran or is running, or no write has it) is ignored.
    /// `throws` is Realm's signature; nothing is thrown.
    public func cancelAsyncWrite(_ asyncTransactionId: AsyncTransactionId) throws {
        core.verifyThread()
        _ = core.asyncWrites.cancel(asyncTransactionId)
    }

    /// Whether asynchronous writes are waiting to begin or running.
    public var isPerformingAsynchronousWriteOperations: Bool { core.asyncWrites.isBusy }

    // MARK: - Refreshing

    /// Moves to the newest version without blocking; returns whether there was a newer one.
    ///
    /// As in Realm, only for a Realm of the main thread or of an actor (a Realm of another
    /// thread or of a queue stops the program with Realm's message: use ``refresh()``), and a
    /// cancelled task does not move and gets false.
    @discardableResult
    public func asyncRefresh(_isolation actor: isolated (any Actor)? = #isolation) async -> Bool {
        guard core.confinement.isActor || core.confinementIsMainThread else {
            throwRealmException("asyncRefresh() can only be called on main thread or actor-isolated Realms")
        }
        if Task.isCancelled { return false }
        return refresh()
    }

    /// Whether the Realm moves to the newest version by itself when another Realm of the file
    /// commits (true by default, as in Realm). Realms confined to a queue, an actor or the main
    /// thread then move, and deliver their notifications, on their queue or actor. A Linux
    /// thread has no run loop: a Realm on any other thread moves only at its own writes and at
    /// ``refresh()``, whatever this says. Set it to false to stay on the current version until
    /// ``refresh()`` or a write.
    public var autorefresh: Bool {
        get { core.autorefresh }
        nonmutating set { core.autorefresh = newValue }
    }

    // MARK: - Opening asynchronously

    /// Opens a Realm without blocking the caller, then calls `callback` on `callbackQueue` with
    /// the Realm (confined to that queue) or the error. A synced Realm (TrellisSync's
    /// `flexibleSyncConfiguration`) is handed over once everything its subscriptions select on
    /// the server is downloaded, as in Realm.
    @discardableResult
    public static func asyncOpen(configuration: Realm.Configuration = .defaultConfiguration,
                                 callbackQueue: DispatchQueue = .main,
                                 callback: @escaping @Sendable (Result<Realm, Swift.Error>) -> Void) -> AsyncOpenTask
    {
        let task = AsyncOpenTask()
        DispatchQueue.global().async {
            // Open (and migrate) once off the caller's thread, then hand the file over.
            let prepared = Result { () -> Bool in
                _ = try RealmOpener.open(configuration, confinement: .thread)
                return true
            }
            let deliver: @Sendable (Swift.Error?) -> Void = { downloadError in
                callbackQueue.async {
                    guard !task.isCancelled else { return }
                    switch prepared {
                    case .failure(let error): callback(.failure(error))
                    case .success:
                        if let downloadError { return callback(.failure(downloadError)) }
                        callback(Result { try Realm(configuration: configuration, queue: callbackQueue) })
                    }
                }
            }
            if case .success = prepared, let hook = configuration.syncHook {
                hook.downloadBeforeOpen(configuration, completion: deliver)
            } else {
                deliver(nil)
            }
        }
        return task
    }
}

/// The handle of a ``Realm/asyncOpen(configuration:callbackQueue:callback:)``: cancel it to
/// have the callback not called.
public final class AsyncOpenTask: Sendable {
    private let cancelled = AsyncOpenFlag()

    init() {}

    /// Stops the opening: the callback will not be called.
    public func cancel() { cancelled.set() }

    var isCancelled: Bool { cancelled.isSet }
}

/// Work that runs on the queue its Realm is confined to.
// @unchecked Sendable: it is only ever run on that queue (the Realm's own), never concurrently.
private struct ConfinedWork: @unchecked Sendable {
    let run: () -> Void
}

/// A flag set once, readable from any thread.
final class AsyncOpenFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// Runs a closure isolated to an actor (a later turn of its executor).
enum ActorTurn {
    static func run(on actor: isolated any Actor, _ body: () -> Void) { body() }
}

/// A later turn of the main thread for a main-thread Realm's asynchronous writes and their
/// completions, which run oldest first (``AsyncWriteQueue/runOldestInOrder()``).
///
/// As in Realm, which runs them from a run-loop source: when the main run loop is running, its
/// next turn runs the oldest, so a nested run of it reaches them (an XCTest wait inside a block
/// of the main queue: the main queue runs none of its blocks while one of them waits; Realm's
/// testAsyncTransactionCancel). The main queue's next turn is asked for too, for a main thread
/// that drains the main queue without a run loop (`dispatchMain()`, the main actor), and
/// whichever turn comes first runs the oldest work. A turn that comes while a write of the Realm
/// is open (a nested run inside it) runs nothing and leaves the work to the main queue's turn,
/// asked for again until the write ended, as Realm waits for the transaction to end.
private final class MainThreadTurn: Sendable {
    // @unchecked: the core is only used on the main thread, its thread.
    private struct WeakCore: @unchecked Sendable { weak var core: RealmCore? }
    private let weakCore: WeakCore

    private init(_ core: RealmCore) { weakCore = WeakCore(core: core) }

    static func request(for core: RealmCore) {
        let turn = MainThreadTurn(core)
        DispatchQueue.main.async { turn.run(onTheMainQueue: true) }
        if RunLoop.main.currentMode != nil { RunLoop.main.perform { turn.run(onTheMainQueue: false) } }
    }

    private func run(onTheMainQueue: Bool) {
        guard let core = weakCore.core else { return }
        if core.writeTransaction != nil {
            if onTheMainQueue { DispatchQueue.main.async { self.run(onTheMainQueue: true) } }
            return
        }
        core.asyncWrites.runOldestInOrder()
    }
}

/// The asynchronous writes of one Realm: waiting, running, cancelled. Locked: an actor's Realm
/// may be asked for a write from outside its actor.
final class AsyncWriteQueue: Sendable {
    private struct State {
        var next: AsyncTransactionId = 0
        var waiting: Set<AsyncTransactionId> = []
        var running: Set<AsyncTransactionId> = []
        /// The work an actor's or the main thread's Realm runs on its later turns, oldest first.
        var inOrder: [ConfinedWork] = []
    }
    private let state = Mutex(State())

    func nextId() -> AsyncTransactionId {
        state.withLock { state in
            state.next &+= 1
            return state.next
        }
    }
    func schedule(_ id: AsyncTransactionId) { _ = state.withLock { $0.waiting.insert(id) } }
    /// Schedules `work` to run on a later turn of the Realm's actor or thread, after the work
    /// scheduled before it.
    fileprivate func schedule(_ id: AsyncTransactionId, inOrder work: @escaping () -> Void) {
        state.withLock { state in
            state.waiting.insert(id)
            state.inOrder.append(ConfinedWork(run: work))
        }
    }
    /// Runs the oldest work scheduled in order (called on the Realm's actor or thread, at least
    /// once per work).
    func runOldestInOrder() {
        let work = state.withLock { $0.inOrder.isEmpty ? nil : $0.inOrder.removeFirst() }
        work?.run()
    }
    /// Whether the write may start (it was not cancelled).
    func start(_ id: AsyncTransactionId) -> Bool {
        state.withLock { state in
            guard state.waiting.remove(id) != nil else { return false }
            state.running.insert(id)
            return true
        }
    }
    func finish(_ id: AsyncTransactionId) { _ = state.withLock { $0.running.remove(id) } }
    func cancel(_ id: AsyncTransactionId) -> Bool { state.withLock { $0.waiting.remove(id) != nil } }
    var isBusy: Bool { state.withLock { !$0.waiting.isEmpty || !$0.running.isEmpty } }
}

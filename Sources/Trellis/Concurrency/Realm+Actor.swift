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
    public init<A: Actor>(configuration: Configuration = .defaultConfiguration, actor: isolated A) async throws {
        core = try RealmOpener.open(configuration, confinement: .actor(actor))
    }

    /// Opens a Realm confined to the calling actor (see ``init(configuration:actor:)``).
    public static func open(configuration: Configuration = .defaultConfiguration,
                            _isolation actor: isolated any Actor = #isolation) async throws -> Realm
    {
        Realm(core: try RealmOpener.open(configuration, confinement: .actor(actor)))
    }

    /// Runs `block` in a write transaction and commits it, first waiting, without blocking the
    /// calling thread, for the other `asyncWrite`s of this file in this process.
    ///
    /// A synchronous writer on another thread or in another process still makes the
    /// transaction's start wait for it, as `write` does.
    @discardableResult
    public func asyncWrite<Result>(_isolation actor: isolated (any Actor)? = #isolation,
                                   _ block: () throws -> Result) async throws -> Result
    {
        core.verifyThread()
        let gate = core.file.asyncWriters
        await gate.enter()
        defer { gate.leave() }
        return try write(block)
    }
}

/// Lets `asyncWrite`s of one file take turns by suspending rather than blocking a thread.
final class AsyncWriteGate: Sendable {
    private struct State {
        var isTaken = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let mayGo = state.withLock { state -> Bool in
                if !state.isTaken {
                    state.isTaken = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if mayGo { continuation.resume() }
        }
    }

    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty {
                state.isTaken = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}

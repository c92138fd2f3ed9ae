import Foundation
import Logging
import PostgresNIO
import Synchronization
import TrellisSyncProtocol

/// Reads the new history entries once for all sessions of this process and wakes the sessions
/// that may want them (docs/SYNC.md, "Change notification").
///
/// The history trigger calls `pg_notify('trellis_history', …)`; PostgreSQL delivers it when
/// the writing transaction commits (also one of another server process, or an SQL write by
/// another program). The watch `LISTEN`s on one connection, and on each notification reads
/// the entries after the newest it holds, keeps the most recent ones in memory and wakes the
/// sessions its ``FanOutIndex`` names for them, which take their changes from that memory:
/// one history query per change and server, not one per connected client, and no work for a
/// session whose subscriptions cannot select the change. A poll of the newest version every `pollInterval`
/// stays as a fallback (a notification lost with a broken connection, a `LISTEN` that
/// cannot be set up).
final class HistoryWatch: Sendable {
    /// The entries kept in memory (the most recent, at most `capacity` of them) and the
    /// sessions they are fanned out to.
    private struct State {
        var entries = [HistoryEntry]()
        /// The entries held are every entry with a version in `(floor, upTo]` (none read yet: -1).
        var floor: Int64 = -1
        var upTo: Int64 = -1
        var listeners = [UUID: AsyncStream<SessionEvent>.Continuation]()
        var index = FanOutIndex()
    }

    static let channel = "trellis_history"
    /// Entries read per history query.
    static let batch = 500

    let capacity: Int
    let pollInterval: Duration
    private let state = Mutex(State())
    /// Sessions woken for a batch they may want, one per session and batch (`/metrics`:
    /// `trellis_sync_fanout_wakes_total`; not the progress wakes).
    private let wakeCount = Atomic<Int>(0)

    /// How many times the fan-out woke a session for history it may want.
    var wakes: Int { wakeCount.load(ordering: .relaxed) }
    private let triggers: AsyncStream<Void>
    private let trigger: AsyncStream<Void>.Continuation

    init(capacity: Int = 5_000, pollInterval: Duration = .seconds(1)) {
        self.capacity = capacity
        self.pollInterval = pollInterval
        (triggers, trigger) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func add(_ id: UUID, _ continuation: AsyncStream<SessionEvent>.Continuation) {
        state.withLock { $0.listeners[id] = continuation }
    }

    func remove(_ id: UUID) {
        state.withLock { state in
            state.listeners.removeValue(forKey: id)
            state.index.remove(id)
        }
    }

    /// Routes the history read from now on to session `id` by `route` (replacing its previous
    /// route): it is woken with ``SessionEvent/historyGrew(from:through:)`` for each batch
    /// after the returned version that holds an entry it may want, and only then. Nil while
    /// the watch has read nothing yet (the session is woken when it has, and registers again).
    func route(_ id: UUID, _ route: SessionRoute) -> Int64? {
        state.withLock { state in
            state.index.set(id, route)
            return state.upTo >= 0 ? state.upTo : nil
        }
    }

    /// How often every session is woken whatever it was routed.
    static let progressInterval = Duration.seconds(30)

    /// Wakes every session for the history read so far (nothing new: a batch `(upTo, upTo]`),
    /// so one that no batch concerned moves its version up.
    private func wakeEveryone() {
        state.withLock { state in
            guard state.upTo >= 0 else { return }
            for continuation in state.listeners.values {
                continuation.yield(.historyGrew(from: state.upTo, through: state.upTo))
            }
        }
    }

    /// Sends `event` to every open session.
    func broadcast(_ event: SessionEvent) {
        for continuation in state.withLock({ Array($0.listeners.values) }) { continuation.yield(event) }
    }

    /// The sessions open now.
    var sessionCount: Int { state.withLock { $0.listeners.count } }

    /// The newest history version read.
    var newestVersion: Int64 { state.withLock { $0.upTo } }

    /// The entries after `version` (at most `limit`, oldest first) as far as the watch has
    /// read them, or nil when it does not hold them (the version is older than the entries
    /// kept, or nothing is read yet): then the caller reads the history itself.
    func entries(after version: Int64, limit: Int = batch) -> [HistoryEntry]? {
        state.withLock { state in
            guard state.floor >= 0, version >= state.floor else { return nil }
            if version >= state.upTo { return [] }
            // Versions grow along the array: find the first entry after `version`.
            var low = 0, high = state.entries.count
            while low < high {
                let middle = (low + high) / 2
                if state.entries[middle].version <= version { low = middle + 1 } else { high = middle }
            }
            return Array(state.entries[low..<min(low + limit, state.entries.count)])
        }
    }

    /// Keeps reading the history as it grows until cancelled: on each notification, and
    /// every `pollInterval` whatever happens.
    func run(store: PostgresStore) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.listen(store: store) }
            group.addTask {
                while !Task.isCancelled {
                    self.trigger.yield()
                    try? await Task.sleep(for: self.pollInterval)
                }
            }
            group.addTask {
                // Sessions not woken for a while still move up to the newest version (and send
                // their device an empty frame now and then: SyncSessionHandler.progressInterval).
                while !Task.isCancelled {
                    try? await Task.sleep(for: Self.progressInterval)
                    self.wakeEveryone()
                }
            }
            group.addTask {
                for await _ in self.triggers {
                    if Task.isCancelled { break }
                    await self.readNewEntries(store: store)
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// `LISTEN`s on the history channel, again after a lost connection.
    private func listen(store: PostgresStore) async {
        while !Task.isCancelled {
            do {
                try await store.client.withConnection { connection in
                    try await connection.listen(on: Self.channel) { notifications in
                        // Anything committed before the LISTEN took effect.
                        self.trigger.yield()
                        for try await _ in notifications { self.trigger.yield() }
                    }
                }
            } catch is CancellationError {
                return
            } catch {
                if Task.isCancelled { return }
                store.logger.warning("LISTEN \(Self.channel) failed (\(error)); history is polled every \(pollInterval) until it works again")
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Reads the entries after the newest held, keeps them, and wakes the sessions that may
    /// want some of them (all sessions the first time).
    private func readNewEntries(store: PostgresStore) async {
        do {
            var start = state.withLock { $0.upTo }
            if start < 0 {
                start = try await store.latestVersion()
                state.withLock { state in
                    state.entries = []
                    state.floor = start
                    state.upTo = start
                    for continuation in state.listeners.values { continuation.yield(.historyGrew(from: start, through: start)) }
                }
                return
            }
            while true {
                let entries = try await store.history(after: start, limit: Self.batch)
                guard let last = entries.last else { break }
                let from = start
                // Kept, routed and the sessions woken in one step, so a session routed at version V
                // is woken for every later batch it may want (``route(_:_:)``), in order with the
                // progress wakes (``wakeEveryone()``).
                state.withLock { state in
                    state.entries += entries
                    state.upTo = last.version
                    if state.entries.count > capacity {
                        let dropped = state.entries.count - capacity
                        state.floor = state.entries[dropped - 1].version
                        state.entries.removeFirst(dropped)
                    }
                    var ids = Set<UUID>()
                    for entry in entries { state.index.candidates(for: entry, into: &ids) }
                    for id in ids { state.listeners[id]?.yield(.historyGrew(from: from, through: last.version)) }
                    wakeCount.add(ids.count, ordering: .relaxed)
                }
                start = last.version
                if entries.count < Self.batch { break }
            }
        } catch {
            store.logger.warning("reading the history failed: \(error)")
        }
    }
}

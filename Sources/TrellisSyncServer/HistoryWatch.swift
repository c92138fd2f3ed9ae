import Foundation
import Logging
import PostgresNIO
import Synchronization
import TrellisSyncProtocol

/// Tells every open session of this process when the history grows, and reads the new
/// entries once for all of them (docs/SYNC.md, "Change notification").
///
/// The history trigger calls `pg_notify('trellis_history', …)`; PostgreSQL delivers it when
/// the writing transaction commits (also one of another server process, or an SQL write by
/// another program). The watch `LISTEN`s on one connection, and on each notification reads
/// the entries after the newest it holds, keeps the most recent ones in memory and wakes the
/// sessions, which take their changes from that memory: one history query per change and
/// server, not one per connected client. A poll of the newest version every `pollInterval`
/// stays as a fallback (a notification lost with a broken connection, a `LISTEN` that
/// cannot be set up).
final class HistoryWatch: Sendable {
    /// The entries kept in memory: the most recent, at most `capacity` of them.
    private struct Recent {
        var entries = [ServerChange]()
        /// The entries held are every entry with a version in `(floor, upTo]` (none read yet: -1).
        var floor: Int64 = -1
        var upTo: Int64 = -1
    }

    static let channel = "trellis_history"
    /// Entries read per history query.
    static let batch = 500

    let capacity: Int
    let pollInterval: Duration
    private let listeners = Mutex<[UUID: AsyncStream<SessionEvent>.Continuation]>([:])
    private let recent = Mutex(Recent())
    private let triggers: AsyncStream<Void>
    private let trigger: AsyncStream<Void>.Continuation

    init(capacity: Int = 5_000, pollInterval: Duration = .seconds(1)) {
        self.capacity = capacity
        self.pollInterval = pollInterval
        (triggers, trigger) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func add(_ id: UUID, _ continuation: AsyncStream<SessionEvent>.Continuation) {
        listeners.withLock { $0[id] = continuation }
    }

    func remove(_ id: UUID) { _ = listeners.withLock { $0.removeValue(forKey: id) } }

    /// The sessions open now.
    var sessionCount: Int { listeners.withLock { $0.count } }

    /// The newest history version read.
    var newestVersion: Int64 { recent.withLock { $0.upTo } }

    /// The entries after `version` (at most `limit`, oldest first) as far as the watch has
    /// read them, or nil when it does not hold them (the version is older than the entries
    /// kept, or nothing is read yet): then the caller reads the history itself.
    func entries(after version: Int64, limit: Int = batch) -> [ServerChange]? {
        recent.withLock { recent in
            guard recent.floor >= 0, version >= recent.floor else { return nil }
            if version >= recent.upTo { return [] }
            // Versions grow along the array: find the first entry after `version`.
            var low = 0, high = recent.entries.count
            while low < high {
                let middle = (low + high) / 2
                if recent.entries[middle].serverVersion <= version { low = middle + 1 } else { high = middle }
            }
            return Array(recent.entries[low..<min(low + limit, recent.entries.count)])
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

    /// Reads the entries after the newest held, keeps them and wakes the sessions when there
    /// are any.
    private func readNewEntries(store: PostgresStore) async {
        do {
            var start = recent.withLock { $0.upTo }
            if start < 0 {
                start = try await store.latestVersion()
                recent.withLock { $0 = Recent(entries: [], floor: start, upTo: start) }
                wakeAll()
                return
            }
            var grew = false
            while true {
                let entries = try await store.history(after: start, limit: Self.batch)
                guard let last = entries.last else { break }
                recent.withLock { recent in
                    recent.entries += entries
                    recent.upTo = last.serverVersion
                    if recent.entries.count > capacity {
                        let dropped = recent.entries.count - capacity
                        recent.floor = recent.entries[dropped - 1].serverVersion
                        recent.entries.removeFirst(dropped)
                    }
                }
                start = last.serverVersion
                grew = true
                if entries.count < Self.batch { break }
            }
            if grew { wakeAll() }
        } catch {
            store.logger.warning("reading the history failed: \(error)")
        }
    }

    private func wakeAll() {
        for continuation in listeners.withLock({ Array($0.values) }) { continuation.yield(.historyGrew) }
    }
}

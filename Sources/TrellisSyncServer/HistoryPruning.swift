import Foundation
import Logging
import PostgresNIO

/// History and tombstone pruning with a retention window (`--history-retention SECONDS`;
/// docs/SYNC.md, "History pruning"). Every `interval`, one server of the database (an
/// advisory lock) finds P, the newest history version recorded before now − retention, and in
/// one transaction raises `history_floor` to P, deletes the entries up to P that a later entry
/// of the same object supersedes or that record a delete, and deletes tombstones older than
/// the window. The newest entry of each live object stays, so the fan-out still knows an
/// object's previous document. Clients that synced less than P are reset (error 222) and
/// download the server's state again.
struct HistoryPruning: Sendable {
    static let lock: Int64 = 7_217_003

    let retention: Duration
    let interval: Duration

    init(retention: Duration) {
        self.retention = retention
        // Often enough that nothing stays much longer than the window; at most once a minute.
        interval = min(max(retention / 2, .milliseconds(200)), .seconds(60))
    }

    /// Prunes every `interval` until cancelled; a failure is logged and tried again.
    func run(store: PostgresStore) async {
        while !Task.isCancelled {
            do {
                if let result = try await pruneOnce(store: store), result.entries > 0 || result.tombstones > 0 {
                    store.logger.notice("pruned the history up to version \(result.floor): \(result.entries) entries, \(result.tombstones) tombstones older than \(retention)")
                }
            } catch {
                if Task.isCancelled { return }
                store.logger.warning("pruning the history failed (\(error)); trying again in \(interval)")
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// One pass; nil when another server is pruning now.
    func pruneOnce(store: PostgresStore) async throws -> (floor: Int64, entries: Int, tombstones: Int)? {
        let seconds = Double(retention.components.seconds) + Double(retention.components.attoseconds) / 1e18
        return try await store.client.withTransaction(logger: store.logger) { connection in
            let locked = try await connection.query("SELECT pg_try_advisory_xact_lock(\(Self.lock))", logger: store.logger)
                .collect().first?.decode(Bool.self) ?? false
            guard locked else { return nil }
            let floorRows = try await connection.query("""
                SELECT coalesce(max(version), 0)::bigint FROM trellis_history
                WHERE recorded_at < now() - make_interval(secs => \(seconds))
                """, logger: store.logger).collect()
            let floor = try floorRows.first?.decode(Int64.self) ?? 0
            guard floor > 0 else { return (0, 0, 0) }
            // The floor first: a client that synced less than it is reset from now on.
            try await connection.query("""
                UPDATE trellis_server_identity SET history_floor = greatest(history_floor, \(floor)) WHERE id = 1
                """, logger: store.logger)
            let entries = try await connection.query("""
                WITH gone AS (DELETE FROM trellis_history h WHERE h.version <= \(floor) AND (h.doc IS NULL
                  OR EXISTS (SELECT 1 FROM trellis_history n WHERE \(unescaped: PostgresStore.sameHistoryObject("n", "h"))
                    AND n.version > h.version)) RETURNING 1)
                SELECT count(*)::bigint FROM gone
                """, logger: store.logger).collect().first?.decode(Int64.self) ?? 0
            // A tombstone's `deleted_at` is the delete's clock text: milliseconds since 1970 in its
            // first 16 digits, so it compares as text with the window's start.
            let cutoff = String(format: "%016lld", Int64((Date().timeIntervalSince1970 - seconds) * 1000))
            let tombstones = try await connection.query("""
                WITH gone AS (DELETE FROM trellis_tombstones WHERE deleted_at < \(cutoff) RETURNING 1)
                SELECT count(*)::bigint FROM gone
                """, logger: store.logger).collect().first?.decode(Int64.self) ?? 0
            return (floor, Int(entries), Int(tombstones))
        }
    }
}

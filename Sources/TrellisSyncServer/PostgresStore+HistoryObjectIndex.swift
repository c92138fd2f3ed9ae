import PostgresNIO

/// How an object's history entries are found (docs/SYNC.md, "Tables").
///
/// The download needs each entry's previous entry of the same object (may this client hold a
/// copy of it? `history(after:)`), and pruning needs to know whether an entry has a newer one.
/// Both look up an object's entries by version, so `trellis_history` has an index on the
/// object and the version. Its key was `(collection, pk jsonb, version)`: every insertion
/// compared `jsonb` values on its way down the tree, and the history gets two insertions per
/// entry (when the entry is written and again when the numbering's `UPDATE` gives it its
/// version: the primary key is the version, so that update is never a HOT one), which made
/// that index a large part of PostgreSQL's time per uploaded object. Now the index starts
/// with a 64-bit hash of the collection and the primary key
/// (``historyObjectKey(collection:primaryKey:)``), then holds the collection, the primary key
/// and the version: a descent compares integers, and text and `jsonb` only against entries
/// of the same object (the numbering's new row lands next to its pending one). The queries
/// compare the hashes, the collection and the `jsonb`, all index conditions: the planner
/// estimates one entry per object even before the table has statistics (with the hash alone
/// it estimated 0.5 % of the history per lookup, and a download's history read, thought to
/// cost over `jit_above_cost`, was compiled by the JIT each time: 30 ms of PostgreSQL's CPU
/// per read on a fresh database), and a hash collision costs a comparison, never a wrong
/// answer.
extension PostgresStore {
    /// The index on ``historyObjectKey(collection:primaryKey:)``, `collection`, `pk`, `version`.
    static let historyObjectIndex = "trellis_history_object_key"
    /// The index of servers before session 35, on `(collection, pk, version)`.
    static let legacyHistoryObjectIndex = "trellis_history_object"

    /// SQL of an object's history key: a 64-bit hash of its collection and its primary key's
    /// text. The queries must spell it exactly as the index does (the planner matches the
    /// expression), so every use comes from here. A top-level number is hashed with its
    /// trailing zeros trimmed: `jsonb` equality compares numbers by value (`3` = `3.0`), so
    /// equal keys always hash alike. (Other primary keys are strings or Extended JSON objects
    /// of strings, whose text `jsonb` writes canonically.)
    static func historyObjectKey(collection: String, primaryKey pk: String) -> String {
        "hashtextextended(\(collection) || ' ' || CASE WHEN jsonb_typeof(\(pk)) = 'number' "
            + "THEN trim_scale((\(pk))::numeric)::text ELSE (\(pk))::text END, 0)"
    }

    /// The condition that `alias`'s entry is of the same object as `other`'s: the hashes and
    /// the values (all of them the index's columns).
    static func sameHistoryObject(_ alias: String, _ other: String) -> String {
        historyObjectKey(collection: "\(alias).collection", primaryKey: "\(alias).pk") + " = "
            + historyObjectKey(collection: "\(other).collection", primaryKey: "\(other).pk")
            + " AND \(alias).collection = \(other).collection AND \(alias).pk = \(other).pk"
    }

    /// Creates the index, and drops the one servers before session 35 made (a database they
    /// made is upgraded when a server of this version starts: the new index is built once,
    /// holding writes to the history for the build). A server of an earlier version started
    /// later makes its index again (both are then kept up to date, which costs only speed)
    /// and reads with its own queries, which stay correct without their index.
    func prepareHistoryObjectIndex(on connection: PostgresConnection) async throws {
        let key = Self.historyObjectKey(collection: "collection", primaryKey: "pk")
        try await connection.query("""
            CREATE INDEX IF NOT EXISTS \(unescaped: Self.historyObjectIndex) ON trellis_history ((\(unescaped: key)), collection, pk, version)
            """, logger: logger)
        try await connection.query("DROP INDEX IF EXISTS \(unescaped: Self.legacyHistoryObjectIndex)", logger: logger)
    }
}

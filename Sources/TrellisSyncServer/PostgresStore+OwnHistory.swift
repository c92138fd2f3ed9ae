import PostgresNIO
import TrellisSyncProtocol

/// History entries the server writes itself (docs/SYNC.md, "Tables").
///
/// Every write to a collection table needs its history entry. Other programs' writes (SQL)
/// get theirs from the row trigger `trellis_history`; the server's uploads write theirs in
/// the statement that writes the rows (`WITH written AS (INSERT … RETURNING _id, doc)
/// INSERT INTO trellis_history … FROM written`): one set-based insert instead of a PL/pgSQL
/// call and an insert per row, which were most of PostgreSQL's time per uploaded object.
///
/// The trigger skips a row when the transaction says its statements write their own entries
/// (``ownHistorySetting``, set by the server's upload transactions only), unless the row is
/// written from inside a trigger (`pg_trigger_depth() > 0`: a trigger of someone else's that
/// writes another collection table during an upload; its rows are not in any `RETURNING`).
/// A server of an earlier version on the same database does not set it, so its writes keep
/// their entries from the trigger.
extension PostgresStore {
    /// The transaction-local setting that makes the history trigger skip the rows of the
    /// transaction's top-level statements, which write their history themselves.
    static let ownHistorySetting = "trellis.writes_history"

    /// The condition of the history trigger: the row's entry is not written by its statement.
    static var historyTriggerCondition: String {
        "pg_trigger_depth() > 0 OR coalesce(current_setting('\(ownHistorySetting)', true), '') = ''"
    }

    /// Creates the history trigger of a collection table, or replaces one made by an earlier
    /// version: a deferred constraint trigger (before entries were numbered at the commit) or
    /// one without the condition (a server writing its own entries would get them twice).
    func prepareHistoryTrigger(on table: String, primaryKey key: String, connection: PostgresConnection) async throws {
        var definition: String?
        for try await (text) in try await connection.query("""
            SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = \(table)::regclass AND tgname = 'trellis_history'
            """, logger: logger).decode(String.self) { definition = text }
        if let definition, definition.contains(Self.ownHistorySetting), !definition.contains("DEFERRABLE") { return }
        if definition != nil {
            try await connection.query("DROP TRIGGER trellis_history ON \(unescaped: table)", logger: logger)
        }
        try await connection.query("""
            CREATE TRIGGER trellis_history AFTER INSERT OR UPDATE OR DELETE ON \(unescaped: table)
            FOR EACH ROW WHEN (\(unescaped: Self.historyTriggerCondition))
            EXECUTE FUNCTION trellis_record_change('\(unescaped: key)')
            """, logger: logger)
    }

    /// Upserts a collection's kept objects (`_id`, document and timestamps as text, in the
    /// upload's order) and writes their history entries, pending, in the same statement: the
    /// rows as stored (`RETURNING`), each entry what the trigger would have written. Each
    /// entry's stamp is the object's newest timestamp as the merge computed it (`stamps`, nil:
    /// none), joined to its row by `_id`: what the trigger reads from the row's `_meta` with a
    /// `jsonb_each_text` per row, which was a tenth of PostgreSQL's time per uploaded object.
    static func upsertWithHistory(className: String, shape: SchemaShape, ids: [String], docs: [String],
                                  metas: [String], stamps: [String?]) -> PostgresQuery
    {
        let table = quoted(className), type = columnType(shape), key = shape.primaryKey ?? "_id"
        // text[] elements cannot be NULL here: an absent stamp is "" with `false` beside it.
        let stampTexts = stamps.map { $0 ?? "" }, stamped = stamps.map { $0 != nil }
        return """
            WITH input AS (
              SELECT * FROM unnest(\(ids)::text[], \(docs)::text[], \(metas)::text[], \(stampTexts)::text[],
                \(stamped)::bool[]) WITH ORDINALITY AS u(id, doc, meta, stamp, stamped, n)),
            written AS (
              INSERT INTO \(unescaped: table) (_id, doc, _meta)
              SELECT i.id::\(unescaped: type), i.doc::jsonb, i.meta::jsonb FROM input i
              ORDER BY i.n
              ON CONFLICT (_id) DO UPDATE SET doc = EXCLUDED.doc, _meta = EXCLUDED._meta
              RETURNING _id, doc)
            INSERT INTO trellis_history (collection, pk, doc, client_id, stamp)
            SELECT \(className), w.doc -> \(key), w.doc, current_setting('trellis.client_id', true),
              CASE WHEN i.stamped THEN i.stamp END
            FROM written w JOIN input i ON i.id::\(unescaped: type) = w._id
            ORDER BY i.n
            """
    }

    /// Deletes a collection's removed objects and writes their history entries (no document,
    /// the deleted row's newest timestamp) in the same statement.
    static func deleteWithHistory(className: String, shape: SchemaShape, ids: [String]) -> PostgresQuery {
        let table = quoted(className), type = columnType(shape), key = shape.primaryKey ?? "_id"
        return """
            WITH gone AS (DELETE FROM \(unescaped: table) WHERE _id = ANY(\(ids)::\(unescaped: type)[]) RETURNING doc, _meta)
            INSERT INTO trellis_history (collection, pk, doc, client_id, stamp)
            SELECT \(className), g.doc -> \(key), NULL, current_setting('trellis.client_id', true),
              \(unescaped: newestStamp("g._meta"))
            FROM gone g
            """
    }
}

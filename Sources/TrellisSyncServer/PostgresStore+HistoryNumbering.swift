import PostgresNIO

/// How history entries get their versions (docs/SYNC.md, "History order").
///
/// The invariant: a reader that has seen version N never later finds a version below N (a
/// client resumes after the last version it applied, so an entry that became visible below it
/// would be skipped for good). PostgreSQL makes rows visible in commit order, not in the order
/// their transactions wrote them, so versions are drawn in commit order: by a transaction
/// holding the global history lock, which it keeps until its commit is visible.
///
/// What runs under that lock is kept small and independent of the documents' size: an entry
/// is written, with its whole document, when its row is written (no lock), with a *pending*
/// version (negative, from `trellis_history_pending`; only its own transaction sees it); when
/// the transaction commits, one deferred trigger takes the history lock and gives the
/// transaction's pending entries the next versions in the order they were written, with one
/// `UPDATE` that changes the version and keeps the document where it is (a TOASTed document
/// is not copied again). So the lock covers an index update per entry, not a copy per byte.
extension PostgresStore {
    /// The sequence of pending versions (their negatives) of entries not committed yet.
    static let pendingSequence = "trellis_history_pending"

    func prepareHistoryNumbering(on connection: PostgresConnection) async throws {
        try await connection.query("CREATE SEQUENCE IF NOT EXISTS \(unescaped: Self.pendingSequence)", logger: logger)
        // Every entry is written pending, whoever writes it (the trigger, the server's entries
        // for deletes of objects already gone, SQL), and numbered when its transaction commits.
        try await connection.query("""
            ALTER TABLE trellis_history ALTER COLUMN version SET DEFAULT -nextval('\(unescaped: Self.pendingSequence)')
            """, logger: logger)
        // The transaction's first pending entry remembers itself (a transaction-local setting,
        // undone with a rolled back savepoint), so the numbering trigger is queued once. The
        // trigger's condition repeats the function's, so the other entries call no function.
        try await connection.query("""
            CREATE OR REPLACE FUNCTION trellis_history_pending() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF NEW.version < 0 AND coalesce(current_setting('trellis.first_pending', true), '') = '' THEN
                PERFORM set_config('trellis.first_pending', NEW.version::text, true);
              END IF;
              RETURN NEW;
            END $$
            """, logger: logger)
        try await connection.query("""
            CREATE OR REPLACE TRIGGER trellis_history_pending BEFORE INSERT ON trellis_history
            FOR EACH ROW WHEN (NEW.version < 0 AND coalesce(current_setting('trellis.first_pending', true), '') = '')
            EXECUTE FUNCTION trellis_history_pending()
            """, logger: logger)
        // At the commit: the lock, then the pending entries written since the first (those of
        // other transactions in that range are invisible here) numbered in the order written.
        // All versions are drawn under the lock, so reserving a block with setval is safe.
        // When the transaction's entries fill the range (no other transaction wrote an entry
        // meanwhile: one upload at a time, the usual case), an entry's version follows from its
        // pending one, and the UPDATE skips the ranking and the join (a lookup per entry): ~2.5 µs
        // of PostgreSQL's CPU less per entry (docs/BENCHMARKS.md, session 40).
        try await connection.query("""
            CREATE OR REPLACE FUNCTION trellis_number_history() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE
              first bigint := nullif(current_setting('trellis.first_pending', true), '')::bigint;
              last bigint;
              pending bigint;
              base bigint;
            BEGIN
              IF first IS NULL THEN
                RETURN NULL;
              END IF;
              PERFORM pg_advisory_xact_lock(\(unescaped: String(Self.historyLock)));
              SELECT -last_value INTO last FROM \(unescaped: Self.pendingSequence);
              SELECT count(*) INTO pending FROM trellis_history WHERE version BETWEEN last AND first;
              IF pending > 0 THEN
                base := nextval(pg_get_serial_sequence('trellis_history', 'version'));
                IF pending > 1 THEN
                  PERFORM setval(pg_get_serial_sequence('trellis_history', 'version'), base + pending - 1);
                END IF;
                IF pending = first - last + 1 THEN
                  -- Every pending version in the range is this transaction's (no other drew one
                  -- meanwhile): the n-th written is first - n + 1, numbered without a ranking.
                  UPDATE trellis_history SET version = base + (first - version) WHERE version BETWEEN last AND first;
                ELSE
                  UPDATE trellis_history h SET version = base + p.n - 1
                  FROM (SELECT version AS pending_version, row_number() OVER (ORDER BY version DESC) AS n
                        FROM trellis_history WHERE version BETWEEN last AND first) p
                  WHERE h.version = p.pending_version;
                END IF;
                PERFORM pg_notify('trellis_history', '');
              END IF;
              -- Entries written after this (another deferred trigger's) queue the numbering again.
              PERFORM set_config('trellis.first_pending', '', true);
              RETURN NULL;
            END $$
            """, logger: logger)
        // A constraint trigger's WHEN is evaluated when the row is written: only the
        // transaction's first pending entry queues the numbering (OR REPLACE does not apply to
        // constraint triggers, so it is made once).
        var exists = false
        for try await _ in try await connection.query("""
            SELECT 1 FROM pg_trigger WHERE tgrelid = 'trellis_history'::regclass AND tgname = 'trellis_history_numbering'
            """, logger: logger) { exists = true }
        if !exists {
            try await connection.query("""
                CREATE CONSTRAINT TRIGGER trellis_history_numbering AFTER INSERT ON trellis_history
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
                WHEN (NEW.version < 0 AND current_setting('trellis.first_pending', true) = NEW.version::text)
                EXECUTE FUNCTION trellis_number_history()
                """, logger: logger)
        }
    }
}

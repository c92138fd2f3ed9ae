import Foundation
import Logging
import PostgresNIO
import TrellisSyncProtocol

/// Applying an upload: a handful of SQL statements per collection, whatever the number of
/// changes (one `SELECT … WHERE _id = ANY`, one multi-row `INSERT … ON CONFLICT`, one
/// `DELETE`, the tombstones and the history of deletes with nothing to delete), all in one
/// transaction together with the client's last applied upload, so an upload is applied
/// entirely or not at all, and once.
///
/// No user-controlled work runs under the one global history lock (docs/SYNC.md, "Limits"):
/// the objects are read, merged with the conflict rules, checked against the permissions and
/// their writes encoded with no lock at all; then one transaction locks the upload's objects,
/// compares the rows' versions (`xmin`) with those the merge read, and runs the prepared
/// writes, which also write the history entries (pending); the history lock is taken only
/// when it commits, to number those entries (`PostgresStore+HistoryNumbering.swift`). When
/// another writer changed one of the objects meanwhile, the merge starts again from what is
/// stored now. So one user's costly upload (a long list merge, a large message) holds up
/// another user's upload only while its entries are numbered: an index update per entry,
/// whatever the documents' size.
extension PostgresStore {
    /// How many times an upload is merged again because others changed its objects meanwhile.
    static let maxMergeAttempts = 20

    /// Applies one upload in one transaction, unless this client's upload `uploadId` was
    /// applied before (a retry after a lost ack or a server restart). Each change the
    /// permissions refuse is left out (a compensating write). Returns the history version
    /// after it and the refused changes, with their objects as stored afterwards.
    ///
    /// An upload sent again whose first entries were applied before (its first sending had other
    /// boundaries: the outbox grew before the lost acknowledgement) is applied without them:
    /// applying a change twice would replay its list insertions on a list that has them already.
    func apply(_ upload: SyncMessage.Upload, clientId: String, permissions: SessionPermissions) async throws
        -> (version: Int64, refused: [RefusedChange])
    {
        var upload = upload
        for attempt in 1...Self.maxMergeAttempts {
            let (plan, lastUploadId) = try await client.withConnection { connection in
                try await merge(upload, clientId: clientId, permissions: permissions, on: connection)
            }
            if lastUploadId >= upload.uploadId { return (try await latestVersion(), []) }
            if let unapplied = upload.unapplied(after: lastUploadId) {
                let message = "upload \(upload.uploadId) of \(clientId): entries up to \(lastUploadId) were applied "
                    + "before, applying the \(unapplied.changes.count) after them"
                logger.info("\(message)")
                upload = unapplied
                continue
            }
            try await faults.merged(upload.uploadId, logger: logger)
            let outcome: [RefusedChange]?
            do {
                outcome = try await write(plan, upload: upload, clientId: clientId)
            } catch let error where Self.isDeadlock(error) {
                // A deadlock PostgreSQL broke (an SQL DELETE's tombstone against this upload's
                // locked tombstone row, both committing): nothing was written; merge again.
                logger.notice("upload \(upload.uploadId) of \(clientId): deadlock with another writer, merging again")
                continue
            }
            if let refused = outcome {
                faults.uploadCommitted(upload.uploadId, logger: logger)
                return (try await latestVersion(), refused)
            }
            logger.info("upload \(upload.uploadId) of \(clientId): its objects changed during the merge (attempt \(attempt))")
        }
        throw UploadContention(uploadId: upload.uploadId, attempts: Self.maxMergeAttempts)
    }

    /// Writes a merged upload in one transaction, unless it was applied before (then no
    /// refusals) or another writer changed its objects since the merge read them (nil).
    ///
    /// Locks: first the upload's objects (advisory locks on class and `_id`, taken in one
    /// statement in a fixed order, so two uploads never deadlock on them), which serializes
    /// uploads touching the same object, also one not stored yet (a row lock cannot cover a
    /// row that does not exist); then the client's row (its uploads one at a time) and the
    /// rows read (`FOR UPDATE`, against SQL writers). The global history lock is taken only
    /// when the transaction commits, to number its history entries (written pending with the
    /// rows, and for deletes with nothing to delete, last): the row writes and the documents'
    /// copies into the history, linear in the upload's bytes, run outside it.
    ///
    /// Round trips to PostgreSQL (each one a wait for another process on a busy machine): BEGIN,
    /// `trellis_begin_upload` (client id, object locks, the client's row, its new last upload),
    /// one check per collection, one statement per kind of write, COMMIT.
    private func write(_ plan: [CollectionPlan], upload: SyncMessage.Upload, clientId: String) async throws
        -> [RefusedChange]?
    {
        do {
            return try await client.withTransaction(logger: logger) { connection -> [RefusedChange] in
                let objects = plan.flatMap { collection in collection.versions.ids.map { collection.className + "/" + $0 } }
                var applied: Int64 = -1
                // The upload's statements write their own history entries (PostgresStore+OwnHistory.swift):
                // set here, not in the function, which a server of an earlier version may have replaced.
                for try await (last, _) in try await connection.query("""
                    SELECT \(unescaped: Self.beginUploadFunction)(\(clientId), \(upload.uploadId), \(objects)::text[]),
                      set_config(\(Self.ownHistorySetting), 'on', true)
                    """, logger: logger).decode((Int64, String).self)
                { applied = last }
                if applied >= upload.uploadId { return [] }
                // Another connection of the client applied some of these entries since the merge
                // read its last upload: merge again without them.
                if let first = upload.firstChangeId, applied >= first { throw ObjectsChanged() }
                for collection in plan {
                    // Rolls back the transaction, with the client's last upload it moved.
                    guard try await collection.isCurrent(on: connection, logger: logger) else { throw ObjectsChanged() }
                }
                for collection in plan {
                    for write in collection.writes { try await connection.query(write, logger: logger) }
                }
                // Pending like the trigger's entries: numbered when the transaction commits.
                for write in plan.flatMap(\.historyWrites) { try await connection.query(write, logger: logger) }
                faults.uploadWritten(upload.uploadId, logger: logger)
                try await faults.beforeCommit(upload.uploadId, logger: logger)
                return plan.flatMap(\.refused)
            }
        } catch let error as PostgresTransactionError where error.closureError is ObjectsChanged && error.rollbackError == nil {
            return nil
        }
    }

    /// The function that starts an upload's transaction in one round trip: it sets the client
    /// id (the history trigger records it), takes the upload's object locks in a fixed order,
    /// locks the client's row and returns its last applied upload (-1: none); when this upload
    /// is newer, it records it as applied (the caller rolls back if it then writes nothing).
    static let beginUploadFunction = "trellis_begin_upload"

    static var beginUploadFunctionSQL: String {
        """
        CREATE OR REPLACE FUNCTION \(beginUploadFunction)(p_client text, p_upload bigint, p_objects text[])
        RETURNS bigint LANGUAGE plpgsql AS $$
        DECLARE
          applied bigint;
        BEGIN
          PERFORM set_config('trellis.client_id', p_client, true);
          PERFORM pg_advisory_xact_lock(h) FROM (SELECT DISTINCT hashtextextended(o, \(objectLockSeed)) AS h
            FROM unnest(p_objects) AS o ORDER BY h) AS locks;
          SELECT last_upload_id INTO applied FROM trellis_clients WHERE client_id = p_client FOR UPDATE;
          applied := coalesce(applied, -1);
          IF applied < p_upload THEN
            INSERT INTO trellis_clients (client_id, last_upload_id) VALUES (p_client, p_upload)
            ON CONFLICT (client_id) DO UPDATE SET last_upload_id = EXCLUDED.last_upload_id;
          END IF;
          RETURN applied;
        END $$
        """
    }

    /// Whether PostgreSQL ended the transaction to break a deadlock (SQLSTATE 40P01).
    static func isDeadlock(_ error: any Error) -> Bool {
        if let error = error as? PSQLError { return error.serverInfo?[.sqlState] == "40P01" }
        if let error = error as? PostgresTransactionError {
            return [error.closureError, error.commitError].contains { $0.map(isDeadlock) ?? false }
        }
        return false
    }

    /// The upload merged with what is stored, per collection in the order of its changes, and
    /// the client's last applied upload (-1: none), read with the first collection's objects.
    private func merge(_ upload: SyncMessage.Upload, clientId: String, permissions: SessionPermissions,
                       on connection: PostgresConnection) async throws -> (plan: [CollectionPlan], lastUploadId: Int64) {
        var order = [String]()
        var changesByClass = [String: [SyncObjectChange]]()
        for change in upload.changes where schema.collections[change.className] != nil {
            if changesByClass[change.className] == nil { order.append(change.className) }
            changesByClass[change.className, default: []].append(change)
        }
        var plans = [CollectionPlan]()
        // One budget of list-merge table cells for the whole upload: its merge is linear plus this.
        var matchBudget = DocumentMerge.maxMatchCellsPerUpload
        var lastUploadId: Int64?
        for className in order {
            guard let shape = schema.collections[className], let changes = changesByClass[className] else { continue }
            let asked = lastUploadId == nil ? clientId : nil
            let (plan, last) = try await merge(changes, className: className, shape: shape, permissions: permissions,
                                               matchBudget: &matchBudget, lastUploadOf: asked, on: connection)
            if asked != nil { lastUploadId = last }
            plans.append(plan)
        }
        return (plans, lastUploadId ?? -1)
    }

    /// One collection's changes of an upload, in order: read the objects they touch, merge in
    /// memory with the conflict rules, check each outcome against the permissions (a refused
    /// change leaves its object as it was); the statements that write the outcome, encoded, and
    /// the versions of the rows they replace; and the last applied upload of `client` if asked.
    private func merge(_ changes: [SyncObjectChange], className: String, shape: SchemaShape,
                       permissions: SessionPermissions, matchBudget: inout Int, lastUploadOf client: String?,
                       on connection: PostgresConnection) async throws -> (CollectionPlan, Int64)
    {
        let (initial, versions, lastUploadId) = try await currentStates(of: changes, className: className, shape: shape,
                                                                        lastUploadOf: client, on: connection)
        var states = initial
        var order = [String]()
        var refused = [(change: SyncObjectChange, reason: String)]()
        for uploaded in changes {
            let id = Self.idText(uploaded.primaryKey)
            guard var state = states[id] else { continue }
            let change = permissions.withoutHiddenFields(uploaded, stored: state.stored != nil)
            var merged = DocumentMerge.apply(change, to: state.stored, tombstone: state.tombstone,
                                             matchBudget: &matchBudget)
            if let key = shape.primaryKey { merged?.document[key] = change.primaryKey }
            if let reason = permissions.refusal(of: change, before: state.stored?.document, after: merged?.document) {
                refused.append((change, reason))
                continue
            }
            if !state.isTouched { order.append(id) }
            state.isTouched = true
            if let result = merged {
                if state.stored == nil { state.tombstone = nil }  // inserted again after a delete
                state.stored = result
            } else {
                if change.kind == .delete { state.tombstone = max(state.tombstone ?? "", change.timestamp) }
                state.stored = nil
            }
            states[id] = state
        }
        let outcome = UploadOutcome(order.compactMap { states[$0] })
        let (writes, historyWrites) = Self.writes(of: outcome, className: className, shape: shape)
        let refusedChanges = refused.map { change, reason in
            let stored = states[Self.idText(change.primaryKey)]?.stored
            return RefusedChange(className: className, primaryKey: change.primaryKey, reason: reason,
                                 document: stored.map { JSONValue.object($0.document) },
                                 timestamp: stored?.timestamps.values.max())
        }
        return (CollectionPlan(className: className, columnType: Self.columnType(shape), versions: versions,
                               writes: writes, historyWrites: historyWrites, refused: refusedChanges), lastUploadId)
    }

    /// The stored documents and tombstones of the objects `changes` touch, by `_id` text, and
    /// the versions of their rows (read without locks: ``CollectionPlan/isCurrent`` checks
    /// under the objects' locks that they are still those); with `client`, its last applied
    /// upload (-1: none). One statement, so one snapshot and one round trip.
    private func currentStates(of changes: [SyncObjectChange], className: String, shape: SchemaShape,
                               lastUploadOf client: String?, on connection: PostgresConnection) async throws
        -> (states: [String: ObjectState], versions: RowVersions, lastUploadId: Int64)
    {
        var states = [String: ObjectState]()
        var versions = RowVersions()
        for change in changes {
            let id = Self.idText(change.primaryKey)
            if states[id] != nil { continue }
            states[id] = ObjectState(primaryKey: change.primaryKey)
            versions.ids.append(id)
            versions.keys.append(change.primaryKey.jsonText)
        }
        let table = Self.quoted(className), type = Self.columnType(shape)
        var lastUploadId: Int64 = -1
        // Rows ('r'), tombstones ('t') and the client's last upload ('c') in one result.
        for try await (kind, key, first, second, xmin) in try await connection.query("""
            SELECT 'r', _id::text, doc::text, _meta::text, xmin::text FROM \(unescaped: table)
            WHERE _id = ANY(\(versions.ids)::\(unescaped: type)[])
            UNION ALL
            SELECT 't', pk::text, deleted_at, NULL, xmin::text FROM trellis_tombstones
            WHERE collection = \(className) AND pk = ANY(\(versions.keys)::jsonb[])
            UNION ALL
            SELECT 'c', last_upload_id::text, NULL, NULL, NULL FROM trellis_clients
            WHERE client_id = \(client ?? "") AND \(client != nil)
            """, logger: logger).decode((String, String, String?, String?, String?).self)
        {
            switch kind {
            case "r":
                guard let doc = first, let meta = second, let xmin else { continue }
                let timestamps = (try JSONValue(jsonText: meta).objectValue ?? [:]).compactMapValues(\.stringValue)
                let stored = DocumentMerge.Stored(document: try JSONValue(jsonText: doc).objectValue ?? [:],
                                                  timestamps: timestamps)
                states[key]?.stored = stored
                states[key]?.existed = true
                versions.rows[key] = xmin
            case "t":
                guard let deletedAt = first, let xmin else { continue }
                let id = Self.idText(try JSONValue(jsonText: key))
                states[id]?.tombstone = deletedAt
                states[id]?.initialTombstone = deletedAt
                versions.tombstones[id] = xmin
            default:
                lastUploadId = Int64(key) ?? -1
            }
        }
        return (states, versions, lastUploadId)
    }

    /// The statements that write the outcome of a collection's changes, one per kind of write
    /// (the upsert and the delete with their history entries), and those that write history
    /// entries alone (pending, numbered at the commit).
    private static func writes(of outcome: UploadOutcome, className: String, shape: SchemaShape)
        -> (writes: [PostgresQuery], historyWrites: [PostgresQuery])
    {
        var writes = [PostgresQuery]()
        var historyWrites = [PostgresQuery]()
        if !outcome.kept.isEmpty {
            // An update with no effect still runs: its history entry tells the uploader the outcome.
            let ids = outcome.kept.map { idText($0.primaryKey) }
            let docs = outcome.kept.map { $0.stored?.documentText ?? "{}" }
            let metas = outcome.kept.map { $0.stored?.timestampsText ?? "{}" }
            let stamps = outcome.kept.map { $0.stored?.timestamps.values.max() }
            writes.append(upsertWithHistory(className: className, shape: shape, ids: ids, docs: docs, metas: metas,
                                            stamps: stamps))
        }
        if !outcome.removed.isEmpty {
            let ids = outcome.removed.map { idText($0.primaryKey) }
            writes.append(deleteWithHistory(className: className, shape: shape, ids: ids))
        }
        if !outcome.alreadyGone.isEmpty {
            // Nothing to delete (deleted before, or an update that lost to a delete): the history
            // still says so, so the uploader removes its copy.
            let keys = outcome.alreadyGone.map(\.primaryKey.jsonText)
            historyWrites.append("""
                INSERT INTO trellis_history (collection, pk, doc, client_id)
                SELECT \(className), u.pk::jsonb, NULL, current_setting('trellis.client_id', true)
                FROM unnest(\(keys)::text[]) WITH ORDINALITY AS u(pk, n) ORDER BY u.n
                """)
        }
        if !outcome.newTombstones.isEmpty {
            let keys = outcome.newTombstones.map(\.primaryKey.jsonText)
            let stamps = outcome.newTombstones.map { $0.tombstone ?? "" }
            writes.append("""
                INSERT INTO trellis_tombstones (collection, pk, deleted_at)
                SELECT \(className), u.pk::jsonb, u.at FROM unnest(\(keys)::text[], \(stamps)::text[]) AS u(pk, at)
                ON CONFLICT (collection, pk) DO UPDATE
                SET deleted_at = greatest(trellis_tombstones.deleted_at, EXCLUDED.deleted_at)
                """)
        }
        if !outcome.clearedTombstones.isEmpty {
            let keys = outcome.clearedTombstones.map(\.primaryKey.jsonText)
            writes.append("""
                DELETE FROM trellis_tombstones WHERE collection = \(className) AND pk = ANY(\(keys)::jsonb[])
                """)
        }
        return (writes, historyWrites)
    }
}

/// The row versions (`xmin`, the transaction that wrote each) of the objects an upload's
/// changes to one collection touch, as its merge read them; absent: no row.
struct RowVersions: Sendable, Equatable {
    /// The objects' `_id` column values as text, and their primary keys as JSON text.
    var ids = [String]()
    var keys = [String]()
    var rows = [String: String]()
    var tombstones = [String: String]()
}

/// One collection's part of a merged upload: the writes of its outcome, ready to run, and
/// the row versions that outcome was merged from.
struct CollectionPlan: Sendable {
    let className: String
    let columnType: String
    let versions: RowVersions
    let writes: [PostgresQuery]
    /// History entries written directly (deletes of objects already gone).
    let historyWrites: [PostgresQuery]
    let refused: [RefusedChange]

    /// Whether the objects are still as the merge read them (run holding the objects' upload
    /// locks: no upload writes them meanwhile; the rows are locked against SQL writers until
    /// the commit).
    /// Reads one row per object: linear in the upload.
    func isCurrent(on connection: PostgresConnection, logger: Logging.Logger) async throws -> Bool {
        var rows = [String: String](), tombstones = [String: String]()
        // Rows, then tombstones, locked in one statement (one round trip).
        for try await (kind, key, xmin) in try await connection.query("""
            SELECT 'r', id, v FROM (SELECT _id::text AS id, xmin::text AS v FROM \(unescaped: PostgresStore.quoted(className))
              WHERE _id = ANY(\(versions.ids)::\(unescaped: columnType)[]) FOR UPDATE) AS r
            UNION ALL
            SELECT 't', id, v FROM (SELECT pk::text AS id, xmin::text AS v FROM trellis_tombstones
              WHERE collection = \(className) AND pk = ANY(\(versions.keys)::jsonb[]) FOR UPDATE) AS t
            """, logger: logger).decode((String, String, String).self)
        {
            if kind == "r" { rows[key] = xmin } else { tombstones[PostgresStore.idText(try JSONValue(jsonText: key))] = xmin }
        }
        return rows == versions.rows && tombstones == versions.tombstones
    }
}

/// The objects of an upload changed between its merge and its write (the transaction rolls back).
struct ObjectsChanged: Error {}

/// An upload whose objects other writers kept changing while it was merged.
struct UploadContention: Error, CustomStringConvertible {
    let uploadId: Int64
    let attempts: Int
    var description: String {
        "upload \(uploadId) was merged \(attempts) times and each time other writers had changed its objects "
            + "meanwhile; the client sends it again when it reconnects"
    }
}

/// A change the permissions refused: the object as the server keeps it (nil: it has none),
/// which the client gets back to undo its change.
struct RefusedChange: Sendable {
    var className: String
    var primaryKey: JSONValue
    var reason: String
    var document: JSONValue?
    /// The newest timestamp of the object as kept.
    var timestamp: String?
}

/// One object touched by an upload: what was stored before it and what is after the changes
/// applied so far.
struct ObjectState {
    let primaryKey: JSONValue
    var stored: DocumentMerge.Stored?
    var tombstone: String?
    var existed = false
    var initialTombstone: String?
    var isTouched = false

    init(primaryKey: JSONValue) { self.primaryKey = primaryKey }
}

/// The writes an upload's changes to one collection come to, by kind.
struct UploadOutcome {
    /// Objects that exist afterwards (inserted or updated).
    var kept = [ObjectState]()
    /// Objects stored before and deleted.
    var removed = [ObjectState]()
    /// Objects not stored before nor after (a delete of a deleted object, an update that lost to a delete).
    var alreadyGone = [ObjectState]()
    /// Tombstones new or moved later.
    var newTombstones = [ObjectState]()
    /// Tombstones of objects inserted again.
    var clearedTombstones = [ObjectState]()

    init(_ states: [ObjectState]) {
        for state in states {
            if state.stored != nil { kept.append(state) }
            else if state.existed { removed.append(state) }
            else { alreadyGone.append(state) }
            if let tombstone = state.tombstone, tombstone != state.initialTombstone { newTombstones.append(state) }
            if state.tombstone == nil, state.initialTombstone != nil { clearedTombstones.append(state) }
        }
    }
}

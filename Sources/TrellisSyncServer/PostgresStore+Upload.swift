import Foundation
import Logging
import PostgresNIO
import TrellisSyncProtocol

/// Applying an upload: a handful of SQL statements per collection, whatever the number of
/// changes (one `SELECT … WHERE _id = ANY`, one multi-row `INSERT … ON CONFLICT`, one
/// `DELETE`, the tombstones and the history of deletes with nothing to delete), all in one
/// transaction together with the client's last applied upload, so an upload is applied
/// entirely or not at all, and once.
extension PostgresStore {
    /// Applies one upload in one transaction, unless this client's upload `uploadId` was
    /// applied before (a retry after a lost ack or a server restart). Each change the
    /// permissions refuse is left out (a compensating write). Returns the history version
    /// after it and the refused changes, with their objects as stored afterwards.
    func apply(_ upload: SyncMessage.Upload, clientId: String, permissions: SessionPermissions) async throws
        -> (version: Int64, refused: [RefusedChange])
    {
        let refused = try await client.withTransaction(logger: logger) { connection -> [RefusedChange] in
            // The history lock first: uploads apply one at a time, so a row read here cannot be
            // inserted by another writer before this transaction writes it.
            try await connection.query("""
                SELECT set_config('trellis.client_id', \(clientId), true), pg_advisory_xact_lock(\(Self.historyLock))
                """, logger: logger)
            var applied: Int64 = -1
            for try await (last) in try await connection.query(
                "SELECT last_upload_id FROM trellis_clients WHERE client_id = \(clientId) FOR UPDATE",
                logger: logger).decode(Int64.self)
            { applied = last }
            if applied >= upload.uploadId { return [] }
            var refused = [RefusedChange]()
            var order = [String]()
            var changesByClass = [String: [SyncObjectChange]]()
            for change in upload.changes where schema.collections[change.className] != nil {
                if changesByClass[change.className] == nil { order.append(change.className) }
                changesByClass[change.className, default: []].append(change)
            }
            for className in order {
                guard let shape = schema.collections[className], let changes = changesByClass[className] else { continue }
                refused += try await apply(changes, className: className, shape: shape, permissions: permissions,
                                           on: connection)
            }
            try await connection.query("""
                INSERT INTO trellis_clients (client_id, last_upload_id) VALUES (\(clientId), \(upload.uploadId))
                ON CONFLICT (client_id) DO UPDATE SET last_upload_id = EXCLUDED.last_upload_id
                """, logger: logger)
            faults.uploadWritten(upload.uploadId, logger: logger)
            return refused
        }
        faults.uploadCommitted(upload.uploadId, logger: logger)
        return (try await latestVersion(), refused)
    }

    /// One collection's changes of an upload, in order: read the objects they touch, merge in
    /// memory with the conflict rules, check each outcome against the permissions (a refused
    /// change leaves its object as it was), write the outcome per object.
    private func apply(_ changes: [SyncObjectChange], className: String, shape: SchemaShape,
                       permissions: SessionPermissions, on connection: PostgresConnection) async throws -> [RefusedChange] {
        var states = try await currentStates(of: changes, className: className, shape: shape, on: connection)
        var order = [String]()
        var refused = [(change: SyncObjectChange, reason: String)]()
        for uploaded in changes {
            let id = Self.idText(uploaded.primaryKey)
            guard var state = states[id] else { continue }
            let change = permissions.withoutHiddenFields(uploaded, stored: state.stored != nil)
            var merged = DocumentMerge.apply(change, to: state.stored, tombstone: state.tombstone)
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
        try await write(outcome, className: className, shape: shape, on: connection)
        return refused.map { change, reason in
            let stored = states[Self.idText(change.primaryKey)]?.stored
            return RefusedChange(className: className, primaryKey: change.primaryKey, reason: reason,
                                 document: stored.map { JSONValue.object($0.document) },
                                 timestamp: stored?.timestamps.values.max())
        }
    }

    /// The stored documents and tombstones of the objects `changes` touch, by `_id` text.
    private func currentStates(of changes: [SyncObjectChange], className: String, shape: SchemaShape,
                               on connection: PostgresConnection) async throws -> [String: ObjectState] {
        var states = [String: ObjectState]()
        var ids = [String](), keys = [String]()
        for change in changes {
            let id = Self.idText(change.primaryKey)
            if states[id] != nil { continue }
            states[id] = ObjectState(primaryKey: change.primaryKey)
            ids.append(id)
            keys.append(change.primaryKey.jsonText)
        }
        let table = Self.quoted(className), type = Self.columnType(shape)
        for try await (id, doc, meta) in try await connection.query("""
            SELECT _id::text, doc::text, _meta::text FROM \(unescaped: table)
            WHERE _id = ANY(\(ids)::\(unescaped: type)[]) FOR UPDATE
            """, logger: logger).decode((String, String, String).self)
        {
            let timestamps = (try JSONValue(jsonText: meta).objectValue ?? [:]).compactMapValues(\.stringValue)
            let stored = DocumentMerge.Stored(document: try JSONValue(jsonText: doc).objectValue ?? [:],
                                              timestamps: timestamps)
            states[id]?.stored = stored
            states[id]?.existed = true
        }
        for try await (key, deletedAt) in try await connection.query("""
            SELECT pk::text, deleted_at FROM trellis_tombstones
            WHERE collection = \(className) AND pk = ANY(\(keys)::jsonb[])
            """, logger: logger).decode((String, String).self)
        {
            let id = Self.idText(try JSONValue(jsonText: key))
            states[id]?.tombstone = deletedAt
            states[id]?.initialTombstone = deletedAt
        }
        return states
    }

    /// Writes the outcome of a collection's changes with one statement per kind of write.
    private func write(_ outcome: UploadOutcome, className: String, shape: SchemaShape,
                       on connection: PostgresConnection) async throws {
        let table = Self.quoted(className), type = Self.columnType(shape)
        if !outcome.kept.isEmpty {
            // An update with no effect still runs: its history entry tells the uploader the outcome.
            let ids = outcome.kept.map { Self.idText($0.primaryKey) }
            let docs = outcome.kept.map { JSONValue.object($0.stored?.document ?? [:]).jsonText }
            let metas = outcome.kept.map { JSONValue.object(($0.stored?.timestamps ?? [:]).mapValues(JSONValue.string)).jsonText }
            try await connection.query("""
                INSERT INTO \(unescaped: table) (_id, doc, _meta)
                SELECT u.id::\(unescaped: type), u.doc::jsonb, u.meta::jsonb
                FROM unnest(\(ids)::text[], \(docs)::text[], \(metas)::text[]) WITH ORDINALITY AS u(id, doc, meta, n)
                ORDER BY u.n
                ON CONFLICT (_id) DO UPDATE SET doc = EXCLUDED.doc, _meta = EXCLUDED._meta
                """, logger: logger)
        }
        if !outcome.removed.isEmpty {
            let ids = outcome.removed.map { Self.idText($0.primaryKey) }
            try await connection.query("DELETE FROM \(unescaped: table) WHERE _id = ANY(\(ids)::\(unescaped: type)[])",
                                       logger: logger)
        }
        if !outcome.alreadyGone.isEmpty {
            // Nothing to delete (deleted before, or an update that lost to a delete): the history
            // still says so, so the uploader removes its copy.
            let keys = outcome.alreadyGone.map(\.primaryKey.jsonText)
            try await connection.query("""
                INSERT INTO trellis_history (collection, pk, doc, client_id)
                SELECT \(className), u.pk::jsonb, NULL, current_setting('trellis.client_id', true)
                FROM unnest(\(keys)::text[]) WITH ORDINALITY AS u(pk, n) ORDER BY u.n
                """, logger: logger)
            try await connection.query("SELECT pg_notify('trellis_history', \(className))", logger: logger)
        }
        if !outcome.newTombstones.isEmpty {
            let keys = outcome.newTombstones.map(\.primaryKey.jsonText)
            let stamps = outcome.newTombstones.map { $0.tombstone ?? "" }
            try await connection.query("""
                INSERT INTO trellis_tombstones (collection, pk, deleted_at)
                SELECT \(className), u.pk::jsonb, u.at FROM unnest(\(keys)::text[], \(stamps)::text[]) AS u(pk, at)
                ON CONFLICT (collection, pk) DO UPDATE
                SET deleted_at = greatest(trellis_tombstones.deleted_at, EXCLUDED.deleted_at)
                """, logger: logger)
        }
        if !outcome.clearedTombstones.isEmpty {
            let keys = outcome.clearedTombstones.map(\.primaryKey.jsonText)
            try await connection.query("""
                DELETE FROM trellis_tombstones WHERE collection = \(className) AND pk = ANY(\(keys)::jsonb[])
                """, logger: logger)
        }
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

import Foundation
import Logging
import PostgresNIO
import TrellisSyncProtocol

/// PostgreSQL as the system of record (see docs/SYNC.md, "Tables"): one table per collection
/// (`_id` typed, `doc jsonb`, `_meta jsonb` with the per-property timestamps), the history
/// `trellis_history` written with every write to a collection table (by the server's upload
/// statements themselves, by a trigger for everyone else's: a change made with SQL by another
/// program is synced like any other), tombstones of deleted objects, and each
/// client's last applied upload (so an upload retried after a crash is applied once).
struct PostgresStore: Sendable {
    let client: PostgresClient
    let schema: ServerSchema
    let logger: Logging.Logger
    /// Crash points for the recovery tests (none unless asked for on the command line).
    var faults = FaultInjection()

    /// Serializes the numbering of history entries, so versions become visible in order: taken
    /// when a transaction that wrote entries commits (`PostgresStore+HistoryNumbering.swift`),
    /// held to the end of the commit.
    static let historyLock: Int64 = 7_217_001
    /// The seed of the per-object locks of uploads (`hashtextextended(class/_id, seed)`).
    static let objectLockSeed: Int64 = 7_217_002
    static let setupLock: Int64 = 7_217_000

    /// Creates what is missing (tables, trigger function, triggers); safe to run from several
    /// server processes at once.
    func prepare(schemaVersion: UInt64) async throws {
        do {
            try await prepareTables(schemaVersion: schemaVersion)
        } catch let error as PostgresTransactionError {
            // A refused schema (OptionError) says what to do: report it, not the wrapper.
            if let reason = error.closureError as? OptionError { throw reason }
            throw error
        }
    }

    private func prepareTables(schemaVersion: UInt64) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await checkSupportedVersion(on: connection)
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.setupLock))", logger: logger)
            try await adoptSchema(version: schemaVersion, on: connection)
            try await prepareIdentity(on: connection)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS trellis_history (version bigserial PRIMARY KEY, collection text NOT NULL,
                  pk jsonb NOT NULL, doc jsonb, client_id text, recorded_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
            // Each object's previous state (SessionPermissions: may a client hold a copy?).
            try await prepareHistoryObjectIndex(on: connection)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS trellis_tombstones (collection text NOT NULL, pk jsonb NOT NULL,
                  deleted_at text NOT NULL, PRIMARY KEY (collection, pk))
                """, logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS trellis_clients (client_id text PRIMARY KEY, last_upload_id bigint NOT NULL)
                """, logger: logger)
            // The user a client file belongs to (databases made before it get the column).
            try await connection.query("ALTER TABLE trellis_clients ADD COLUMN IF NOT EXISTS user_id text",
                                       logger: logger)
            try await connection.query("ALTER TABLE trellis_history ADD COLUMN IF NOT EXISTS stamp text", logger: logger)
            // What the rules' user expansions were read from when the client's last session
            // started (its custom data and user data), to tell when its role changed.
            try await connection.query("ALTER TABLE trellis_clients ADD COLUMN IF NOT EXISTS rule_inputs jsonb",
                                       logger: logger)
            for function in SQLWriteStamps.functions { try await connection.query(PostgresQuery(unsafeSQL: function), logger: logger) }
            try await connection.query(PostgresQuery(unsafeSQL: Self.beginUploadFunctionSQL), logger: logger)
            try await prepareHistoryNumbering(on: connection)
            // The entries of rows written by SQL (and by servers of earlier versions); the
            // server's uploads write theirs in their statements (PostgresStore+OwnHistory.swift).
            try await connection.query("""
                CREATE OR REPLACE FUNCTION trellis_record_change() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                  by_sql boolean := coalesce(current_setting('trellis.client_id', true), '') = '';
                  stamp text;
                BEGIN
                  -- No lock: the entry is pending (a negative version) until its transaction commits.
                  IF TG_OP = 'DELETE' THEN
                    stamp := \(unescaped: Self.newestStamp("OLD._meta"));
                    IF by_sql THEN
                      -- A delete made with SQL leaves a tombstone like a client's delete.
                      stamp := trellis_sql_stamp(OLD._meta);
                      INSERT INTO trellis_tombstones (collection, pk, deleted_at)
                      VALUES (TG_TABLE_NAME, OLD.doc -> TG_ARGV[0], stamp)
                      ON CONFLICT (collection, pk) DO UPDATE
                      SET deleted_at = greatest(trellis_tombstones.deleted_at, EXCLUDED.deleted_at);
                    END IF;
                    INSERT INTO trellis_history (collection, pk, doc, client_id, stamp)
                    VALUES (TG_TABLE_NAME, OLD.doc -> TG_ARGV[0], NULL, current_setting('trellis.client_id', true), stamp);
                  ELSE
                    INSERT INTO trellis_history (collection, pk, doc, client_id, stamp)
                    VALUES (TG_TABLE_NAME, NEW.doc -> TG_ARGV[0], NEW.doc, current_setting('trellis.client_id', true),
                            \(unescaped: Self.newestStamp("NEW._meta")));
                  END IF;
                  RETURN NULL;
                END $$
                """, logger: logger)
            for (name, shape) in schema.collections.sorted(by: { $0.key < $1.key }) {
                let key = shape.primaryKey ?? "_id"
                let table = Self.quoted(name)
                try await connection.query("""
                    CREATE TABLE IF NOT EXISTS \(unescaped: table) (_id \(unescaped: Self.columnType(shape)) PRIMARY KEY,
                      doc jsonb NOT NULL, _meta jsonb NOT NULL DEFAULT '{}')
                    """, logger: logger)
                // Only SQL writes are stamped: the server's own (client id set) skip the call.
                try await connection.query("""
                    CREATE OR REPLACE TRIGGER trellis_stamp BEFORE INSERT OR UPDATE ON \(unescaped: table)
                    FOR EACH ROW WHEN (coalesce(current_setting('trellis.client_id', true), '') = '')
                    EXECUTE FUNCTION trellis_stamp_sql_write()
                    """, logger: logger)
                try await prepareHistoryTrigger(on: table, primaryKey: key, connection: connection)
            }
        }
    }

    /// SQL for the newest timestamp in a `_meta` expression (NULL when it has none).
    static func newestStamp(_ meta: String) -> String {
        "(SELECT max(value) FROM jsonb_each_text(coalesce(\(meta), '{}'::jsonb)))"
    }

    static func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "") + "\"" }

    /// The `_id` column's type for the primary key's BSON type.
    static func columnType(_ shape: SchemaShape) -> String {
        switch shape.types[shape.primaryKey ?? "_id"] {
        case "long", "int": "bigint"
        case "uuid": "uuid"
        default: "text"
        }
    }

    /// The `_id` column's value (as text) of a primary key in Extended JSON.
    static func idText(_ key: JSONValue) -> String {
        switch key {
        case .string(let text): return text
        case .int(let value): return String(value)
        case .double(let value): return String(Int64(value))
        case .object(let object):
            if let oid = object["$oid"]?.stringValue { return oid }
            if let long = object["$numberLong"]?.stringValue ?? object["$numberInt"]?.stringValue { return long }
            if let binary = object["$binary"]?["base64"]?.stringValue, let data = Data(base64Encoded: binary),
               data.count == 16
            {
                return data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }.uuidString.lowercased()
            }
            return key.jsonText
        default: return key.jsonText
        }
    }

    /// The newest history version.
    func latestVersion() async throws -> Int64 {
        let rows = try await client.query("SELECT coalesce(max(version), 0)::bigint FROM trellis_history", logger: logger)
        for try await (version) in rows.decode(Int64.self) { return version }
        return 0
    }

    /// Binds a client file's id to the user of its first session; false when the id is
    /// already another user's (another user's client could otherwise claim it and have the
    /// owner's uploads skipped as already applied).
    func claim(clientId: String, userId: String) async throws -> Bool {
        // Read first: a known client writes nothing here (no lock taken on trellis_clients).
        for try await (owner) in try await client.query(
            "SELECT user_id FROM trellis_clients WHERE client_id = \(clientId)", logger: logger).decode(String?.self)
        {
            if let owner { return owner == userId }
        }
        let rows = try await client.query("""
            INSERT INTO trellis_clients (client_id, last_upload_id, user_id) VALUES (\(clientId), 0, \(userId))
            ON CONFLICT (client_id) DO UPDATE SET user_id = coalesce(trellis_clients.user_id, EXCLUDED.user_id)
            RETURNING user_id
            """, logger: logger)
        for try await (owner) in rows.decode(String?.self) { return owner == userId }
        return false
    }

    /// A user's custom data (`%%user.custom_data`): the document of `collection` whose
    /// `field` holds the user id, or an empty document.
    func customUserData(collection: String, userIdField field: String, userId: String) async throws
        -> [String: JSONValue]
    {
        guard schema.collections[collection] != nil else { return [:] }
        let rows = try await client.query("""
            SELECT doc::text FROM \(unescaped: Self.quoted(collection)) WHERE doc ->> \(field) = \(userId) LIMIT 1
            """, logger: logger)
        for try await (doc) in rows.decode(String.self) { return try JSONValue(jsonText: doc).objectValue ?? [:] }
        return [:]
    }

    /// A user's data (`%%user.data`): the Custom JWT metadata of their last login (empty for
    /// anonymous users and before any).
    func userData(of userId: String) async throws -> [String: JSONValue] {
        let rows = try await client.query("SELECT data::text FROM trellis_users WHERE user_id = \(userId)", logger: logger)
        for try await (data) in rows.decode(String.self) { return try JSONValue(jsonText: data).objectValue ?? [:] }
        return [:]
    }

    /// The rule inputs of the client's last session start (nil: none), the ones before them,
    /// and the history version of the bootstrap sent when they changed (the client has applied
    /// it once its last server version reaches that).
    func ruleInputs(of clientId: String) async throws -> (current: RuleInputs, previous: RuleInputs?, version: Int64)? {
        let rows = try await client.query("SELECT rule_inputs::text FROM trellis_clients WHERE client_id = \(clientId)",
                                          logger: logger)
        for try await (text) in rows.decode(String?.self) {
            guard let text, let object = try JSONValue(jsonText: text).objectValue,
                  let current = object["current"].flatMap(RuleInputs.init(json:)) else { return nil }
            var version: Int64 = 0
            if case .int(let value)? = object["version"] { version = value }
            return (current, object["previous"].flatMap(RuleInputs.init(json:)), version)
        }
        return nil
    }

    func setRuleInputs(of clientId: String, current: RuleInputs, previous: RuleInputs?, version: Int64) async throws {
        let text = JSONValue.object(["current": current.json, "previous": previous?.json ?? .null, "version": .int(version)])
            .jsonText
        try await client.query("UPDATE trellis_clients SET rule_inputs = \(text)::jsonb WHERE client_id = \(clientId)",
                               logger: logger)
    }

    /// History entries after `version`, oldest first, each with the object's document before
    /// it (the newest earlier entry's, found through the object's hashed key and the version:
    /// `PostgresStore+HistoryObjectIndex.swift`)
    /// and the client that wrote it.
    func history(after version: Int64, limit: Int = 500) async throws -> [HistoryEntry] {
        let rows = try await client.query("""
            SELECT h.version, h.collection, h.pk::text, h.doc::text, h.stamp, h.client_id, p.doc::text,
              p.version IS NOT NULL OR (SELECT history_floor FROM trellis_server_identity WHERE id = 1) = 0
            FROM trellis_history h
            LEFT JOIN LATERAL (SELECT e.version, e.doc FROM trellis_history e WHERE \(unescaped: Self.sameHistoryObject("e", "h"))
              AND e.version < h.version ORDER BY e.version DESC LIMIT 1) p ON true
            WHERE h.version > \(version) ORDER BY h.version LIMIT \(limit)
            """, logger: logger)
        var entries = [HistoryEntry]()
        for try await (version, collection, pk, doc, stamp, clientId, previous, known)
            in rows.decode((Int64, String, String, String?, String?, String?, String?, Bool?).self)
        {
            let change = ServerChange(className: collection, primaryKey: try JSONValue(jsonText: pk),
                                      document: try doc.map { try JSONValue(jsonText: $0) }, serverVersion: version,
                                      timestamp: stamp)
            entries.append(HistoryEntry(change: change, previous: try previous.map { try JSONValue(jsonText: $0) },
                                        previousKnown: known ?? false,
                                        clientId: clientId.flatMap { $0.isEmpty ? nil : $0 }))
        }
        return entries
    }

    /// The documents of the subscribed collections as of one snapshot (those `filters` may
    /// select, all of a collection without a filter), each with its newest timestamp, read
    /// `batchSize` rows at a time in `_id` order (keyset pagination in one `REPEATABLE READ`
    /// transaction) and handed to `body` with the snapshot's history version as they are
    /// read: a bootstrap of any size holds one batch in memory. Returns that version. The
    /// filters are used on a UTF-8 database only (their string comparisons need it).
    func snapshot(of collections: [String], filters: [String: SubscriptionFilter] = [:], batchSize: Int = 1_000,
                  body: (_ version: Int64, _ className: String, _ rows: [StoredDocument]) async throws -> Void)
        async throws -> Int64
    {
        try await client.withConnection { connection in
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            do {
                var version: Int64 = 0
                for try await (latest) in try await connection.query(
                    "SELECT coalesce(max(version), 0)::bigint FROM trellis_history", logger: logger).decode(Int64.self)
                { version = latest }
                var isUTF8 = false
                for try await (encoding) in try await connection.query(
                    "SELECT current_setting('server_encoding')", logger: logger).decode(String.self)
                { isUTF8 = encoding == "UTF8" }
                for name in Set(collections).sorted() {
                    guard let shape = schema.collections[name] else { continue }
                    let filter = isUTF8 ? filters[name] : nil
                    var after: String?
                    repeat {
                        let query = SubscriptionFilter.selectDocuments(from: Self.quoted(name), idType: Self.columnType(shape),
                                                                       filter: filter, after: after, limit: batchSize)
                        var rows = [StoredDocument]()
                        rows.reserveCapacity(batchSize)
                        after = nil
                        for try await (id, doc, stamp) in try await connection.query(query, logger: logger)
                            .decode((String, String, String?).self)
                        {
                            rows.append(StoredDocument(document: try JSONValue(jsonText: doc), timestamp: stamp))
                            after = id
                        }
                        if !rows.isEmpty { try await body(version, name, rows) }
                        if rows.count < batchSize { after = nil }
                    } while after != nil
                }
                try await connection.query("COMMIT", logger: logger)
                return version
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }
}

/// A stored document as a bootstrap reads it: the document and its newest timestamp.
struct StoredDocument: Sendable {
    var document: JSONValue
    var timestamp: String?
}

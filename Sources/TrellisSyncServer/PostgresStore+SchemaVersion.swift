import Foundation
import Logging
import PostgresNIO
import TrellisSyncProtocol

/// The schema the database serves, kept in `trellis_schema` (one row: the schema version and
/// every collection's App Services schema), so a server started with a changed schema can
/// tell, as Device Sync does, additive changes (new collections, new optional properties:
/// adopted at the same schema version, existing clients keep syncing) from breaking ones
/// (a property removed, retyped, made required or optional, a new required property, a
/// collection removed: refused unless `--schema-version` is raised; clients still on the old
/// version are then told to update, error 235).
extension PostgresStore {
    /// Checks `schema` at `version` against the stored one and stores it; throws (the server
    /// does not start) on a breaking change without a new version, or an older version.
    func adoptSchema(version: UInt64, on connection: PostgresConnection) async throws {
        try await connection.query("""
            CREATE TABLE IF NOT EXISTS trellis_schema (id int PRIMARY KEY CHECK (id = 1), version bigint NOT NULL,
              collections jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())
            """, logger: logger)
        var stored: (version: Int64, collections: String)?
        for try await (storedVersion, collections) in try await connection.query(
            "SELECT version, collections::text FROM trellis_schema WHERE id = 1 FOR UPDATE", logger: logger)
            .decode((Int64, String).self)
        {
            stored = (storedVersion, collections)
        }
        let text = JSONValue.object(schema.documents).jsonText
        guard let stored else {
            try await connection.query("""
                INSERT INTO trellis_schema (id, version, collections) VALUES (1, \(Int64(version)), \(text)::jsonb)
                """, logger: logger)
            return
        }
        if stored.version > Int64(version) {
            throw OptionError("The database serves schema version \(stored.version); this server was started with "
                + "--schema-version \(version). Start it with --schema-version \(stored.version) (or later, with a new "
                + "schema).")
        }
        if stored.version == Int64(version) {
            let breaking = try Self.breakingChanges(from: stored.collections, to: schema)
            if !breaking.isEmpty {
                throw OptionError("The schema has breaking changes at the same schema version \(version): "
                    + breaking.joined(separator: "; ") + ". Breaking changes need a new schema version: start the "
                    + "server with --schema-version \(version + 1) (clients still on version \(version) are then told "
                    + "to update, error 235), or make the change additive (new collections, new optional properties).")
            }
        }
        try await connection.query("""
            UPDATE trellis_schema SET version = \(Int64(version)), collections = \(text)::jsonb, updated_at = now()
            WHERE id = 1
            """, logger: logger)
    }

    /// The breaking changes from the stored collections (JSON text) to `schema`.
    static func breakingChanges(from storedText: String, to schema: ServerSchema) throws -> [String] {
        let stored = try JSONValue(jsonText: storedText).objectValue ?? [:]
        var lines = [String]()
        for (name, document) in stored.sorted(by: { $0.key < $1.key }) {
            guard let new = schema.collections[name] else {
                lines.append("the collection '\(name)' was removed")
                continue
            }
            lines += new.breakingChanges(from: try SchemaShape(document: document))
        }
        return lines
    }
}

import Foundation
import Testing
import Trellis
import TrellisSync
import TrellisTestSupport

/// An object's history entries are found through a hashed key of its collection and primary
/// key and the version (docs/SYNC.md, "Tables"; `PostgresStore+HistoryObjectIndex.swift`),
/// not through `(collection, pk jsonb, version)`, whose `jsonb` comparisons were a large part
/// of PostgreSQL's time per uploaded object.
@Suite struct HistoryObjectIndexTests {
    static func indexes(_ database: String) throws -> String {
        try PostgresFixture.psql(database, """
            SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE tablename = 'trellis_history'
            """)
    }

    /// A database an earlier server made (its `(collection, pk, version)` index, entries
    /// written under it) gets the hashed index and loses the old one when a server starts, and
    /// its entries are found by object: a device holding a young dog that SQL then makes older
    /// gets its removal, sent because the previous entry (written before the upgrade) was
    /// selected by the device's subscription.
    @Test func indexOfAnEarlierServerIsReplacedWhenAServerStarts() async throws {
        let fixture = try SyncFixture()
        fixture.server.kill(SIGKILL)
        let id = ObjectId.generate().stringValue
        try PostgresFixture.psql(fixture.database, """
            DROP INDEX trellis_history_object_key;
            CREATE INDEX trellis_history_object ON trellis_history (collection, pk, version);
            INSERT INTO "SyncDog" (_id, doc) VALUES ('\(id)', '{"_id": {"$oid": "\(id)"}, "name": "Rex", "age": 3}');
            """)
        #expect(try Self.indexes(fixture.database) == "trellis_history_object,trellis_history_pkey")

        let server = try ServerProcess(database: fixture.database, schema: fixture.schema)
        #expect(try Self.indexes(fixture.database) == "trellis_history_object_key,trellis_history_pkey")
        let reader = try await Device(server: server, subscriptions: { subs in
            subs.append(QuerySubscription<SyncDog>(name: "young") { $0.age < 4 })
        })
        try await reader.sync()
        #expect(try reader.run { realm in realm.objects(SyncDog.self).map(\.name) } == ["Rex"])
        try PostgresFixture.psql(fixture.database, """
            UPDATE "SyncDog" SET doc = jsonb_set(doc, '{age}', '4') WHERE _id = '\(id)'
            """)
        #expect(try await eventually(.seconds(30)) { try reader.run { realm in realm.objects(SyncDog.self).count } == 0 })
        await reader.close()
    }

    /// The key keeps `jsonb` equality: primary keys equal as `jsonb` (`3`, `3.0`, `3e0`) get
    /// one key, so an object's entries are all found whatever form a writer gave its number;
    /// other values (the string `"3"`, another collection) get others.
    @Test func keyOfEqualPrimaryKeysIsOne() async throws {
        let fixture = try SyncFixture()
        let key = try PostgresFixture.psql(fixture.database, """
            SELECT pg_get_indexdef('trellis_history_object_key'::regclass, 1, true)
            """)
        #expect(key.contains("hashtextextended"))
        let distinct = { (values: String) in
            try PostgresFixture.psql(fixture.database, """
                SELECT count(DISTINCT \(key)) FROM (VALUES \(values)) AS t(collection, pk)
                """)
        }
        #expect(try distinct("('Dog', '3'::jsonb), ('Dog', '3.0'), ('Dog', '3e0'), ('Dog', '3.000')") == "1")
        #expect(try distinct("('Dog', '3'::jsonb), ('Dog', '\"3\"'), ('Cat', '3'), ('Dog', '{\"$numberLong\": \"3\"}')") == "4")
        #expect(try distinct("""
            ('Dog', '{"$oid": "0123456789abcdef01234567"}'::jsonb), ('Dog', '{ "$oid":"0123456789abcdef01234567" }')
            """) == "1")
    }
    /// Before the history has statistics (a new database: autovacuum analyzes it after a
    /// minute), a download's read of 500 entries still finds each previous entry with one
    /// backward index scan, estimated cheap: with the hash and the version alone the planner
    /// took each lookup for 0.5 % of the history and JIT-compiled every such read (30 ms).
    @Test func previousEntryLookupIsCheapBeforeTheHistoryHasStatistics() async throws {
        let fixture = try SyncFixture()
        let database = fixture.database
        let key = { (alias: String) in
            try PostgresFixture.psql(database, """
                SELECT pg_get_indexdef('trellis_history_object_key'::regclass, 1, true)
                """).replacingOccurrences(of: "collection", with: "\(alias).collection")
                .replacingOccurrences(of: "pk", with: "\(alias).pk")
        }
        try PostgresFixture.psql(database, """
            ALTER TABLE trellis_history SET (autovacuum_enabled = false);
            INSERT INTO trellis_history (version, collection, pk, doc)
            SELECT i, 'SyncDog', jsonb_build_object('$oid', md5(i::text)),
              jsonb_build_object('name', repeat('x', 300), 'age', i) FROM generate_series(1, 30000) i;
            """)
        let plan = try PostgresFixture.psql(database, """
            EXPLAIN SELECT h.version, p.doc FROM trellis_history h LEFT JOIN LATERAL (
              SELECT e.version, e.doc FROM trellis_history e WHERE \(try key("e")) = \(try key("h"))
                AND e.collection = h.collection AND e.pk = h.pk AND e.version < h.version
              ORDER BY e.version DESC LIMIT 1) p ON true
            WHERE h.version > 10000 ORDER BY h.version LIMIT 500
            """)
        #expect(plan.contains("Index Scan Backward using trellis_history_object_key"))
        #expect(!plan.contains("JIT"))
    }
}

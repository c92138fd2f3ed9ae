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
}

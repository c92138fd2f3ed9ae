import Foundation
import Testing
import Trellis
import TrellisSync
import TrellisTestSupport

/// An upload's history entries are written by its own statements (docs/SYNC.md, "Tables";
/// `PostgresStore+OwnHistory.swift`): one per object, as the row trigger writes them for
/// everyone else's rows, without a PL/pgSQL call per row. The trigger still records what
/// the upload's statements do not write themselves: rows another trigger writes during the
/// upload, and every upload in a database whose trigger an earlier server made.
@Suite struct UploadHistoryWritesTests {
    /// How many times `function` (PL/pgSQL) was called in `database`, as far as the
    /// statistics have been reported (`track_functions`).
    static func calls(of function: String, in database: String) throws -> Int {
        Int(try PostgresFixture.psql(database, """
            SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions WHERE funcname = '\(function)'
            """)) ?? -1
    }

    static func dogNames(_ device: Device) throws -> [String] {
        try device.run { realm in realm.objects(SyncDog.self).map(\.name).sorted() }
    }

    /// 50 dogs uploaded, then one deleted: 51 entries, each as the trigger writes them (the
    /// row's document, its newest timestamp, the client), and neither the history trigger's nor
    /// the timestamp trigger's function called once (before, once per row each).
    @Test func uploadWritesOneEntryPerObjectWithoutCallingTheRowTriggers() async throws {
        let database = try PostgresFixture.makeDatabase()
        let name = try #require(database.split(separator: "/").last)
        try PostgresFixture.psql(database, "ALTER DATABASE \(name) SET track_functions = 'pl'")
        let server = try ServerProcess(database: database, schema: try makeSchemaFile())
        let device = try await Device(server: server)
        try await device.sync()
        let ids = (0..<50).map { _ in ObjectId.generate() }
        try device.write { realm in
            for (n, id) in ids.enumerated() { realm.add(SyncDog(value: ["_id": id, "name": "dog \(n)", "age": n])) }
        }
        try await device.sync()
        try device.write { realm in
            if let first = realm.object(ofType: SyncDog.self, forPrimaryKey: ids[0]) { realm.delete(first) }
        }
        try await device.sync()

        #expect(try PostgresFixture.psql(database, "SELECT count(*), count(DISTINCT pk) FROM trellis_history") == "51|50")
        // Each entry of a dog stored is its row, stamped with the row's newest timestamp.
        #expect(try PostgresFixture.psql(database, """
            SELECT count(*) FROM trellis_history h JOIN "SyncDog" d ON h.pk = d.doc -> '_id'
            WHERE h.doc = d.doc AND h.stamp = (SELECT max(value) FROM jsonb_each_text(d._meta))
              AND h.client_id <> '' AND h.version > 0
            """) == "49")
        let deleted = try PostgresFixture.psql(database, """
            SELECT count(*) FROM trellis_history WHERE pk = '{"$oid": "\(ids[0].stringValue)"}'::jsonb
              AND doc IS NULL AND stamp IS NOT NULL AND client_id <> ''
            """)
        #expect(deleted == "1")
        // A backend reports its counts when idle (within about 10 s): wait for the numbering
        // of both uploads, which ran in the same transactions as any row trigger would have.
        #expect(try await eventually(.seconds(60)) { try Self.calls(of: "trellis_number_history", in: database) >= 2 })
        #expect(try Self.calls(of: "trellis_record_change", in: database) == 0)
        #expect(try Self.calls(of: "trellis_stamp_sql_write", in: database) == 0)
        await device.close()
    }

    /// An upload's entries come in the order of its changes (not of the objects' keys), and
    /// each is stamped with its object's newest timestamp as stored, the merge's, also for an
    /// update that keeps older timestamps of other fields: the statement joins the stamps the
    /// server computed to the rows it wrote (before, PostgreSQL read them from each row's `_meta`).
    @Test func entriesFollowTheUploadsOrderStampedWithEachObjectsNewestTimestamp() async throws {
        let fixture = try SyncFixture()
        let device = try await Device(server: fixture.server)
        try await device.sync()
        // Keys in descending order: the upload's order is not the keys' order.
        let ids = (0..<30).map { _ in ObjectId.generate() }.sorted { $0.stringValue > $1.stringValue }
        try device.write { realm in
            for (n, id) in ids.enumerated() { realm.add(SyncDog(value: ["_id": id, "name": "dog \(n)", "age": n])) }
        }
        try await device.sync()
        try device.write { realm in
            for id in ids.prefix(10) { realm.object(ofType: SyncDog.self, forPrimaryKey: id)?.age += 100 }
        }
        try await device.sync()
        let names = try PostgresFixture.psql(fixture.database, """
            SELECT string_agg(doc ->> 'name', ',' ORDER BY version) FROM trellis_history WHERE version <= (
              SELECT min(version) + 29 FROM trellis_history)
            """)
        #expect(names == (0..<30).map { "dog \($0)" }.joined(separator: ","))
        // Every entry's stamp is its document's newest timestamp: the newest entries' are
        // the rows' (the updated dogs' too), and each is the largest of its row's timestamps.
        #expect(try PostgresFixture.psql(fixture.database, """
            SELECT count(*), count(*) FILTER (WHERE h.stamp = (SELECT max(value) FROM jsonb_each_text(d._meta)))
            FROM "SyncDog" d JOIN LATERAL (SELECT stamp FROM trellis_history e WHERE e.pk = d.doc -> '_id'
              ORDER BY version DESC LIMIT 1) h ON true
            """) == "30|30")
        #expect(try PostgresFixture.psql(fixture.database, """
            SELECT count(*) FROM trellis_history WHERE version > (SELECT min(version) + 29 FROM trellis_history)
            """) == "10")
        await device.close()
    }

    /// A trigger of someone else's writes a second dog for each dog inserted: during an
    /// upload, that row is written inside a trigger, not by the upload's statement, so the
    /// history trigger records it and another device receives it.
    @Test func rowWrittenByAnotherTriggerDuringAnUploadReachesOtherDevices() async throws {
        let fixture = try SyncFixture()
        try PostgresFixture.psql(fixture.database, #"""
            CREATE FUNCTION copy_dog() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              INSERT INTO "SyncDog" (_id, doc) VALUES (substr(md5(NEW._id), 1, 24), jsonb_build_object(
                '_id', jsonb_build_object('$oid', substr(md5(NEW._id), 1, 24)),
                'name', 'copy of ' || (NEW.doc ->> 'name'), 'age', 0));
              RETURN NULL;
            END $$;
            CREATE TRIGGER copy_dog AFTER INSERT ON "SyncDog" FOR EACH ROW
            WHEN (NEW.doc ->> 'name' NOT LIKE 'copy of %') EXECUTE FUNCTION copy_dog();
            """#)
        let writer = try await Device(server: fixture.server)
        let reader = try await Device(server: fixture.server)
        try await reader.sync()
        try writer.write { realm in realm.add(SyncDog(value: ["name": "Rex", "age": 3])) }
        try await writer.sync()
        let deadline = ContinuousClock.now + .seconds(30)
        repeat { try await reader.sync() } while try Self.dogNames(reader).count < 2 && ContinuousClock.now < deadline
        #expect(try Self.dogNames(reader) == ["Rex", "copy of Rex"])
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM trellis_history") == "2")
        await writer.close()
        await reader.close()
    }

    /// A database whose history trigger an earlier server made (no condition: it records every
    /// row) gets the trigger replaced when a server starts, so an upload's entries, written by
    /// its statements, are not recorded twice.
    @Test func historyTriggerOfAnEarlierServerIsReplacedSoEntriesAreWrittenOnce() async throws {
        let fixture = try SyncFixture()
        fixture.server.kill(SIGKILL)
        try PostgresFixture.psql(fixture.database, """
            DROP TRIGGER trellis_history ON "SyncDog";
            CREATE TRIGGER trellis_history AFTER INSERT OR UPDATE OR DELETE ON "SyncDog"
            FOR EACH ROW EXECUTE FUNCTION trellis_record_change('_id');
            """)
        let server = try ServerProcess(database: fixture.database, schema: fixture.schema)
        let definition = try PostgresFixture.psql(fixture.database, """
            SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = '"SyncDog"'::regclass AND tgname = 'trellis_history'
            """)
        #expect(definition.contains("trellis.writes_history"))
        let device = try await Device(server: server)
        let id = ObjectId.generate()
        try device.write { realm in realm.add(SyncDog(value: ["_id": id, "name": "once", "age": 1])) }
        try await device.sync()
        #expect(try PostgresFixture.psql(fixture.database, """
            SELECT count(*) FROM trellis_history WHERE pk = '{"$oid": "\(id.stringValue)"}'::jsonb
            """) == "1")
        await device.close()
    }
}

import Foundation
import Logging
import Synchronization
import Testing
import Trellis
import TrellisSync
import TrellisSyncProtocol
import WSClient

/// One bad document does not stop sync for everyone (issue 36 item 3): the server checks
/// uploads completely against the schema, and a row written with SQL that does not fit is
/// logged and not sent, while every other document syncs.
@Suite(.serialized)
struct BadDocumentTests {
    /// The error frames the server answers one raw upload with.
    private func uploadErrors(_ server: ServerProcess, _ changes: [SyncObjectChange]) async throws
        -> [SyncMessage.ErrorMessage]
    {
        RawSyncClient.errors(try await RawSyncClient.upload(server, changes))
    }

    private func stamp() -> String {
        HybridTimestamp(milliseconds: HybridTimestamp.milliseconds(of: Date()), counter: 0, clientId: "raw").description
    }

    @Test func mapValuesNestedValuesAndRangesAreCheckedOnUpload() async throws {
        let fixture = try SyncFixture()
        let key = JSONValue.object(["$oid": .string(ObjectId.generate().stringValue)])
        let bad: [(FieldChange, String)] = [
            (.map(name: "scores", values: ["k": .string("high")]), "'SyncTask.scores.{}' is long"),
            (.set(name: "scores", value: .object(["k": .bool(true)])), "'SyncTask.scores.{}' is long"),
            (.list(name: "steps", base: [], value: [.string("ok"), .int(3)]), "'SyncTask.steps.[]' is string"),
            (.set(name: "priority", value: .object(["$numberLong": .string("12x")])), "'SyncTask.priority' is long"),
        ]
        for (field, message) in bad {
            let errors = try await uploadErrors(fixture.server, [
                SyncObjectChange(className: "SyncTask", primaryKey: key, kind: .insert, timestamp: stamp(),
                                 fields: [.set(name: "_id", value: key), field]),
            ])
            #expect(errors.map(\.code) == [SyncErrorCode.writeNotAllowed.rawValue], "\(field)")
            #expect(errors.first?.message.contains(message) == true, "\(errors.first?.message ?? "none")")
        }
        let person = JSONValue.object(["$oid": .string(ObjectId.generate().stringValue)])
        let errors = try await uploadErrors(fixture.server, [
            SyncObjectChange(className: "SyncPerson", primaryKey: person, kind: .insert, timestamp: stamp(),
                             fields: [.set(name: "_id", value: person),
                                      .set(name: "address", value: .object(["city": .int(5)]))]),
        ])
        #expect(errors.first?.message.contains("'SyncPerson.address.city' is string") == true)
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncTask\"") == "0")
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncPerson\"") == "0")
    }

    @Test func rowWrittenWithSQLThatDoesNotFitIsLoggedAndSkippedWhileTheRestSyncs() async throws {
        let fixture = try SyncFixture()
        try seedDogsAndPeople(fixture.database, count: 10)
        let badId = "ffffffffffffffffffffffff"
        try PostgresFixture.psql(fixture.database, """
            INSERT INTO "SyncDog" (_id, doc) VALUES ('\(badId)',
              jsonb_build_object('_id', jsonb_build_object('$oid', '\(badId)'), 'name', 'Old', 'age', 'old'))
            """)
        // A new client bootstraps every good document.
        let device = try await Device(server: fixture.server)
        try await device.sync()
        #expect(try device.run { $0.objects(SyncDog.self).count } == 5)
        // Live changes keep flowing past a bad update of an existing row.
        try PostgresFixture.psql(fixture.database, """
            UPDATE "SyncDog" SET doc = jsonb_set(doc, '{age}', '"older"') WHERE _id = '000000000000000000000001';
            UPDATE "SyncDog" SET doc = jsonb_set(doc, '{name}', '"renamed"') WHERE _id = '000000000000000000000002';
            """)
        try await device.sync()
        #expect(try device.run { realm in
            realm.object(ofType: SyncDog.self, forPrimaryKey: try ObjectId(string: "000000000000000000000002"))?.name
        } == "renamed")
        try device.write { realm in realm.add(SyncDog(value: ["name": "new"])) }
        try await device.sync()
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncDog\"") == "7")
        let log = fixture.server.log
        #expect(log.contains("bad row in collection 'SyncDog' _id {\"$oid\":\"\(badId)\"}"))
        #expect(log.contains("bad row in collection 'SyncDog' _id {\"$oid\":\"000000000000000000000001\"}"))
        await device.close()
    }
}

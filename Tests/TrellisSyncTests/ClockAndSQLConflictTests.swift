import Foundation
import Logging
import Synchronization
import Testing
import Trellis
@testable import TrellisSync
import TrellisSyncProtocol
import WSClient

/// Edits are decided by hybrid logical clocks whatever the devices' wall clocks say (issue 36
/// item 5), and changes made with SQL take part in the conflict rules like a client's (item 9).
@Suite(.serialized)
struct ClockAndSQLConflictTests {
    private func title(_ device: Device, _ id: ObjectId) throws -> String? {
        try device.run { $0.object(ofType: SyncTask.self, forPrimaryKey: id)?.title }
    }

    @Test func editMadeAfterSeeingAnotherDevicesEditWinsWithTheClockAnHourBehind() async throws {
        let fixture = try SyncFixture()
        let a = try await Device(server: fixture.server)
        let b = try await Device(server: fixture.server)
        b.app.setWallClock { Date().addingTimeInterval(-3600) }
        let id = ObjectId.generate()
        try a.write { realm in realm.add(SyncTask(value: ["_id": id, "owner": "me", "title": "from A"])) }
        try await a.sync()
        try await b.sync()
        #expect(try title(b, id) == "from A")
        try b.write { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: id)?.title = "from B, after A" }
        try await b.sync()
        try await a.sync()
        #expect(try title(a, id) == "from B, after A")
        #expect(try title(b, id) == "from B, after A")
        #expect(try PostgresFixture.psql(fixture.database, "SELECT doc->>'title' FROM \"SyncTask\"") == "from B, after A")
        await a.close()
        await b.close()
    }

    @Test func timestampThatIsNotAClockIsRefusedAndOneFarAheadIsClamped() async throws {
        let fixture = try SyncFixture()
        let id = ObjectId.generate().stringValue
        let key = JSONValue.object(["$oid": .string(id)])
        let refused = try await RawSyncClient.upload(fixture.server, [
            SyncObjectChange(className: "SyncTask", primaryKey: key, kind: .insert, timestamp: "~~~~",
                             fields: [.set(name: "title", value: .string("forever"))]),
        ])
        let errors = RawSyncClient.errors(refused)
        #expect(errors.map(\.code) == [SyncErrorCode.writeNotAllowed.rawValue])
        #expect(errors.first?.message.contains("not a hybrid logical clock timestamp") == true)
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncTask\"") == "0")

        // A device whose clock is a day ahead: its edit is set to the server's clock, so a later
        // edit made by a device with a right clock wins.
        let dayAhead = HybridTimestamp(milliseconds: HybridTimestamp.milliseconds(of: Date()) + 86_400_000,
                                       counter: 0, clientId: "raw-client").description
        _ = try await RawSyncClient.upload(fixture.server, [
            SyncObjectChange(className: "SyncTask", primaryKey: key, kind: .insert, timestamp: dayAhead,
                             fields: [.set(name: "_id", value: key), .set(name: "owner", value: .string("me")),
                                      .set(name: "title", value: .string("from the future"))]),
        ])
        let stored = try PostgresFixture.psql(fixture.database, "SELECT _meta->>'title' FROM \"SyncTask\"")
        #expect(stored < HybridTimestamp(milliseconds: HybridTimestamp.milliseconds(of: Date()) + 1000, counter: 0,
                                         clientId: "").description)
        try await Task.sleep(for: .milliseconds(20))
        let device = try await Device(server: fixture.server)
        try await device.sync()
        let objectId = try ObjectId(string: id)
        #expect(try title(device, objectId) == "from the future")
        try device.write { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: objectId)?.title = "now" }
        try await device.sync()
        #expect(try PostgresFixture.psql(fixture.database, "SELECT doc->>'title' FROM \"SyncTask\"") == "now")
        #expect(fixture.server.log.contains("ahead of the server's clock"))
        await device.close()
    }

    @Test func sqlUpdateWinsOverAnOlderOfflineEdit() async throws {
        let fixture = try SyncFixture()
        let device = try await Device(server: fixture.server)
        let id = ObjectId.generate()
        try device.write { realm in realm.add(SyncTask(value: ["_id": id, "owner": "me", "title": "start", "priority": 1])) }
        try await device.sync()
        try device.session.suspend()
        try device.write { realm in
            let task = realm.object(ofType: SyncTask.self, forPrimaryKey: id)
            task?.title = "offline, before the SQL update"
            task?.priority = 2
        }
        try await Task.sleep(for: .milliseconds(20))
        try PostgresFixture.psql(fixture.database, """
            UPDATE "SyncTask" SET doc = jsonb_set(doc, '{title}', '"from SQL"')
            """)
        #expect(try PostgresFixture.psql(fixture.database, "SELECT _meta->>'title' FROM \"SyncTask\"").hasSuffix("-sql"))
        try device.session.resume()
        try await device.sync()
        try await device.sync()
        // The SQL update is later than the offline edit of the title; the priority it did not touch is the device's.
        #expect(try PostgresFixture.psql(fixture.database, "SELECT doc->>'title' FROM \"SyncTask\"") == "from SQL")
        #expect(try PostgresFixture.psql(fixture.database, "SELECT doc->'priority'->>'$numberLong' FROM \"SyncTask\"") == "2")
        #expect(try title(device, id) == "from SQL")
        await device.close()
    }

    @Test func sqlDeleteLeavesATombstoneThatAnOlderInsertDoesNotUndo() async throws {
        let fixture = try SyncFixture()
        let a = try await Device(server: fixture.server)
        let b = try await Device(server: fixture.server)
        try await a.sync()
        try a.session.suspend()
        let id = ObjectId.generate()
        // A inserts the object offline; B inserts the same primary key and syncs; SQL deletes it.
        try a.write { realm in realm.add(SyncTask(value: ["_id": id, "owner": "me", "title": "A, offline"])) }
        try await Task.sleep(for: .milliseconds(20))
        try b.write { realm in realm.add(SyncTask(value: ["_id": id, "owner": "me", "title": "B"])) }
        try await b.sync()
        try await Task.sleep(for: .milliseconds(20))
        try PostgresFixture.psql(fixture.database, "DELETE FROM \"SyncTask\"")
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM trellis_tombstones") == "1")
        try a.session.resume()
        try await a.sync()
        try await b.sync()
        try await a.sync()
        // A's insert is older than the SQL delete: the object stays deleted everywhere.
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncTask\"") == "0")
        #expect(try title(a, id) == nil)
        #expect(try title(b, id) == nil)
        await a.close()
        await b.close()
    }
}

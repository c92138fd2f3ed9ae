import Foundation
import Testing
import Trellis
import TrellisSync

/// History and tombstone pruning with a retention window (issue 39, docs/SYNC.md "History
/// pruning"): superseded entries, deletes and tombstones older than `--history-retention` go,
/// the newest entry of each live object stays, and a device that last synced before the window
/// is reset (error 222), recovers its offline edit and converges.
@Suite(.serialized)
struct HistoryPruningTests {
    static func value(_ database: String, _ sql: String) throws -> Int64 {
        Int64(try PostgresFixture.psql(database, sql)) ?? -1
    }

    @Test func aDeviceBehindTheRetentionWindowIsResetAndConverges() async throws {
        let fixture = try SyncFixture(serverArguments: ["--history-retention", "2"])
        let database = fixture.database
        let device = try await Device(server: fixture.server, subscriptions: ClientResetTests.dogSubscription)
        let other = try await Device(server: fixture.server, subscriptions: ClientResetTests.dogSubscription)
        let kept = ObjectId.generate(), doomed = ObjectId.generate()
        try device.write { realm in
            realm.add(SyncDog(value: ["_id": kept, "name": "kept", "age": 1]))
            realm.add(SyncDog(value: ["_id": doomed, "name": "doomed", "age": 2]))
        }
        try await device.sync(timeout: .seconds(60))
        try await other.sync(timeout: .seconds(60))
        // The device goes offline with an edit; the other one edits `kept` three times,
        // deletes `doomed` and adds a dog.
        try device.session.suspend()
        try device.write { $0.add(SyncDog(value: ["name": "offline edit", "age": 3])) }
        for age in 10..<13 {
            try other.write { $0.object(ofType: SyncDog.self, forPrimaryKey: kept)?.age = age }
            try await other.sync(timeout: .seconds(60))
        }
        try other.write { realm in
            if let dog = realm.object(ofType: SyncDog.self, forPrimaryKey: doomed) { realm.delete(dog) }
            realm.add(SyncDog(value: ["name": "new", "age": 4]))
        }
        try await other.sync(timeout: .seconds(60))
        let newest = try Self.value(database, "SELECT max(version) FROM trellis_history")

        // Once the window has passed, the floor covers every entry so far; of `kept` only its
        // newest entry is left, of `doomed` nothing, and its tombstone is gone.
        let pruned = try await eventually(.seconds(30)) {
            try Self.value(database, "SELECT history_floor FROM trellis_server_identity") >= newest
                && Self.value(database, "SELECT count(*) FROM trellis_tombstones") == 0
        }
        #expect(pruned, "not pruned: \(fixture.server.log.suffix(2_000))")
        #expect(try Self.value(database, """
            SELECT count(*) FROM trellis_history WHERE pk = '{"$oid": "\(kept.stringValue)"}'::jsonb
            """) == 1)
        #expect(try Self.value(database, """
            SELECT count(*) FROM trellis_history WHERE pk = '{"$oid": "\(doomed.stringValue)"}'::jsonb
            """) == 0)
        // The delete's tombstone was made and pruned (the window may have passed before it
        // could be seen here on a loaded machine, so the server's log counts it).
        let prunedTombstones = fixture.server.log.split(separator: "\n").filter { $0.contains("pruned the history") }
            .compactMap { line in line.split(separator: " ").firstIndex(of: "tombstones").map { line.split(separator: " ")[$0 - 1] } }
            .compactMap { Int($0) }.reduce(0, +)
        #expect(prunedTombstones >= 1, "\(fixture.server.log.suffix(2_000))")

        // The device comes back: reset (it synced before the floor), recovers its edit, converges.
        try device.session.resume()
        let converged = try await eventually(.seconds(90)) {
            let dogs = try ClientResetTests.deviceDogs(device)
            return dogs == (try ClientResetTests.serverDogs(database)) && dogs.count == 3
        }
        #expect(converged)
        let names = try device.run { realm in Set(realm.objects(SyncDog.self).map { "\($0.name) \($0.age)" }) }
        #expect(names == ["kept 12", "new 4", "offline edit 3"])
        #expect(fixture.server.log.contains("error 222"))
        // The other device, connected all along, goes on without a reset.
        try other.write { $0.add(SyncDog(value: ["name": "after", "age": 5])) }
        try await other.sync(timeout: .seconds(60))
        #expect(try await eventually(.seconds(30)) { try device.run { $0.objects(SyncDog.self).count } == 4 })
        await device.close()
        await other.close()
    }
}

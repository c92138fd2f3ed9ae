import Foundation
import Testing
import Trellis
import TrellisSync

/// Two clients, a real server process and a real PostgreSQL: offline edits converge, and the
/// server's tables hold the documents in the Device Sync mapping.
@Suite(.serialized)
struct EndToEndTests {
    @Test func twoClientsConvergeAfterOfflineEdits() async throws {
        let fixture = try SyncFixture()
        let a = try await Device(server: fixture.server)
        let b = try await Device(server: fixture.server)
        let rexId = ObjectId.generate()
        try a.write { realm in
            let rex = SyncDog(value: ["_id": rexId, "name": "Rex", "age": 3])
            let ana = SyncPerson(value: ["name": "Ana", "dog": rex, "dogs": [rex]])
            ana.address = SyncAddress(value: ["city": "Oslo"])
            realm.add(ana)
        }
        try await a.sync()
        try await b.sync()
        #expect(try b.run { $0.objects(SyncPerson.self).first?.dogs.first?.name } == "Rex")
        #expect(try b.run { $0.objects(SyncPerson.self).first?.address?.city } == "Oslo")
        #expect(try b.run { $0.object(ofType: SyncDog.self, forPrimaryKey: rexId)?.owners.count } == 1)

        // Both offline: A renames the dog, B adds a second dog to Ana.
        try a.session.suspend()
        try b.session.suspend()
        try a.write { realm in realm.object(ofType: SyncDog.self, forPrimaryKey: rexId)?.name = "Max" }
        try b.write { realm in
            let ana = realm.objects(SyncPerson.self).first
            ana?.dogs.append(SyncDog(value: ["name": "Bo", "age": 1]))
        }
        #expect(try a.session.connectionState == .disconnected)
        try a.session.resume()
        try b.session.resume()
        try await a.sync()
        try await b.sync()
        try await a.sync()
        let left = try a.run(snapshot)
        let right = try b.run(snapshot)
        #expect(left == right)
        #expect(left.count == 3)
        #expect(try a.run { $0.objects(SyncPerson.self).first?.dogs.map(\.name) } == ["Max", "Bo"])

        // The server's table holds the document in the seed's mapping: links as primary keys.
        let row = try PostgresFixture.psql(fixture.database,
                                           "SELECT doc->'dog'->>'$oid' FROM \"SyncPerson\"")
        #expect(row == rexId.stringValue)
        let count = try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncDog\"")
        #expect(count == "2")
        await a.close()
        await b.close()
    }

    /// As in Realm: `Realm.asyncOpen` of a synced configuration hands the Realm over once
    /// everything the subscriptions select is downloaded.
    @Test func asyncOpenOfASyncedRealmDownloadsBeforeHandingItOver() async throws {
        let fixture = try SyncFixture()
        try seedDogsAndPeople(fixture.database, count: 1_000)
        let device = try await Device(server: fixture.server)
        let queue = DispatchQueue(label: "async-open")
        let configuration = device.configuration
        let counts = try await withTimeout(.seconds(60)) {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Int], Error>) in
                Realm.asyncOpen(configuration: configuration, callbackQueue: queue) { result in
                    continuation.resume(with: result.map {
                        [$0.objects(SyncDog.self).count, $0.objects(SyncPerson.self).count]
                    })
                }
            }
        }
        #expect(counts == [500, 500])
        await device.close()
    }

    /// Opens a synced Realm for itself with Realm's `downloadBeforeOpen`.
    actor Opener {
        func counts(_ configuration: Realm.Configuration, _ behavior: Realm.OpenBehavior) async throws -> [Int] {
            let realm = try await Realm(configuration: configuration, actor: self, downloadBeforeOpen: behavior)
            return [realm.objects(SyncDog.self).count, realm.objects(SyncPerson.self).count]
        }
    }

    /// As in Realm: `downloadBeforeOpen: .always` returns the Realm once the server's data is
    /// in it; `.once` downloads first only when the file is new.
    @Test func openingWithDownloadBeforeOpenReturnsTheServersData() async throws {
        let fixture = try SyncFixture()
        try seedDogsAndPeople(fixture.database, count: 1_000)
        let device = try await Device(server: fixture.server)
        let configuration = device.configuration
        let opener = Opener()
        let counts = try await withTimeout(.seconds(60)) { try await opener.counts(configuration, .always) }
        #expect(counts == [500, 500])
        let other = try await Device(server: fixture.server)
        let onFirstLaunch = try await withTimeout(.seconds(60)) { try await Opener().counts(other.configuration, .once) }
        #expect(onFirstLaunch == [500, 500])
        await device.close()
        await other.close()
    }
}

import Foundation
import Testing
import Trellis
@testable import TrellisSync

/// Session 26 (issue 39): a session sends up to `SyncEngine.maxUploadsInFlight` uploads before
/// the first is acknowledged. The server applies a connection's uploads one at a time in order,
/// so nothing arrives out of order; ServerCrashTests kill the server with two uploads in flight.
@Suite(.serialized)
struct UploadPipeliningTests {
    static let commits = 25
    static let dogsPerCommit = 100

    /// 25 offline commits, each adding 100 dogs, appending the first of them to one person's
    /// list and renaming one counter dog (2,551 changes: six uploads of at most 500): the session
    /// has four uploads in flight at once, and the server ends with every dog, the list in the
    /// order of the appends (a list change merged out of order would put its dog elsewhere) and
    /// the counter's last name; a second device downloads the same objects.
    @Test func severalUploadsAreInFlightAndArriveWholeAndInOrder() async throws {
        let fixture = try SyncFixture()
        let a = try await Device(server: fixture.server)
        let counterId = ObjectId.generate()
        try a.write { realm in
            realm.add(SyncDog(value: ["_id": counterId, "name": "v0", "age": 0]))
            realm.add(SyncPerson(value: ["name": "owner"]))
        }
        try await a.sync()
        let session = try a.session
        session.suspend()
        var appended = [String]()
        for commit in 1...Self.commits {
            try a.write { realm in
                for index in 0..<Self.dogsPerCommit {
                    let dog = SyncDog(value: ["name": "dog \(commit).\(index)", "age": index % 20])
                    realm.add(dog)
                    if index == 0 {
                        realm.objects(SyncPerson.self).first?.dogs.append(dog)
                        appended.append(dog._id.stringValue)
                    }
                }
                let counter = realm.object(ofType: SyncDog.self, forPrimaryKey: counterId)
                counter?.name = "v\(commit)"
                counter?.age = commit
            }
        }
        session.resume()
        try await a.sync(timeout: .seconds(120))

        let most = session.engine.state.withLock { $0.mostUploadsInFlight }
        #expect(most > 1 && most == SyncEngine.maxUploadsInFlight, "at most \(most) upload(s) were in flight at once")
        let dogs = Self.commits * Self.dogsPerCommit + 1
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncDog\"") == "\(dogs)")
        let counter = try PostgresFixture.psql(fixture.database, """
            SELECT (doc ->> 'name') || ' ' || (doc -> 'age' ->> '$numberLong') FROM "SyncDog"
            WHERE doc -> '_id' ->> '$oid' = '\(counterId.stringValue)'
            """)
        #expect(counter == "v\(Self.commits) \(Self.commits)")
        let list = try PostgresFixture.psql(fixture.database,
            "SELECT e ->> '$oid' FROM \"SyncPerson\", jsonb_array_elements(doc -> 'dogs') WITH ORDINALITY AS t(e, n) ORDER BY n")
        let inOrder = list.split(separator: "\n").map(String.init) == appended
        #expect(inOrder, "the server's list differs from the appends: \(list.split(separator: "\n").count) elements")
        #expect(try a.run { $0.objects(SyncDog.self).count } == dogs)

        let b = try await Device(server: fixture.server)
        try await b.sync(timeout: .seconds(120))
        let left = try a.run(snapshot)
        let right = try b.run(snapshot)
        #expect(left == right, "the second device's objects differ from the writer's")
        await a.close()
        await b.close()
    }
}

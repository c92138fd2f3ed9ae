import Foundation
import Testing
import Trellis
import TrellisSync
import TrellisSyncProtocol

/// How a change reaches the other clients (docs/SYNC.md, "Change notification"): the round
/// trips to PostgreSQL on its way (on a busy machine each one waits for two processes to be
/// scheduled, so their number, not the work in them, sets the latency), and the notification
/// that wakes the sessions without the fallback poll.
@Suite(.serialized)
struct ChangeNotificationTests {
    /// Each statement the server sends to PostgreSQL is seen by a proxy; the fallback poll is
    /// off, so nothing else runs meanwhile.
    @Test func aOneObjectUploadIsCommittedInSixRoundTripsToPostgreSQL() async throws {
        let trips = try PostgresRoundTrips(postgres: PostgresFixture.url)
        defer { trips.stop() }
        let database = try PostgresFixture.makeDatabase()
        let server = try ServerProcess(database: try trips.url(of: database), schema: try makeSchemaFile(),
                                       arguments: ["--history-poll-interval", "86400000"])
        let user = try await testApp(server.baseURL).login(credentials: .anonymous)
        let hello = RawSyncClient.hello(token: user.accessToken ?? "")
        let perUpload = try await RawSyncClient.connect(port: server.port, timeout: .seconds(60)) { channel in
            try await channel.send(hello)
            // The session is set up once its first mark is answered.
            try await channel.send(.mark(.init(id: 1)))
            _ = try await channel.collect { if case .mark = $0 { true } else { false } }
            var perUpload = [[String]]()
            for uploadId in Int64(1)...3 {
                let before = trips.statements.count
                let key = JSONValue.object(["$oid": .string(ObjectId.generate().stringValue)])
                try await channel.send(.upload(.init(uploadId: uploadId, changes: [
                    SyncObjectChange(className: "SyncDog", primaryKey: key, kind: .insert,
                                     timestamp: String(format: "%016d-00000-raw", uploadId),
                                     fields: [.set(name: "_id", value: key), .set(name: "name", value: .string("Rex"))]),
                ])))
                _ = try await channel.collect { if case .ack = $0 { true } else { false } }
                let statements = Array(trips.statements[before...])
                let commit = statements.firstIndex { $0.uppercased().hasPrefix("COMMIT") } ?? statements.count
                perUpload.append(Array(statements[...min(commit, statements.count - 1)]))
            }
            try await channel.close()
            return perUpload
        }
        #expect(try PostgresFixture.psql(database, "SELECT count(*) FROM \"SyncDog\"") == "3")
        // Read (objects, tombstones and the client's last upload in one statement), BEGIN,
        // trellis_begin_upload, the objects' check, the insert, COMMIT. Before: 12 (the last
        // upload, objects and tombstones read apart, set_config, locks and the client's row
        // apart, two checks, the client's row written apart). The fewest of three uploads: a
        // keep-alive of the connection pool may fall into one.
        let fewest = try #require(perUpload.min { $0.count < $1.count })
        #expect(fewest.count <= 6, "round trips until COMMIT:\n\(fewest.joined(separator: "\n---\n"))")
    }

    /// With the fallback poll at a day, only PostgreSQL's notification can tell the server that
    /// the history grew: the other device still gets the change (it asks for nothing itself).
    @Test func aChangeReachesAnotherDeviceByNotificationWithThePollOff() async throws {
        let fixture = try SyncFixture(serverArguments: ["--history-poll-interval", "86400000"])
        let a = try await Device(server: fixture.server)
        let b = try await Device(server: fixture.server)
        try await a.sync()
        try await b.sync()
        try a.write { $0.add(SyncDog(value: ["name": "Rex", "age": 3])) }
        try await a.sync()
        let arrived = try await eventually(.seconds(20)) { try b.run { $0.objects(SyncDog.self).count } == 1 }
        #expect(arrived, "the change did not reach the other device without the poll")
        await a.close()
        await b.close()
    }
}

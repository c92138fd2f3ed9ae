import Foundation
import Testing
import Trellis
import TrellisSync

/// A server killed with SIGKILL in the middle of an upload, then started again: nothing is lost
/// and nothing is applied twice. The client queues 601 changes (300 commits, each inserting a
/// dog and appending it to one person's list), sent as two uploads (500 + 101); a list append
/// applied twice would show as a duplicate in the list, an insert applied twice as a second
/// history entry.
@Suite(.serialized)
struct ServerCrashTests {
    static let commits = 300

    /// The writes, made while the session is suspended so the uploads are always the same.
    private func queueChanges(on device: Device) throws -> [String] {
        let session = try device.session
        session.suspend()
        var ids = [String]()
        try device.write { realm in realm.add(SyncPerson(value: ["name": "owner"])) }
        for index in 0..<Self.commits {
            try device.write { realm in
                guard let owner = realm.objects(SyncPerson.self).first else { return }
                let dog = SyncDog(value: ["name": "dog \(index)", "age": index % 15])
                realm.add(dog)
                owner.dogs.append(dog)
                ids.append(dog._id.stringValue)
            }
        }
        return ids
    }

    /// Starts a server that stops at `serverArguments`' crash point (or is killed from outside by
    /// `kill`), restarts it, and checks the outcome in PostgreSQL and on the client.
    private func crashAndRecover(serverArguments: [String],
                                 kill: ((ServerProcess, String) async throws -> Void)? = nil) async throws {
        let database = try PostgresFixture.makeDatabase()
        let schema = try makeSchemaFile()
        var server = try ServerProcess(database: database, schema: schema, arguments: serverArguments)
        let port = server.port
        let device = try await Device(server: server)
        try await device.sync()
        let ids = try queueChanges(on: device)
        try device.session.resume()
        if let kill {
            try await kill(server, database)
        } else {
            // The crash point: the server kills itself.
            let died = try await eventually(.seconds(60)) { server.hasExited }
            #expect(died, "the server did not reach its crash point: \(server.log)")
        }
        #expect(server.hasExited)
        server = try ServerProcess(database: database, schema: schema, port: port)
        try await device.sync(timeout: .seconds(90))

        #expect(try PostgresFixture.psql(database, "SELECT count(*) FROM \"SyncDog\"") == "\(ids.count)")
        // Each insert applied once: one history entry per dog.
        #expect(try PostgresFixture.psql(database,
            "SELECT count(*) FROM trellis_history WHERE collection = 'SyncDog'") == "\(ids.count)")
        // The person was written once per upload (two uploads): a retried upload applied again
        // would add a third entry.
        #expect(try PostgresFixture.psql(database,
            "SELECT count(*) FROM trellis_history WHERE collection = 'SyncPerson'") == "2")
        // The list holds every append once, in order.
        let stored = try PostgresFixture.psql(database,
            "SELECT e ->> '$oid' FROM \"SyncPerson\", jsonb_array_elements(doc -> 'dogs') WITH ORDINALITY AS t(e, n) ORDER BY n")
        let list = stored.split(separator: "\n").map(String.init)
        #expect(list.count == ids.count && Set(list).count == list.count, "\(list.count) elements, \(Set(list).count) distinct")
        let sameOrder = list == ids
        #expect(sameOrder, "the list's order differs from the appends'")
        let local = try device.run { realm in
            Array(realm.objects(SyncPerson.self).first?.dogs.map(\._id.stringValue) ?? [])
        }
        let localMatches = local == ids
        #expect(localMatches, "the client's list (\(local.count) elements) differs from the appends")
        await device.close()
        _ = server
    }

    @Test func serverKilledBeforeAnUploadCommitsLosesNothing() async throws {
        try await crashAndRecover(serverArguments: ["--kill-before-upload-commit", "2"])
    }

    @Test func serverKilledAfterAnUploadCommitsBeforeItsAckAppliesTheRetryOnce() async throws {
        try await crashAndRecover(serverArguments: ["--kill-after-upload-commit", "2"])
    }

    /// SIGKILL from outside while PostgreSQL shows the server's upload transaction open with
    /// rows written (`backend_xid` set).
    @Test func serverKilledFromOutsideDuringAnUploadLosesNothingAndAppliesNothingTwice() async throws {
        try await crashAndRecover(serverArguments: []) { server, database in
            let sql = """
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL
                """
            let caught = try await eventually(.seconds(60), interval: .milliseconds(1)) {
                (try? PostgresFixture.psql(database, sql)) == "1"
            }
            #expect(caught, "no upload transaction seen open")
            server.kill(SIGKILL)
        }
    }
}

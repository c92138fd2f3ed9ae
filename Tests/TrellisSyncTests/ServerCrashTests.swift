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
    private func crashAndRecover(serverArguments: [String], beforeResume: ((String) throws -> Void)? = nil,
                                 kill: ((ServerProcess, String) async throws -> Void)? = nil) async throws {
        let database = try PostgresFixture.makeDatabase()
        let schema = try makeSchemaFile()
        var server = try ServerProcess(database: database, schema: schema, arguments: serverArguments)
        let port = server.port
        let device = try await Device(server: server)
        try await device.sync()
        let ids = try queueChanges(on: device)
        try beforeResume?(database)
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

    /// SIGKILL from outside in the middle of an upload. To be sure of the moment, another
    /// session holds the history lock (the advisory lock the deferred history trigger takes when
    /// a transaction commits): the upload's transaction writes its rows and the client's last
    /// upload, then waits for that lock in its COMMIT. The server is killed while PostgreSQL
    /// shows it waiting there with its rows written, then the lock is let go.
    @Test func serverKilledFromOutsideDuringAnUploadLosesNothingAndAppliesNothingTwice() async throws {
        var locker: pid_t = 0
        try await crashAndRecover(serverArguments: [], beforeResume: { database in
            locker = try spawnBackground("/usr/bin/env", ["psql", database, "-c",
                "SELECT pg_advisory_lock(7217001); SELECT pg_sleep(120);"],
                stdout: "/dev/null", stderr: "/dev/null")
            let held = """
                SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 7217001 AND granted
                  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """
            var waited = 0
            while (try PostgresFixture.psql(database, held)) != "1", waited < 3_000 {
                usleep(10_000)
                waited += 1
            }
        }, kill: { server, database in
            let blocked = """
                SELECT count(*) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
                WHERE a.datname = current_database() AND a.wait_event_type = 'Lock' AND a.backend_xid IS NOT NULL
                  AND l.relation = '"SyncDog"'::regclass AND l.mode = 'RowExclusiveLock' AND l.granted
                """
            let caught = try await eventually(.seconds(60)) { (try? PostgresFixture.psql(database, blocked)) == "1" }
            #expect(caught, "no upload seen waiting with its rows written")
            server.kill(SIGKILL)
            try PostgresFixture.psql(database, """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND query LIKE '%pg_sleep(120)%' AND pid <> pg_backend_pid()
                """)
            while waitpid(locker, nil, 0) == -1 && errno == EINTR {}
        })
    }
}

import Foundation
import Synchronization
import Testing
import Trellis
import TrellisSync

/// Issue 36 item 6: client reset. The server's data is dropped and recreated (a new history
/// identity) while a device that had 100 objects is offline with unsynced changes; when it
/// comes back it must end equal to the server, keep syncing, and treat its unsynced changes
/// as its `ClientResetMode` says (Realm's recovery rules, or discarded, or manual).
@Suite(.serialized) struct ClientResetTests {
    /// Calls of the reset callbacks, with what the Realms held then.
    final class Callbacks: Sendable {
        let before = Mutex<[Set<String>]>([])
        let after = Mutex<[(before: Int, after: Set<String>)]>([])

        func mode(_ kind: String) -> ClientResetMode {
            let beforeReset: @Sendable (Realm) -> Void = { realm in
                self.before.withLock { $0.append(Set(realm.objects(SyncDog.self).map(\.name))) }
            }
            let afterReset: @Sendable (Realm, Realm) -> Void = { before, after in
                let names = Set(after.objects(SyncDog.self).map(\.name))
                self.after.withLock { $0.append((before.objects(SyncDog.self).count, names)) }
            }
            switch kind {
            case "discard": return .discardUnsyncedChanges(beforeReset: beforeReset, afterReset: afterReset)
            case "recoverOrDiscard":
                return .recoverOrDiscardUnsyncedChanges(beforeReset: beforeReset, afterReset: afterReset)
            default: return .recoverUnsyncedChanges(beforeReset: beforeReset, afterReset: afterReset)
            }
        }
    }

    /// The scenario, up to the device coming back.
    struct Scenario {
        let fixture: SyncFixture
        var server: ServerProcess
        let device: Device
        let other: Device
        /// The device's 100 dogs, by age (dog i is `ids[i]`, age i).
        let ids: [ObjectId]
    }

    static let dogSubscription: @Sendable (SyncSubscriptionSet) -> Void = { subs in
        subs.append(QuerySubscription<SyncDog>(name: "dogs"))
    }

    /// A device syncs 100 dogs and goes offline. Its offline changes: a new dog ("offline new"),
    /// dog 1's age (the new server will not have dog 1), dog 3 deleted and dog 4 renamed (the new
    /// server has both again, dog 4 with age 30). The server's data is dropped and recreated
    /// (new identity), dogs 3 and 4 are inserted with SQL, another device writes five dogs.
    /// With `encryptionKey` the device's file is encrypted (the TrellisStorage build).
    func prepare(mode: ClientResetMode, encryptionKey: Data? = nil) async throws -> Scenario {
        let fixture = try SyncFixture()
        let device = try await Device(server: fixture.server, clientResetMode: mode, subscriptions: Self.dogSubscription,
                                      encryptionKey: encryptionKey)
        try device.write { realm in
            for age in 0..<100 { realm.add(SyncDog(value: ["name": "dog \(age)", "age": age])) }
        }
        try await device.sync(timeout: .seconds(60))
        let ids = try device.run { realm in Array(realm.objects(SyncDog.self).sorted(byKeyPath: "age").map(\._id)) }
        #expect(ids.count == 100)
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncDog\"") == "100")

        try device.session.suspend()
        try device.write { realm in
            realm.add(SyncDog(value: ["name": "offline new", "age": 1000]))
            realm.object(ofType: SyncDog.self, forPrimaryKey: ids[1])?.age = 101
            if let dog = realm.object(ofType: SyncDog.self, forPrimaryKey: ids[3]) { realm.delete(dog) }
            realm.object(ofType: SyncDog.self, forPrimaryKey: ids[4])?.name = "renamed offline"
        }

        let port = fixture.server.port
        fixture.server.kill()
        // The data goes (collections, history, clients, identity); the signing keys stay, as
        // when a database is restored without its sync history, so users stay logged in.
        try PostgresFixture.psql(fixture.database, """
            DROP TABLE "SyncDog", "SyncPerson", "SyncTask", trellis_history, trellis_tombstones, trellis_clients,
              trellis_server_identity, trellis_schema CASCADE
            """)
        let server = try ServerProcess(database: fixture.database, schema: fixture.schema, port: port)
        for (index, age) in [(3, 3), (4, 30)] {
            let id = ids[index].stringValue
            try PostgresFixture.psql(fixture.database, """
                INSERT INTO "SyncDog" (_id, doc) VALUES ('\(id)',
                  '{"_id": {"$oid": "\(id)"}, "name": "dog \(index)", "age": {"$numberLong": "\(age)"}}')
                """)
        }
        let other = try await Device(server: server, subscriptions: Self.dogSubscription)
        try other.write { realm in
            for index in 0..<5 { realm.add(SyncDog(value: ["name": "new \(index)", "age": 200 + index])) }
        }
        try await other.sync()
        return Scenario(fixture: fixture, server: server, device: device, other: other, ids: ids)
    }

    /// `_id name age` of every dog on the server.
    static func serverDogs(_ database: String) throws -> Set<String> {
        let text = try PostgresFixture.psql(database, """
            SELECT _id || ' ' || (doc->>'name') || ' ' || coalesce(doc->'age'->>'$numberLong', doc->>'age')
            FROM "SyncDog"
            """)
        return Set(text.split(separator: "\n").map(String.init))
    }

    static func deviceDogs(_ device: Device) throws -> Set<String> {
        try device.run { realm in Set(realm.objects(SyncDog.self).map { "\($0._id.stringValue) \($0.name) \($0.age)" }) }
    }

    /// Waits until the device holds what the server holds; both sets.
    static func converge(_ scenario: Scenario) async throws -> (device: Set<String>, server: Set<String>) {
        _ = try await eventually(.seconds(60)) {
            try deviceDogs(scenario.device) == serverDogs(scenario.fixture.database)
                && !serverDogs(scenario.fixture.database).isEmpty
        }
        return (try deviceDogs(scenario.device), try serverDogs(scenario.fixture.database))
    }

    /// Sync works after the reset, both ways.
    static func expectSyncWorks(_ scenario: Scenario) async throws {
        try scenario.other.write { realm in realm.add(SyncDog(value: ["name": "after reset, other", "age": 500])) }
        try await scenario.other.sync()
        try scenario.device.write { realm in realm.add(SyncDog(value: ["name": "after reset, device", "age": 501])) }
        try await scenario.device.sync()
        #expect(try await eventually { try deviceDogs(scenario.device).contains { $0.hasSuffix("after reset, other 500") } })
        #expect(try serverDogs(scenario.fixture.database).contains { $0.hasSuffix("after reset, device 501") })
        #expect(try await eventually { try deviceDogs(scenario.device) == serverDogs(scenario.fixture.database) })
    }

    @Test(arguments: ["recover", "recoverOrDiscard"])
    func droppedServerDataResetsTheClientAndRecoversItsUnsyncedChanges(_ mode: String) async throws {
        let callbacks = Callbacks()
        let scenario = try await prepare(mode: callbacks.mode(mode))
        let ids = scenario.ids
        try scenario.device.session.resume()
        let (device, server) = try await Self.converge(scenario)
        try await scenario.device.sync()
        #expect(device == server)
        // Realm's recovery rules: the local insert is created; the update of dog 1, which the
        // server no longer has, is dropped; the local delete of dog 3 is applied; dog 4 takes
        // the local name and keeps the server's age.
        #expect(server.contains { $0.hasSuffix(" offline new 1000") })
        #expect(!server.contains { $0.hasPrefix(ids[1].stringValue) })
        #expect(!server.contains { $0.hasPrefix(ids[3].stringValue) })
        #expect(server.contains("\(ids[4].stringValue) renamed offline 30"))
        #expect(server.count == 7, "\(server.sorted())")
        #expect(!device.contains { $0.hasSuffix(" dog 50 50") }, "the 100 stale objects are gone")
        #expect(callbacks.before.withLock { $0.count } == 1)
        #expect(callbacks.before.withLock { $0.first?.count } == 100)
        #expect(callbacks.before.withLock { $0.first?.contains("offline new") } == true)
        #expect(callbacks.after.withLock { $0.map(\.before) } == [100])
        #expect(callbacks.after.withLock { $0.first?.after.contains("renamed offline") } == true)
        try await Self.expectSyncWorks(scenario)
        await scenario.other.close()
        await scenario.device.close()
    }

    @Test func droppedServerDataResetsTheClientAndDiscardsItsUnsyncedChanges() async throws {
        let callbacks = Callbacks()
        let scenario = try await prepare(mode: callbacks.mode("discard"))
        let ids = scenario.ids
        try scenario.device.session.resume()
        let (device, server) = try await Self.converge(scenario)
        try await scenario.device.sync()
        #expect(device == server)
        #expect(!server.contains { $0.contains("offline") })
        #expect(server.contains("\(ids[3].stringValue) dog 3 3"))
        #expect(server.contains("\(ids[4].stringValue) dog 4 30"))
        #expect(server.count == 7, "\(server.sorted())")
        #expect(callbacks.before.withLock { $0.first?.contains("offline new") } == true)
        #expect(callbacks.after.withLock { $0.first?.after.contains("offline new") } == false)
        try await Self.expectSyncWorks(scenario)
        await scenario.other.close()
        await scenario.device.close()
    }

    @Test func manualModeReportsTheResetAndImmediatelyHandleErrorBacksUpAndResets() async throws {
        let reported = Mutex<[SyncError]>([])
        let mode = ClientResetMode.manual(errorHandler: { error, _ in
            if let error = error as? SyncError { reported.withLock { $0.append(error) } }
        })
        let scenario = try await prepare(mode: mode)
        try scenario.device.session.resume()
        #expect(try await eventually(.seconds(30)) { reported.withLock { !$0.isEmpty } })
        let error = try reported.withLock { $0.first }.unwrapped("the reset error")
        #expect(error.code == .clientResetError)
        #expect(error.serverCode == 207)
        #expect(error.message.contains("the database was recreated"), "\(error.message)")
        // Nothing changed on the device: it waits for the app.
        #expect(try Self.deviceDogs(scenario.device).count == 100)
        #expect(try scenario.device.session.state == .inactive)
        let (backupPath, token) = try error.clientResetInfo().unwrapped("clientResetInfo")
        SyncSession.immediatelyHandleError(token, syncManager: scenario.device.app.syncManager)
        let (device, server) = try await Self.converge(scenario)
        #expect(device == server)
        #expect(!server.contains { $0.contains("offline") })
        // The backup holds the file as it was, unsynced changes included.
        var backup = Realm.Configuration()
        backup.fileURL = URL(fileURLWithPath: backupPath)
        backup.objectTypes = syncModelTypes
        let names = try Set(Realm(configuration: backup).objects(SyncDog.self).map(\.name))
        #expect(names.count == 100)
        #expect(names.contains("offline new"))
        try await Self.expectSyncWorks(scenario)
        await scenario.other.close()
        await scenario.device.close()
    }

    #if !TRELLIS_LMDB
    /// Issue 38: the backup of an encrypted Realm is encrypted with the file's key (as Realm's
    /// backup is the file itself), never a plain copy of it.
    @Test func manualResetOfAnEncryptedRealmBacksItUpWithItsKey() async throws {
        let key = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 23 &+ 4) })
        let reported = Mutex<[SyncError]>([])
        let mode = ClientResetMode.manual(errorHandler: { error, _ in
            if let error = error as? SyncError { reported.withLock { $0.append(error) } }
        })
        let scenario = try await prepare(mode: mode, encryptionKey: key)
        try scenario.device.session.resume()
        #expect(try await eventually(.seconds(30)) { reported.withLock { !$0.isEmpty } })
        let error = try reported.withLock { $0.first }.unwrapped("the reset error")
        let (backupPath, token) = try error.clientResetInfo().unwrapped("clientResetInfo")
        SyncSession.immediatelyHandleError(token, syncManager: scenario.device.app.syncManager)
        let (device, server) = try await Self.converge(scenario)
        #expect(device == server)

        var backup = Realm.Configuration()
        backup.fileURL = URL(fileURLWithPath: backupPath)
        backup.objectTypes = syncModelTypes
        #expect(throws: Realm.Error.self) { _ = try Realm(configuration: backup) }
        backup.encryptionKey = key
        let names = try Set(Realm(configuration: backup).objects(SyncDog.self).map(\.name))
        #expect(names.count == 100)
        #expect(names.contains("offline new"))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: backupPath))
        #expect(bytes.range(of: Data("offline new".utf8)) == nil && bytes.range(of: Data("SyncDog".utf8)) == nil)
        await scenario.other.close()
        await scenario.device.close()
    }
    #endif

    @Test func historyPrunedPastTheClientResetsItAndRecovers() async throws {
        let fixture = try SyncFixture()
        let device = try await Device(server: fixture.server, subscriptions: Self.dogSubscription)
        try device.write { realm in realm.add(SyncDog(value: ["name": "synced", "age": 1])) }
        try await device.sync()
        try device.session.suspend()
        try device.write { realm in realm.add(SyncDog(value: ["name": "unsynced", "age": 2])) }
        // What pruning (issue 39) does: history up to the floor is gone.
        let sqlId = ObjectId.generate().stringValue
        // Two transactions: the history entry of the insert is recorded when it commits.
        try PostgresFixture.psql(fixture.database, """
            INSERT INTO "SyncDog" (_id, doc) VALUES ('\(sqlId)', '{"_id": {"$oid": "\(sqlId)"}, "name": "by sql", "age": 3}')
            """)
        try PostgresFixture.psql(fixture.database,
                                 "UPDATE trellis_server_identity SET history_floor = (SELECT max(version) FROM trellis_history)")
        try device.session.resume()
        let scenario = Scenario(fixture: fixture, server: fixture.server, device: device, other: device, ids: [])
        let (dogs, server) = try await Self.converge(scenario)
        #expect(dogs == server)
        #expect(Set(server.map { $0.split(separator: " ").dropFirst().joined(separator: " ") })
            == ["synced 1", "unsynced 2", "by sql 3"])
        #expect(fixture.server.log.contains("error 222"))
        await device.close()
    }
}

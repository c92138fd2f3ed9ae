import Foundation
import Synchronization
import Testing
import Trellis
import TrellisSync
import TrellisSyncProtocol

/// A user's role follows their custom data and login metadata (`%%user.custom_data`,
/// `%%user.data`). Device Sync expands them when a session starts, keeps that role for the
/// session, and resets the client when they differ at the next start; here the server ends the
/// session as soon as the user's custom data changes what the rules give (error 228, Realm's
/// `server_permissions_changed`), and the next session removes from the device what the new
/// role may not read, then syncs on.
@Suite(.serialized)
struct RoleChangeTests {
    static let rules = #"""
        {"rules": [
          {"collection": "SyncTask", "roles": [
            {"name": "manager", "apply_when": {"%%user.custom_data.role": "manager"},
             "document_filters": {"read": true, "write": true}, "read": true, "write": true},
            {"name": "owner", "apply_when": {},
             "document_filters": {"read": {"owner": "%%user.id"}, "write": {"owner": "%%user.id"}},
             "read": true, "write": true}]},
          {"collection": "SyncDog", "roles": [{"name": "team", "apply_when": {},
            "document_filters": {"read": {"name": "%%user.data.team"}, "write": false}, "read": true}]},
          {"collection": "SyncUserProfile", "roles": [{"name": "nobody", "apply_when": {},
            "document_filters": {"read": false, "write": false}}]}],
         "custom_user_data": {"collection_name": "SyncUserProfile", "user_id_field": "user_id"},
         "metadata_fields": [{"name": "user_data.team", "field_name": "team"}]}
        """#

    static let types: [ObjectBase.Type] = [SyncTask.self, SyncDog.self, SyncPerson.self, SyncAddress.self]

    private func fixture() throws -> SyncFixture {
        let rulesFile = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString).json")
        try Self.rules.write(to: rulesFile, atomically: true, encoding: .utf8)
        return try SyncFixture(types: Self.types + [SyncUserProfile.self], serverArguments: ["--rules", rulesFile.path])
    }

    private func insertTask(_ database: String, owner: String, title: String) throws {
        let id = ObjectId.generate().stringValue
        try PostgresFixture.psql(database, """
            INSERT INTO "SyncTask" (_id, doc) VALUES ('\(id)', '{"_id": {"$oid": "\(id)"}, "owner": "\(owner)",
              "title": "\(title)", "priority": 0, "steps": [], "tags": [], "scores": {}}')
            """)
    }

    private func insertProfile(_ database: String, user: String, role: String) throws {
        let profile = ObjectId.generate().stringValue
        try PostgresFixture.psql(database, """
            INSERT INTO "SyncUserProfile" (_id, doc) VALUES ('\(profile)',
              '{"_id": {"$oid": "\(profile)"}, "user_id": "\(user)", "role": "\(role)"}')
            """)
    }

    /// `user`'s device (a Custom JWT login), subscribed to every task.
    private func taskDevice(_ fixture: SyncFixture, user: String) async throws -> Device {
        try await Device(server: fixture.server, credentials: .jwt(token: try await TestTokens.login(user)),
                         types: Self.types, subscriptions: { $0.append(QuerySubscription<SyncTask>(name: "tasks")) })
    }

    private func titles(_ device: Device) throws -> [String] {
        try device.run { realm in realm.objects(SyncTask.self).map(\.title).sorted() }
    }

    @Test func roleChangedByCustomDataMidSessionRemovesWhatTheNewRoleHidesAndSyncingGoesOn() async throws {
        let fixture = try fixture()
        let db = fixture.database
        try insertProfile(db, user: "ana", role: "manager")
        try insertTask(db, owner: "ana", title: "ana 1")
        try insertTask(db, owner: "ben", title: "ben 1")
        let ana = try await taskDevice(fixture, user: "ana")
        let codes = Mutex<[Int]>([])
        ana.app.syncManager.errorHandler = { error, _ in
            if let code = (error as? SyncError)?.serverCode { codes.withLock { $0.append(code) } }
        }
        try await ana.sync()
        #expect(try titles(ana) == ["ana 1", "ben 1"])

        // Ana is no longer a manager: her session ends, the next one takes ben's task away.
        try PostgresFixture.psql(db, """
            UPDATE "SyncUserProfile" SET doc = jsonb_set(doc, '{role}', '"member"')
            """)
        #expect(try await eventually(.seconds(30)) { try titles(ana) == ["ana 1"] }, "\((try? titles(ana)) ?? [])")
        #expect(codes.withLock { $0 } .contains(SyncErrorCode.serverPermissionsChanged.rawValue))
        #expect(fixture.server.log.contains("the rules' expansions changed for user ana"))
        // Nothing was deleted on the server, and ana's own writes still sync.
        #expect(try PostgresFixture.psql(db, "SELECT count(*) FROM \"SyncTask\"") == "2")
        try ana.write { realm in realm.add(SyncTask(value: ["owner": "ana", "title": "ana 2"])) }
        try await ana.sync()
        #expect(try PostgresFixture.psql(db, "SELECT count(*) FROM \"SyncTask\" WHERE doc->>'owner' = 'ana'") == "2")
        // Manager again: ben's task comes back.
        try PostgresFixture.psql(db, """
            UPDATE "SyncUserProfile" SET doc = jsonb_set(doc, '{role}', '"manager"')
            """)
        #expect(try await eventually(.seconds(30)) { try titles(ana) == ["ana 1", "ana 2", "ben 1"] },
                "\((try? titles(ana)) ?? [])")
        await ana.close()
    }

    @Test func roleChangedWhileTheDeviceWasAwayIsAppliedWhenItComesBack() async throws {
        let fixture = try fixture()
        let db = fixture.database
        try insertProfile(db, user: "ana", role: "manager")
        try insertTask(db, owner: "ben", title: "ben 1")
        let ana = try await taskDevice(fixture, user: "ana")
        try await ana.sync()
        #expect(try titles(ana) == ["ben 1"])
        try ana.session.suspend()
        try PostgresFixture.psql(db, "DELETE FROM \"SyncUserProfile\"")
        try ana.session.resume()
        #expect(try await eventually(.seconds(30)) { try titles(ana).isEmpty }, "\((try? titles(ana)) ?? [])")
        await ana.close()
    }

    @Test func rulesOnUserDataSeeTheLoginTokensMetadata() async throws {
        let fixture = try fixture()
        for name in ["blue", "red"] {
            let id = ObjectId.generate().stringValue
            try PostgresFixture.psql(fixture.database, """
                INSERT INTO "SyncDog" (_id, doc) VALUES ('\(id)', '{"_id": {"$oid": "\(id)"}, "name": "\(name)", "age": 1}')
                """)
        }
        let token = try await TestTokens.login("ana", userData: ["team": "blue"])
        let ana = try await Device(server: fixture.server, credentials: .jwt(token: token), types: Self.types,
                                   subscriptions: { $0.append(QuerySubscription<SyncDog>(name: "dogs")) })
        try await ana.sync()
        #expect(try ana.run { realm in realm.objects(SyncDog.self).map(\.name) } == ["blue"])
        #expect(try PostgresFixture.psql(fixture.database, "SELECT data->>'team' FROM trellis_users WHERE user_id = 'ana'")
            == "blue")
        await ana.close()
    }
}

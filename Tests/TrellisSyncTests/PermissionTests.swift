import Foundation
import Synchronization
import Testing
import Logging
import Trellis
import TrellisSync
import TrellisSyncProtocol
import WSClient

/// Device Sync's permissions end to end (issue 36, item 1): three users, an owner-only rule
/// (`{"owner_id": "%%user.id"}`), a read-only default role, a field-level role and a role from
/// custom user data, on every path: bootstrap, live download, upload, changes made with SQL;
/// refused writes come back as compensating writes and are undone on the device.
@Suite(.serialized)
struct PermissionTests {
    static let rules = #"""
        {"rules": [
          {"collection": "SyncMappedNote", "roles": [{"name": "owner", "apply_when": {},
            "document_filters": {"read": {"owner_id": "%%user.id"}, "write": {"owner_id": "%%user.id"}},
            "read": true, "write": true}]},
          {"collection": "SyncTask", "roles": [
            {"name": "manager", "apply_when": {"%%user.custom_data.role": "manager"},
             "document_filters": {"read": true, "write": true}, "read": true, "write": true},
            {"name": "assignee", "apply_when": {},
             "document_filters": {"read": {"owner": "%%user.id"}, "write": {"owner": "%%user.id"}},
             "read": false, "write": false, "insert": false, "delete": false,
             "fields": {"scores": {"read": false}, "priority": {"write": true}},
             "additional_fields": {"read": true}}]},
          {"collection": "SyncUserProfile", "roles": [{"name": "nobody", "apply_when": {},
            "document_filters": {"read": false, "write": false}}]}],
         "default_rule": {"roles": [{"name": "reader", "apply_when": {},
           "document_filters": {"read": true, "write": false}, "read": true, "write": false}]},
         "custom_user_data": {"collection_name": "SyncUserProfile", "user_id_field": "user_id"}}
        """#

    static let types: [ObjectBase.Type] = [SyncMappedNote.self, SyncMappedPlace.self, SyncTask.self, SyncDog.self,
                                           SyncPerson.self, SyncAddress.self]

    /// Everything, whatever the user may read: the server decides.
    static let everything: @Sendable (SyncSubscriptionSet) -> Void = { subs in
        subs.append(QuerySubscription<SyncMappedNote>(name: "notes"))
        subs.append(QuerySubscription<SyncTask>(name: "tasks"))
        subs.append(QuerySubscription<SyncDog>(name: "dogs"))
    }

    private func device(_ server: ServerProcess, _ user: String) async throws -> Device {
        try await Device(server: server, credentials: .jwt(token: try await TestTokens.login(user)), types: Self.types,
                         subscriptions: Self.everything)
    }

    private func noteTexts(_ device: Device) throws -> [String] {
        try device.run { realm in realm.objects(SyncMappedNote.self).map(\.text).sorted() }
    }

    @Test func threeUsersSeeAndWriteOnlyWhatTheRulesAllowOnEveryPath() async throws {
        let rulesFile = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString).json")
        try Self.rules.write(to: rulesFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: rulesFile) }
        let fixture = try SyncFixture(types: Self.types + [SyncUserProfile.self],
                                      serverArguments: ["--rules", rulesFile.path])
        let db = fixture.database
        let profile = ObjectId.generate().stringValue
        try PostgresFixture.psql(db, """
            INSERT INTO "SyncUserProfile" (_id, doc) VALUES ('\(profile)',
              '{"_id": {"$oid": "\(profile)"}, "user_id": "cy", "role": "manager"}')
            """)
        let dogId = ObjectId.generate()
        try PostgresFixture.psql(db, """
            INSERT INTO "SyncDog" (_id, doc) VALUES ('\(dogId.stringValue)',
              '{"_id": {"$oid": "\(dogId.stringValue)"}, "name": "Shared dog", "age": 4}')
            """)
        let ana = try await device(fixture.server, "ana")
        let ben = try await device(fixture.server, "ben")
        let cy = try await device(fixture.server, "cy")
        let errors = Mutex<[SyncError]>([])
        ana.app.syncManager.errorHandler = { error, _ in
            if let error = error as? SyncError { errors.withLock { $0.append(error) } }
        }

        // Uploads within the rules are accepted: each owner's note, the manager's tasks.
        let anaTask = ObjectId.generate(), benTask = ObjectId.generate()
        try ana.write { $0.add(SyncMappedNote(value: ["owner": "ana", "text": "ana's note"])) }
        try ben.write { $0.add(SyncMappedNote(value: ["owner": "ben", "text": "ben's note"])) }
        try cy.write { realm in
            realm.add(SyncTask(value: ["_id": anaTask, "owner": "ana", "title": "for ana", "priority": 1,
                                       "scores": ["effort": 5]]))
            realm.add(SyncTask(value: ["_id": benTask, "owner": "ben", "title": "for ben"]))
        }
        for device in [ana, ben, cy] { try await device.sync() }
        #expect(try PostgresFixture.psql(db, "SELECT count(*) FROM \"SyncMappedNote\"") == "2")
        #expect(try PostgresFixture.psql(db, "SELECT count(*) FROM \"SyncTask\"") == "2")

        // Live downloads: each user gets only what it may read, without the fields it may not.
        try await ana.sync()
        #expect(try noteTexts(ana) == ["ana's note"])
        #expect(try noteTexts(ben) == ["ben's note"])
        #expect(try await eventually { try ana.run { $0.objects(SyncTask.self).map(\.title) } == ["for ana"] })
        #expect(try ana.run { $0.object(ofType: SyncTask.self, forPrimaryKey: anaTask)?.scores.count } == 0)
        #expect(try await eventually { try cy.run { $0.objects(SyncTask.self).count } == 2 })
        #expect(try cy.run { $0.object(ofType: SyncTask.self, forPrimaryKey: anaTask)?.scores["effort"] } == 5)
        #expect(try ana.run { $0.objects(SyncDog.self).map(\.name) } == ["Shared dog"])

        // A bootstrap (a new device of ana's) obeys the same rules.
        let anaTablet = try await device(fixture.server, "ana")
        try await anaTablet.sync()
        #expect(try noteTexts(anaTablet) == ["ana's note"])
        #expect(try anaTablet.run { $0.objects(SyncTask.self).map(\.title) } == ["for ana"])
        #expect(try anaTablet.run { $0.object(ofType: SyncTask.self, forPrimaryKey: anaTask)?.scores.count } == 0)
        #expect(try anaTablet.run { $0.objects(SyncDog.self).count } == 1)
        await anaTablet.close()

        // Changes made with SQL: a note given to ana arrives, ben's edits do not reach ana, a
        // hidden field changed with SQL stays hidden, a note taken from ben leaves ben's device.
        let sqlNote = ObjectId.generate()
        try PostgresFixture.psql(db, """
            INSERT INTO "SyncMappedNote" (_id, doc) VALUES ('\(sqlNote.stringValue)',
              '{"_id": {"$oid": "\(sqlNote.stringValue)"}, "owner_id": "ben", "body": "made with SQL"}');
            UPDATE "SyncTask" SET doc = jsonb_set(doc, '{scores}', '{"effort": 8}') WHERE _id = '\(anaTask.stringValue)';
            UPDATE "SyncMappedNote" SET doc = jsonb_set(doc, '{body}', '"ben edited with SQL"')
              WHERE doc->>'owner_id' = 'ben' AND doc->>'body' = 'ben''s note';
            """)
        #expect(try await eventually { try noteTexts(ben) == ["ben edited with SQL", "made with SQL"] })
        try PostgresFixture.psql(db, """
            UPDATE "SyncMappedNote" SET doc = jsonb_set(doc, '{owner_id}', '"ana"') WHERE _id = '\(sqlNote.stringValue)'
            """)
        #expect(try await eventually { try noteTexts(ana) == ["ana's note", "made with SQL"] })
        #expect(try await eventually { try noteTexts(ben) == ["ben edited with SQL"] })
        try await ana.sync()
        #expect(try ana.run { $0.object(ofType: SyncTask.self, forPrimaryKey: anaTask)?.scores.count } == 0)

        // Writes outside the rules: each is refused, reported with its object, and undone.
        let strayNote = ObjectId.generate(), newDog = ObjectId.generate(), newTask = ObjectId.generate()
        try ana.write { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: anaTask)?.priority = 5 }
        try ana.write { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: anaTask)?.title = "renamed by ana" }
        try ana.write { realm in
            realm.add(SyncMappedNote(value: ["_id": strayNote, "owner": "ben", "text": "planted in ben's notes"]))
            realm.add(SyncDog(value: ["_id": newDog, "name": "Not allowed"]))
            realm.add(SyncTask(value: ["_id": newTask, "owner": "ana", "title": "assignees may not insert"]))
            if let dog = realm.object(ofType: SyncDog.self, forPrimaryKey: dogId) { realm.delete(dog) }
        }
        try await ana.sync()
        let refused = { errors.withLock { $0.flatMap { $0.compensatingWriteInfo ?? [] } } }
        #expect(try await eventually { refused().count == 5 })
        #expect(Set(refused().map(\.objectType)) == ["SyncTask", "SyncMappedNote", "SyncDog"])
        #expect(Set(refused().compactMap(\.primaryKey.objectIdValue)) == [anaTask, strayNote, newDog, newTask, dogId])
        #expect(errors.withLock { $0.allSatisfy { $0.code == .writeRejected && $0.serverCode == 231 } })
        #expect(refused().contains { $0.primaryKey.objectIdValue == anaTask && $0.reason.contains("'title'") })
        #expect(try await eventually {
            try ana.run { realm in
                realm.object(ofType: SyncMappedNote.self, forPrimaryKey: strayNote) == nil
                    && realm.object(ofType: SyncDog.self, forPrimaryKey: newDog) == nil
                    && realm.object(ofType: SyncTask.self, forPrimaryKey: newTask) == nil
                    && realm.object(ofType: SyncDog.self, forPrimaryKey: dogId)?.name == "Shared dog"
                    && realm.object(ofType: SyncTask.self, forPrimaryKey: anaTask)?.title == "for ana"
            }
        })
        #expect(try ana.run { $0.object(ofType: SyncTask.self, forPrimaryKey: anaTask)?.priority } == 5)
        // The server kept none of them; ben never saw the planted note.
        #expect(try PostgresFixture.psql(db, "SELECT doc->>'title' FROM \"SyncTask\" WHERE _id = '\(anaTask.stringValue)'")
            == "for ana")
        #expect(try PostgresFixture.psql(db, "SELECT doc->'priority' FROM \"SyncTask\" WHERE _id = '\(anaTask.stringValue)'")
            == #"{"$numberLong": "5"}"#)
        #expect(try PostgresFixture.psql(db, "SELECT count(*) FROM \"SyncMappedNote\" WHERE _id = '\(strayNote.stringValue)'") == "0")
        #expect(try PostgresFixture.psql(db, "SELECT count(*) FROM \"SyncDog\"") == "1")
        #expect(try PostgresFixture.psql(db, "SELECT count(*) FROM \"SyncTask\"") == "2")
        try await ben.sync()
        #expect(try noteTexts(ben) == ["ben edited with SQL"])
        // The manager's edit of ana's task still reaches her; ben's task never does.
        try cy.write { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: anaTask)?.title = "renamed by cy" }
        try cy.write { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: benTask)?.title = "ben's, renamed" }
        try await cy.sync()
        #expect(try await eventually {
            try ana.run { $0.object(ofType: SyncTask.self, forPrimaryKey: anaTask)?.title } == "renamed by cy"
        })
        try await ana.sync()
        #expect(try ana.run { $0.object(ofType: SyncTask.self, forPrimaryKey: benTask) } == nil)
        for device in [ana, ben, cy] { await device.close() }
    }

    @Test func otherUsersObjectsNeverReachAClientNotEvenTheirIds() async throws {
        let rulesFile = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString).json")
        try Self.rules.write(to: rulesFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: rulesFile) }
        let fixture = try SyncFixture(types: Self.types + [SyncUserProfile.self],
                                      serverArguments: ["--rules", rulesFile.path])
        let ana = try await device(fixture.server, "ana")
        let benUser = try await testApp(fixture.server.baseURL)
            .login(credentials: .jwt(token: try await TestTokens.login("ben")))
        let benNote = ObjectId.generate()
        try PostgresFixture.psql(fixture.database, """
            INSERT INTO "SyncMappedNote" (_id, doc) VALUES ('\(benNote.stringValue)',
              '{"_id": {"$oid": "\(benNote.stringValue)"}, "owner_id": "ben", "body": "by ben"}')
            """)
        // Ben's client, frame by frame: a bootstrap of every note, then the live history.
        let hello = RawSyncClient.hello(token: benUser.accessToken ?? "", clientId: "ben-raw",
                                        subscriptions: .init(version: 1, subscriptions: [
                                            .init(name: "notes", className: "SyncMappedNote", query: "TRUEPREDICATE"),
                                        ]))
        let received = Mutex<[ServerChange]>([])
        let anaNote = ObjectId.generate()
        try await RawSyncClient.connect(port: fixture.server.port, timeout: .seconds(60)) { channel in
            try await channel.send(hello)
            var marked = false
            while let frame = try await channel.next() {
                switch frame {
                case .download(let download):
                    received.withLock { $0 += download.changes }
                    guard download.completesSubscriptionVersion != nil, !marked else { continue }
                    marked = true
                    // Ana creates, edits and deletes her note; ben's note is given to ana.
                    try ana.write { $0.add(SyncMappedNote(value: ["_id": anaNote, "owner": "ana", "text": "v1"])) }
                    try await ana.sync()
                    try ana.write { $0.object(ofType: SyncMappedNote.self, forPrimaryKey: anaNote)?.text = "v2" }
                    try await ana.sync()
                    try ana.write { realm in
                        if let note = realm.object(ofType: SyncMappedNote.self, forPrimaryKey: anaNote) { realm.delete(note) }
                    }
                    try await ana.sync()
                    try PostgresFixture.psql(fixture.database, """
                        UPDATE "SyncMappedNote" SET doc = jsonb_set(doc, '{owner_id}', '"ana"')
                          WHERE _id = '\(benNote.stringValue)'
                        """)
                    try await ana.sync()
                    try await channel.send(.mark(.init(id: 1)))
                case .mark:
                    try await channel.close()
                    return
                case .error(let error):
                    Issue.record("server error \(error.code): \(error.message)")
                    return
                default: continue
                }
            }
        }
        let changes = received.withLock { $0 }
        let keys = Set(changes.map(\.primaryKey))
        #expect(keys == [.object(["$oid": .string(benNote.stringValue)])])
        // Ben had his note, then got its removal when it became ana's.
        #expect(changes.first?.document != nil)
        #expect(changes.last?.document == nil)
        await ana.close()
    }

    @Test func subscriptionsOnHiddenFieldsRevealNothingOfTheirValues() async throws {
        let rulesFile = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString).json")
        try Self.rules.write(to: rulesFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: rulesFile) }
        let fixture = try SyncFixture(types: Self.types + [SyncUserProfile.self],
                                      serverArguments: ["--rules", rulesFile.path])
        let profile = ObjectId.generate().stringValue
        try PostgresFixture.psql(fixture.database, """
            INSERT INTO "SyncUserProfile" (_id, doc) VALUES ('\(profile)',
              '{"_id": {"$oid": "\(profile)"}, "user_id": "cy", "role": "manager"}')
            """)
        let cy = try await device(fixture.server, "cy")
        try cy.write { realm in
            realm.add(SyncTask(value: ["owner": "ana", "title": "scored", "scores": ["effort": 5]]))
            realm.add(SyncTask(value: ["owner": "ana", "title": "unscored"]))
        }
        try await cy.sync()
        // Ana may read her tasks but not their scores: a query on scores selects as if there were none.
        let scored: @Sendable (SyncSubscriptionSet) -> Void = { subs in
            subs.append(QuerySubscription<SyncTask>(name: "scored", query: "scores.@count > 0"))
        }
        let ana = try await Device(server: fixture.server, credentials: .jwt(token: try await TestTokens.login("ana")),
                                   types: Self.types, subscriptions: scored)
        try await ana.sync()
        #expect(try ana.run { $0.objects(SyncTask.self).count } == 0)
        let unscored: @Sendable (SyncSubscriptionSet) -> Void = { subs in
            subs.append(QuerySubscription<SyncTask>(name: "unscored", query: "scores.@count == 0"))
        }
        let anaTablet = try await Device(server: fixture.server,
                                         credentials: .jwt(token: try await TestTokens.login("ana")),
                                         types: Self.types, subscriptions: unscored)
        try await anaTablet.sync()
        #expect(try anaTablet.run { $0.objects(SyncTask.self).map(\.title).sorted() } == ["scored", "unscored"])
        // The manager sees the scores, so the same query selects by them.
        let manager = try await Device(server: fixture.server, credentials: .jwt(token: try await TestTokens.login("cy")),
                                       types: Self.types, subscriptions: scored)
        try await manager.sync()
        #expect(try manager.run { $0.objects(SyncTask.self).map(\.title) } == ["scored"])
        for device in [cy, ana, anaTablet, manager] { await device.close() }
    }
}

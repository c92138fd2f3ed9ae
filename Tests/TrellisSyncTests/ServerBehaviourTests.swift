import Foundation
import Synchronization
import Testing
import Trellis
import TrellisSync

/// What the server does beyond merging: changes made with SQL, several server processes on
/// one database, subscriptions narrowed and widened.
@Suite(.serialized)
struct ServerBehaviourTests {
    @Test func rowChangedWithPsqlReachesNotificationBlock() async throws {
        let fixture = try SyncFixture()
        let device = try await Device(server: fixture.server)
        let id = ObjectId.generate()
        try device.write { realm in realm.add(SyncDog(value: ["_id": id, "name": "Rex", "age": 3])) }
        try await device.sync()
        let names = Mutex<[String]>([])
        let token = try device.run { realm in
            realm.objects(SyncDog.self).observe { change in
                if case .update(let dogs, _, _, let modifications) = change, !modifications.isEmpty {
                    names.withLock { $0.append(dogs[modifications[0]].name) }
                }
            }
        }
        try PostgresFixture.psql(fixture.database, """
            UPDATE "SyncDog" SET doc = jsonb_set(doc, '{name}', '"Changed with psql"') WHERE _id = '\(id.stringValue)'
            """)
        #expect(try await eventually { names.withLock { $0 } == ["Changed with psql"] })
        // A row inserted with SQL arrives too (plain JSON numbers accepted).
        let other = ObjectId.generate()
        try PostgresFixture.psql(fixture.database, """
            INSERT INTO "SyncDog" (_id, doc) VALUES ('\(other.stringValue)',
              '{"_id": {"$oid": "\(other.stringValue)"}, "name": "Inserted", "age": 9}')
            """)
        #expect(try await eventually { try device.run { $0.object(ofType: SyncDog.self, forPrimaryKey: other)?.age } == 9 })
        // And a row deleted with SQL goes away.
        try PostgresFixture.psql(fixture.database, "DELETE FROM \"SyncDog\" WHERE _id = '\(other.stringValue)'")
        #expect(try await eventually { try device.run { $0.object(ofType: SyncDog.self, forPrimaryKey: other) } == nil })
        try device.run { _ in token.invalidate() }
        await device.close()
    }

    @Test func twoServerProcessesOnOneDatabaseConverge() async throws {
        let fixture = try SyncFixture()
        let second = try ServerProcess(database: fixture.database, schema: fixture.schema)
        let a = try await Device(server: fixture.server)
        let b = try await Device(server: second)
        try a.write { realm in realm.add(SyncTask(value: ["title": "from server 1"])) }
        try b.write { realm in realm.add(SyncTask(value: ["title": "from server 2"])) }
        try await a.sync()
        try await b.sync()
        #expect(try await eventually { try a.run { $0.objects(SyncTask.self).count } == 2 })
        #expect(try await eventually { try b.run { $0.objects(SyncTask.self).count } == 2 })
        try await a.sync()
        try await b.sync()
        #expect(try a.run(snapshot) == b.run(snapshot))
        await a.close()
        await b.close()
    }

    @Test func narrowedSubscriptionRemovesObjectsAndWideningBringsThemBack() async throws {
        let fixture = try SyncFixture()
        let writer = try await Device(server: fixture.server)
        try writer.write { realm in
            for age in 1...10 { realm.add(SyncDog(value: ["name": "dog \(age)", "age": age])) }
        }
        try await writer.sync()
        let reader = try await Device(server: fixture.server, subscriptions: { subs in
            subs.append(QuerySubscription<SyncDog>(name: "dogs"))
        })
        try await reader.sync()
        #expect(try reader.run { $0.objects(SyncDog.self).count } == 10)
        let subscriptions = try reader.run { $0.subscriptions }
        try await withTimeout(.seconds(30)) {
            try await subscriptions.update {
                $0.remove(named: "dogs")
                $0.append(QuerySubscription<SyncDog>(name: "young") { $0.age < 4 })
            }
        }
        #expect(try reader.run { realm in realm.objects(SyncDog.self).map(\.age).sorted() } == [1, 2, 3])
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncDog\"") == "10")
        try await withTimeout(.seconds(30)) {
            try await subscriptions.update {
                $0.append(QuerySubscription<SyncDog>(name: "old", query: "age >= %@", 8))
            }
        }
        #expect(try reader.run { realm in realm.objects(SyncDog.self).map(\.age).sorted() } == [1, 2, 3, 8, 9, 10])
        #expect(subscriptions.count == 2)
        // Changes to objects outside the subscriptions are not sent; one that starts to match is.
        try writer.write { realm in realm.objects(SyncDog.self).filter("age == 5").first?.age = 2 }
        try await writer.sync()
        try await reader.sync()
        #expect(try reader.run { realm in realm.objects(SyncDog.self).map(\.age).sorted() } == [1, 2, 2, 3, 8, 9, 10])
        await writer.close()
        await reader.close()
    }

    /// As Realm keeps unresolved links: a link to an object outside the subscriptions reads nil
    /// locally, but a local edit of its owner does not remove it on the server.
    @Test func linksToObjectsOutsideTheSubscriptionsSurviveALocalEdit() async throws {
        let fixture = try SyncFixture()
        let full = try await Device(server: fixture.server)
        let oldId = ObjectId.generate(), youngId = ObjectId.generate(), newId = ObjectId.generate()
        let personId = ObjectId.generate()
        try full.write { realm in
            let old = SyncDog(value: ["_id": oldId, "name": "Old", "age": 12])
            let young = SyncDog(value: ["_id": youngId, "name": "Young", "age": 2])
            realm.add(SyncPerson(value: ["_id": personId, "name": "Ana", "dog": old, "dogs": [old, young]]))
        }
        try await full.sync()
        let partial = try await Device(server: fixture.server, subscriptions: { subs in
            subs.append(QuerySubscription<SyncDog>(name: "young") { $0.age < 5 })
            subs.append(QuerySubscription<SyncPerson>(name: "people"))
        })
        try await partial.sync()
        let seen = try partial.run { realm in
            let person = realm.object(ofType: SyncPerson.self, forPrimaryKey: personId)
            return [person?.dog?.name ?? "nil"] + (person?.dogs.map(\.name) ?? [])
        }
        #expect(seen == ["nil", "Young"])
        try partial.write { realm in
            guard let person = realm.object(ofType: SyncPerson.self, forPrimaryKey: personId) else { return }
            person.name = "Ana Maria"
            person.dogs.append(SyncDog(value: ["_id": newId, "name": "New", "age": 1]))
        }
        try await partial.sync()
        #expect(try PostgresFixture.psql(fixture.database, "SELECT doc->>'name' FROM \"SyncPerson\"") == "Ana Maria")
        #expect(try PostgresFixture.psql(fixture.database, "SELECT doc->'dog'->>'$oid' FROM \"SyncPerson\"")
                == oldId.stringValue)
        let dogs = try PostgresFixture.psql(fixture.database, """
            SELECT string_agg(e->>'$oid', ',' ORDER BY n) FROM "SyncPerson", jsonb_array_elements(doc->'dogs') WITH ORDINALITY t(e, n)
            """)
        #expect(dogs == [oldId, youngId, newId].map(\.stringValue).joined(separator: ","))
        try await full.sync()
        let everything = try full.run { realm in
            let person = realm.object(ofType: SyncPerson.self, forPrimaryKey: personId)
            return [person?.dog?.name ?? "nil"] + (person?.dogs.map(\.name) ?? [])
        }
        #expect(everything == ["Old", "Old", "Young", "New"])
        await full.close()
        await partial.close()
    }

    /// The server's documents name mapped properties by their persisted names, so the client
    /// sends subscription queries with those names (as Realm does); typed and string queries,
    /// through an embedded object too.
    @Test func subscriptionQueriesUseThePersistedNamesOfMappedProperties() async throws {
        let types = syncModelTypes + [SyncMappedNote.self, SyncMappedPlace.self]
        let fixture = try SyncFixture(types: types)
        let writer = try await Device(server: fixture.server, types: types, subscriptions: { subs in
            subs.append(QuerySubscription<SyncMappedNote>(name: "notes"))
        })
        try writer.write { realm in
            realm.add(SyncMappedNote(value: ["owner": "me", "text": "mine in Oslo", "place": ["city": "Oslo"]]))
            realm.add(SyncMappedNote(value: ["owner": "me", "text": "mine in Bergen", "place": ["city": "Bergen"]]))
            realm.add(SyncMappedNote(value: ["owner": "someone else", "text": "theirs", "place": ["city": "Oslo"]]))
        }
        try await writer.sync()
        let stored = try PostgresFixture.psql(fixture.database,
            "SELECT count(*) FROM \"SyncMappedNote\" WHERE doc->>'owner_id' = 'me' AND doc->'place'->>'city_name' = 'Oslo'")
        #expect(stored == "1", "the documents should use the persisted names")

        let typed = try await Device(server: fixture.server, types: types, subscriptions: { subs in
            subs.append(QuerySubscription<SyncMappedNote>(name: "mine") { $0.owner == "me" && $0.place.city == "Oslo" })
        })
        try await typed.sync()
        #expect(try typed.run { realm in realm.objects(SyncMappedNote.self).map(\.text) } == ["mine in Oslo"])

        let text = try await Device(server: fixture.server, types: types, subscriptions: { subs in
            subs.append(QuerySubscription<SyncMappedNote>(name: "mine", query: "owner == %@", "me"))
        })
        try await text.sync()
        #expect(try text.run { realm in realm.objects(SyncMappedNote.self).map(\.text).sorted() }
                == ["mine in Bergen", "mine in Oslo"])
        for device in [writer, typed, text] { await device.close() }
    }
}

import Foundation
import Testing
import Trellis
import TrellisSync

/// One test per conflict rule (docs/SYNC.md, "Conflicts"): two clients edit offline, come
/// back in a chosen order, and must converge to the rule's result, on both clients and in
/// PostgreSQL.
@Suite(.serialized)
struct ConflictRuleTests {
    /// Two synced devices sharing one task; both are suspended on return.
    private func twoDevicesWithTask(_ fixture: SyncFixture, _ setUp: @escaping (SyncTask) -> Void) async throws
        -> (Device, Device, ObjectId)
    {
        let a = try await Device(server: fixture.server)
        let b = try await Device(server: fixture.server)
        let id = ObjectId.generate()
        try a.write { realm in
            let task = SyncTask(value: ["_id": id, "owner": "me", "title": "start"])
            setUp(task)
            realm.add(task)
        }
        try await a.sync()
        try await b.sync()
        #expect(try b.run { $0.object(ofType: SyncTask.self, forPrimaryKey: id) != nil })
        try a.session.suspend()
        try b.session.suspend()
        return (a, b, id)
    }

    /// Brings `first` back, then `second`, then syncs both again.
    private func reconnect(_ first: Device, then second: Device) async throws {
        try first.session.resume()
        try await first.sync()
        try second.session.resume()
        try await second.sync()
        try await first.sync()
    }

    private func task(_ device: Device, _ id: ObjectId) throws -> SyncTask? {
        try device.run { $0.object(ofType: SyncTask.self, forPrimaryKey: id) }
    }

    /// A value read from the device's task, on the device's queue.
    private func read<T>(_ device: Device, _ id: ObjectId, _ body: (SyncTask) -> T) throws -> T? {
        try device.run { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: id).map(body) }
    }

    @Test func deleteWinsOverConcurrentUpdate() async throws {
        let fixture = try SyncFixture()
        let (a, b, id) = try await twoDevicesWithTask(fixture) { _ in }
        try a.write { realm in realm.delete(try realm.object(ofType: SyncTask.self, forPrimaryKey: id).unwrapped("task")) }
        try b.write { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: id)?.title = "edited later" }
        // The delete reaches the server first; the later update must not bring the task back.
        try await reconnect(a, then: b)
        #expect(try read(a, id) { $0.title } == nil)
        #expect(try read(b, id) { $0.title } == nil)
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncTask\"") == "0")
        await a.close()
        await b.close()
    }

    @Test func lastWriterWinsPerPropertyByClock() async throws {
        let fixture = try SyncFixture()
        let (a, b, id) = try await twoDevicesWithTask(fixture) { _ in }
        try a.write { realm in
            let task = realm.object(ofType: SyncTask.self, forPrimaryKey: id)
            task?.title = "from A (earlier)"
            task?.priority = 7
        }
        try await Task.sleep(for: .milliseconds(20))
        try b.write { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: id)?.title = "from B (later)" }
        // B uploads first, A's older title arrives last and must lose; A's priority is kept.
        try await reconnect(b, then: a)
        for device in [a, b] {
            #expect(try read(device, id) { $0.title } == "from B (later)")
            #expect(try read(device, id) { $0.priority } == 7)
        }
        #expect(try PostgresFixture.psql(fixture.database, "SELECT doc->>'title' FROM \"SyncTask\"") == "from B (later)")
        await a.close()
        await b.close()
    }

    @Test func listInsertionsFromBothSidesAreKeptInOneOrder() async throws {
        let fixture = try SyncFixture()
        let (a, b, id) = try await twoDevicesWithTask(fixture) { $0.steps.append(objectsIn: ["s1", "s2"]) }
        try a.write { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: id)?.steps.append("a1") }
        try b.write { realm in
            let steps = realm.object(ofType: SyncTask.self, forPrimaryKey: id)?.steps
            steps?.insert("b0", at: 0)
            steps?.append("b1")
        }
        try await reconnect(a, then: b)
        let left = try a.run { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: id).map { Array($0.steps) } }
        let right = try b.run { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: id).map { Array($0.steps) } }
        #expect(left == ["b0", "s1", "s2", "a1", "b1"])
        #expect(left == right)
        await a.close()
        await b.close()
    }

    @Test func listRemovalAndInsertionMerge() async throws {
        let fixture = try SyncFixture()
        let (a, b, id) = try await twoDevicesWithTask(fixture) { $0.steps.append(objectsIn: ["s1", "s2", "s3"]) }
        try a.write { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: id)?.steps.remove(at: 1) }
        try b.write { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: id)?.steps.insert("b", at: 2) }
        try await reconnect(b, then: a)
        let left = try a.run { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: id).map { Array($0.steps) } }
        let right = try b.run { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: id).map { Array($0.steps) } }
        #expect(left == ["s1", "b", "s3"])
        #expect(left == right)
        await a.close()
        await b.close()
    }

    @Test func setAdditionsAndRemovalsMerge() async throws {
        let fixture = try SyncFixture()
        let (a, b, id) = try await twoDevicesWithTask(fixture) { $0.tags.insert(objectsIn: ["x", "y"]) }
        try a.write { realm in
            let tags = realm.object(ofType: SyncTask.self, forPrimaryKey: id)?.tags
            tags?.insert("a")
            tags?.remove("x")
        }
        try b.write { realm in
            let tags = realm.object(ofType: SyncTask.self, forPrimaryKey: id)?.tags
            tags?.insert("b")
            tags?.remove("y")
        }
        try await reconnect(a, then: b)
        for device in [a, b] {
            #expect(try read(device, id) { Set($0.tags) } == ["a", "b"])
        }
        await a.close()
        await b.close()
    }

    @Test func mapKeysResolvePerKey() async throws {
        let fixture = try SyncFixture()
        let (a, b, id) = try await twoDevicesWithTask(fixture) { task in
            task.scores["k1"] = 1
            task.scores["k2"] = 2
        }
        try a.write { realm in
            let scores = realm.object(ofType: SyncTask.self, forPrimaryKey: id)?.scores
            scores?["k1"] = 10
            scores?.removeObject(for: "k2")
        }
        try await Task.sleep(for: .milliseconds(20))
        try b.write { realm in
            let scores = realm.object(ofType: SyncTask.self, forPrimaryKey: id)?.scores
            scores?["k3"] = 3
            scores?["k1"] = 11
        }
        try await reconnect(b, then: a)
        for device in [a, b] {
            let scores = try device.run { realm in
                realm.object(ofType: SyncTask.self, forPrimaryKey: id).map { Dictionary(uniqueKeysWithValues: $0.scores.map { ($0.key, $0.value) }) }
            }
            // k1: B wrote later; k2: removed by A; k3: added by B.
            #expect(scores == ["k1": 11, "k3": 3])
        }
        await a.close()
        await b.close()
    }

    @Test func embeddedObjectsFollowTheirParent() async throws {
        let fixture = try SyncFixture()
        let a = try await Device(server: fixture.server)
        let b = try await Device(server: fixture.server)
        let ana = ObjectId.generate(), bo = ObjectId.generate()
        try a.write { realm in
            realm.add(SyncPerson(value: ["_id": ana, "name": "Ana", "address": ["city": "Oslo"]]))
            realm.add(SyncPerson(value: ["_id": bo, "name": "Bo", "address": ["city": "Rome"]]))
        }
        try await a.sync()
        try await b.sync()
        try a.session.suspend()
        try b.session.suspend()
        // Ana: A edits the embedded address while B renames her: both kept.
        // Bo: A edits his address while B deletes him: the address goes with him.
        try a.write { realm in
            realm.object(ofType: SyncPerson.self, forPrimaryKey: ana)?.address?.city = "Bergen"
            realm.object(ofType: SyncPerson.self, forPrimaryKey: bo)?.address?.street = "Via Roma"
        }
        try b.write { realm in
            realm.object(ofType: SyncPerson.self, forPrimaryKey: ana)?.name = "Ana B."
            realm.delete(try realm.object(ofType: SyncPerson.self, forPrimaryKey: bo).unwrapped("Bo"))
        }
        try await reconnect(b, then: a)
        for device in [a, b] {
            let person = try device.run { $0.object(ofType: SyncPerson.self, forPrimaryKey: ana) }
            #expect(try device.run { _ in person?.name } == "Ana B.")
            #expect(try device.run { _ in person?.address?.city } == "Bergen")
            #expect(try device.run { $0.object(ofType: SyncPerson.self, forPrimaryKey: bo) } == nil)
        }
        #expect(try a.run(snapshot) == b.run(snapshot))
        await a.close()
        await b.close()
    }

    @Test func embeddedObjectFieldsMergePerField() async throws {
        let fixture = try SyncFixture()
        let a = try await Device(server: fixture.server)
        let b = try await Device(server: fixture.server)
        let ana = ObjectId.generate()
        try a.write { realm in
            realm.add(SyncPerson(value: ["_id": ana, "name": "Ana", "address": ["city": "Oslo", "street": "Storgata"]]))
        }
        try await a.sync()
        try await b.sync()
        try a.session.suspend()
        try b.session.suspend()
        // A moves her to another city, later B fixes the street: both edits are kept.
        try a.write { realm in realm.object(ofType: SyncPerson.self, forPrimaryKey: ana)?.address?.city = "Bergen" }
        try await Task.sleep(for: .milliseconds(20))
        try b.write { realm in realm.object(ofType: SyncPerson.self, forPrimaryKey: ana)?.address?.street = "Bryggen" }
        try await reconnect(b, then: a)
        for device in [a, b] {
            let person = try device.run { $0.object(ofType: SyncPerson.self, forPrimaryKey: ana) }
            #expect(try device.run { _ in person?.address?.city } == "Bergen")
            #expect(try device.run { _ in person?.address?.street } == "Bryggen")
        }
        #expect(try PostgresFixture.psql(fixture.database, "SELECT doc->'address'->>'city' || ' ' || "
            + "(doc->'address'->>'street') FROM \"SyncPerson\"") == "Bergen Bryggen")
        await a.close()
        await b.close()
    }

    @Test func defaultsLoseToExplicitValuesOnInsertsOfTheSamePrimaryKey() async throws {
        let fixture = try SyncFixture()
        let a = try await Device(server: fixture.server)
        let b = try await Device(server: fixture.server)
        try await a.sync()
        try await b.sync()
        try a.session.suspend()
        try b.session.suspend()
        let id = ObjectId.generate()
        // A sets the priority; later B inserts the same key setting only the title (its
        // priority is the model's default 0).
        try a.write { realm in realm.add(SyncTask(value: ["_id": id, "owner": "me", "priority": 11])) }
        try await Task.sleep(for: .milliseconds(20))
        try b.write { realm in realm.add(SyncTask(value: ["_id": id, "owner": "me", "title": "from B"])) }
        try await reconnect(a, then: b)
        for device in [a, b] {
            #expect(try read(device, id) { $0.priority } == 11)
            #expect(try read(device, id) { $0.title } == "from B")
        }
        await a.close()
        await b.close()
    }
}

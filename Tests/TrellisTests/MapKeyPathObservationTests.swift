import Foundation
import Testing
@testable import Trellis

/// Key-path observation of a `Map` of objects reports the keys whose values changed in the
/// observed properties, as realm-swift's MapTests `testObserveKeyPath*` expect.
@Suite struct MapKeyPathObservationTests {
    let folder = TemporaryFolder()

    func setUp() throws -> (Realm, Owner, [Pet]) {
        let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
        let owner = Owner("tim")
        let pets = [Pet("first", age: 1), Pet("second", age: 2)]
        try realm.write {
            realm.add(owner)
            owner.dogMap["first"] = pets[0]
            owner.dogMap["second"] = pets[1]
        }
        return (realm, owner, pets)
    }

    func observe(_ owner: Owner, _ keyPaths: [String]) -> (NotificationToken, () -> [String]) {
        final class Log: @unchecked Sendable { var entries: [String] = [] }
        let log = Log()
        let token = owner.dogMap.observe(keyPaths: keyPaths) { change in
            switch change {
            case .initial(let map): log.entries.append("initial \(map.count)")
            case .update(let map, let deletions, let insertions, let modifications):
                log.entries.append("d\(deletions.sorted()) i\(insertions.sorted()) m\(modifications.sorted()) \(map.count)")
            case .error: log.entries.append("error")
            }
        }
        return (token, { log.entries })
    }

    @Test func aChangeToAnObservedPropertyReportsTheKeyOfItsValue() throws {
        let (realm, owner, pets) = try setUp()
        let (token, entries) = observe(owner, ["age"])
        realm.refresh()
        try realm.write { pets[0].age = 8 }
        #expect(entries() == ["initial 2", "d[] i[] m[\"first\"] 2"])
        // A property outside the key paths: no notification.
        try realm.write { pets[1].name = "renamed" }
        #expect(entries().count == 2)
        token.invalidate()
    }

    @Test func removingAKeyIsADeletionAndDeletingAValueAModification() throws {
        let (realm, owner, pets) = try setUp()
        let (token, entries) = observe(owner, ["age"])
        realm.refresh()
        try realm.write { realm.delete(pets[1]) }
        try realm.write { owner.dogMap.removeObject(for: "first") }
        #expect(entries() == ["initial 2", "d[] i[] m[\"second\"] 2", "d[\"first\"] i[] m[] 1"])
        token.invalidate()
    }

    @Test func aBacklinkKeyPathReportsTheValueWhoseLinkingObjectChanged() throws {
        let (realm, owner, pets) = try setUp()
        let walker = Owner("walker")
        try realm.write {
            realm.add(walker)
            walker.dog = pets[0]
        }
        let (token, entries) = observe(owner, ["owners.name"])
        realm.refresh()
        try realm.write { walker.name = "Moe" }
        #expect(entries() == ["initial 2", "d[] i[] m[\"first\"] 2"])
        token.invalidate()
    }

    /// Realm's MapTests.testObserveKeyPath* change the map's values from a Realm opened on
    /// another thread with every class of the program: that open adds classes to the file (a
    /// commit that changes no object). That commit had no change record, so the observer took
    /// "anything may have changed" and reported every key ("first", "second" for "first"; an
    /// update for a change outside the key paths).
    @Test func anotherThreadOpeningWithMoreClassesChangesNoObservedValue() throws {
        let (realm, owner, _) = try setUp()
        let (token, entries) = observe(owner, ["age"])
        realm.refresh()
        let folder = self.folder
        try onOtherThread {
            let wider = try Realm(configuration: folder.configuration([Owner.self, Pet.self, Person.self, Dog.self]))
            try wider.write { wider.objects(Pet.self).filter("name == 'first'").first?.age = 8 }
        }
        realm.refresh()
        #expect(entries() == ["initial 2", "d[] i[] m[\"first\"] 2"])
        try onOtherThread {
            let wider = try Realm(configuration: folder.configuration([Owner.self, Pet.self, AllTypes.self]))
            try wider.write { wider.objects(Pet.self).filter("name == 'second'").first?.name = "renamed" }
        }
        realm.refresh()
        #expect(entries().count == 2)
        token.invalidate()
    }
}

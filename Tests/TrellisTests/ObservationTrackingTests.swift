import Foundation
import Observation
import Synchronization
import Testing
@testable import Trellis

/// Swift Observation (beyond Realm, issue 40): reads inside `withObservationTracking` register,
/// and a commit that changes what was read calls `onChange` once.
@Suite struct ObservationTrackingTests {
    let folder = TemporaryFolder()

    func openRealm() throws -> Realm {
        try Realm(configuration: folder.configuration([Owner.self, Pet.self, ProjectedPerson.self,
                                                       ProjectedAddress.self]))
    }

    /// Counts `onChange` calls.
    final class Fired: Sendable {
        let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func onChange() { count.withLock { $0 += 1 } }
    }

    /// Runs `read` inside a tracking closure and returns the counter its `onChange` bumps.
    func track(_ read: () -> Void) -> Fired {
        let fired = Fired()
        withObservationTracking(read) { fired.onChange() }
        return fired
    }

    @Test func theFastCheckFindsTheObservationRuntimesPointerOnThisPlatform() {
        #expect(ObservationGate.isExact)
        #expect(!ObservationGate.mayTrack)
        var inside = false
        withObservationTracking { inside = ObservationGate.mayTrack } onChange: {}
        #expect(inside)
    }

    // MARK: - Managed objects

    @Test func aPropertyReadInsideTrackingIsToldOfThisThreadsCommitThatChangesIt() throws {
        let realm = try openRealm()
        let pet = try realm.write { realm.create(Pet.self, value: ["name": "Rex", "age": 3]) }
        let fired = track { _ = pet.name }
        try realm.write { pet.age = 4 }  // not read: no call
        #expect(fired.value == 0)
        try realm.write { pet.name = "Max" }
        #expect(fired.value == 1)
        try realm.write { pet.name = "Kit" }  // tracking ends with the first call
        #expect(fired.value == 1)
        #expect(realm.core.trackedObservations?.registrationCount == 0)
    }

    /// The row reader's fast path (a row read before, on the Realm's own thread) registers too:
    /// it shares its thread test with the Observation test (one thread-local load).
    @Test func aReadOfARowReadBeforeRegistersInsideTracking() throws {
        let realm = try openRealm()
        let pet = try realm.write { realm.create(Pet.self, value: ["name": "Rex", "age": 3]) }
        _ = pet.name  // the row is cached: the next read takes the fast path
        let fired = track { _ = pet.name }
        // Objects taken out of results beforehand (iterating the results inside the closure would
        // register the results too, which report any change of their objects).
        let pets = Array(realm.objects(Pet.self))
        pets.forEach { _ = $0.age }
        let iterated = track { for each in pets { _ = each.age } }
        #expect([fired.value, iterated.value] == [0, 0] as [Int])
        try realm.write { pet.name = "Max" }
        #expect([fired.value, iterated.value] == [1, 0] as [Int])
        try realm.write { pet.age = 4 }
        #expect([fired.value, iterated.value] == [1, 1] as [Int])
    }

    /// Two tracking closures that read different properties of one object: a change of one
    /// property tells only the closure that read it; the other stays registered for its own.
    /// (Before, the first change dropped the object's registration, and the second closure was
    /// never told.)
    @Test func closuresReadingDifferentPropertiesOfOneObjectAreEachToldOfTheirOwn() throws {
        let realm = try openRealm()
        let pet = try realm.write { realm.create(Pet.self, value: ["name": "Rex", "age": 3]) }
        let name = track { _ = pet.name }
        let age = track { _ = pet.age }
        try realm.write { pet.name = "Max" }
        #expect([name.value, age.value] == [1, 0] as [Int])
        try realm.write { pet.age = 4 }
        #expect([name.value, age.value] == [1, 1] as [Int])
        #expect(realm.core.trackedObservations?.registrationCount == 0)
    }

    /// The same fast path still refuses another thread: a live object whose row is cached traps
    /// there ("Realm accessed from incorrect thread.").
    @Test func aLiveObjectWhoseRowIsCachedTrapsOnAnotherThread() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TemporaryFolder()
            let realm = try? Realm(configuration: folder.configuration([Pet.self, Owner.self]))
            let pet = try? realm?.write { realm?.create(Pet.self, value: ["name": "Rex"]) }
            _ = pet?.name  // cached: only the thread test stands between another thread and the row
            let box = LockedBox<Pet?>(pet)
            let thread = Thread { _ = box.get()?.name }
            thread.start()
            sleep(5)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Realm accessed from incorrect thread."))
    }

    @Test func anotherThreadsCommitCallsOnChangeWhenARefreshSeesIt() throws {
        let realm = try openRealm()
        let pet = try realm.write { realm.create(Pet.self, value: ["name": "Rex"]) }
        let fired = track { _ = pet.name }
        let configuration = realm.configuration
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.objects(Pet.self).first?.name = "Max" }
        }
        #expect(fired.value == 0)
        realm.refresh()
        #expect(fired.value == 1)
        #expect(pet.name == "Max")
    }

    @Test func deletingAnObjectCallsOnChangeForItsReadProperties() throws {
        let realm = try openRealm()
        let pet = try realm.write { realm.create(Pet.self, value: ["name": "Rex"]) }
        let fired = track { _ = pet.age }
        try realm.write { realm.delete(pet) }
        #expect(fired.value == 1)
    }

    @Test func readsOutsideTrackingRegisterNothing() throws {
        let realm = try openRealm()
        let owner = try realm.write { realm.create(Owner.self, value: ["name": "Ann", "dogs": [["name": "a"]]]) }
        _ = owner.name
        _ = owner.dogs.count
        _ = realm.objects(Owner.self).count
        try realm.write { owner.name = "Bo" }
        #expect(realm.core.trackedObservations == nil)
    }

    // MARK: - Collections

    @Test func listSetAndMapReadsAreToldOfChangesToTheirContentsOnly() throws {
        let realm = try openRealm()
        let (ann, bo) = try realm.write {
            (realm.create(Owner.self, value: ["name": "Ann", "dogs": [["name": "a"]]]),
             realm.create(Owner.self, value: ["name": "Bo"]))
        }
        let list = track { _ = ann.dogs.count }
        let set = track { _ = ann.dogSet.count }
        let map = track { _ = ann.dogMap.count }
        try realm.write { bo.dogs.append(Pet("b")) }  // another owner's list
        try realm.write { ann.name = "Anna" }  // another property
        #expect([list.value, set.value, map.value] == [0, 0, 0] as [Int])
        try realm.write { ann.dogs.append(Pet("c")) }
        #expect([list.value, set.value, map.value] == [1, 0, 0] as [Int])
        try realm.write { ann.dogSet.insert(Pet("d")) }
        try realm.write { ann.dogMap["x"] = Pet("e") }
        #expect([list.value, set.value, map.value] == [1, 1, 1] as [Int])
    }

    @Test func resultsAreToldOfCommitsThatChangeTheirClass() throws {
        let realm = try openRealm()
        try realm.write { realm.create(Pet.self, value: ["name": "a", "age": 1]) }
        let all = track { _ = realm.objects(Pet.self).count }
        let filtered = track { _ = Array(realm.objects(Pet.self).filter("age > 5")) }
        try realm.write { realm.create(Owner.self, value: ["name": "unrelated"]) }
        #expect([all.value, filtered.value] == [0, 0] as [Int])
        try realm.write { realm.create(Pet.self, value: ["name": "b", "age": 9]) }
        #expect([all.value, filtered.value] == [1, 1] as [Int])
    }

    @Test func linkingObjectsAreToldWhenALinkToTheirTargetChanges() throws {
        let realm = try openRealm()
        let pet = try realm.write { realm.create(Pet.self, value: ["name": "Rex"]) }
        let counted = track { _ = pet.listOwners.count }
        let listed = track { _ = Array(pet.listOwners).map(\.name) }
        try realm.write { realm.create(Owner.self, value: ["name": "other", "dogs": [["name": "x"]]]) }
        #expect([counted.value, listed.value] == [0, 0] as [Int])
        try realm.write { realm.create(Owner.self, value: ["name": "Ann", "dogs": [pet]]) }
        #expect([counted.value, listed.value] == [1, 1] as [Int])
    }

    @Test func aProjectionsPropertyReadRegistersTheObjectsProperty() throws {
        let realm = try openRealm()
        let person = try realm.write {
            realm.create(ProjectedPerson.self, value: ["id": 1, "firstName": "Ada", "lastName": "L", "age": 36])
        }
        let view = PersonView(projecting: person)
        let fired = track { _ = view.name }
        try realm.write { person.age = 37 }
        #expect(fired.value == 0)
        try realm.write { person.firstName = "Augusta" }
        #expect(fired.value == 1)
    }

    // MARK: - Unmanaged objects

    @Test func anUnmanagedObjectBehavesLikeAnObservableClass() {
        let pet = Pet("Rex", age: 3)
        let fired = track { _ = pet.name }
        pet.age = 4
        #expect(fired.value == 0)
        pet.name = "Max"
        #expect(fired.value == 1)
        #expect(pet.name == "Max")
        pet.name = "Kit"
        #expect(fired.value == 1)
        // Adding it afterwards works as for any object.
        let realm = try? openRealm()
        try? realm?.write { realm?.add(pet) }
        #expect(realm?.objects(Pet.self).first?.name == "Kit")
    }
}

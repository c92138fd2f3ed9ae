import Foundation
import Testing
@testable import Trellis

class ProjectedAddress: EmbeddedObject {
    @Persisted var city = ""
    @Persisted var country = ""
}

class ProjectedPerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0
    @Persisted var address: ProjectedAddress?
    @Persisted var friends: List<ProjectedPerson>
    @Persisted var nicknames: MutableSet<ProjectedPerson>
}

final class PersonView: Projection<ProjectedPerson> {
    @Projected(\ProjectedPerson.firstName) var name
    @Projected(\ProjectedPerson.lastName.localizedUppercase) var lastNameCaps
    @Projected(\ProjectedPerson.age) var age
    @Projected(\ProjectedPerson.address?.city) var homeCity
    @Projected(\ProjectedPerson.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
}

/// A projection of a projection class: both classes' properties are projected.
final class DetailedPersonView: Projection<ProjectedPerson> {
    @Projected(\ProjectedPerson.firstName) var firstName
    @Projected(\ProjectedPerson.firstName.count) var nameLength
}

final class BrokenView: Projection<ProjectedPerson> {
    @Projected(\ProjectedPerson.description) var text
}

@Suite struct ProjectionTests {
    let folder = TemporaryFolder()

    func people() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([ProjectedPerson.self, ProjectedAddress.self]))
        try realm.write {
            let ann = realm.create(ProjectedPerson.self, value: ["id": 1, "firstName": "Ann", "lastName": "Lee", "age": 30,
                                                                 "address": ["city": "Oslo", "country": "NO"]])
            let bob = realm.create(ProjectedPerson.self, value: ["id": 2, "firstName": "Bob", "lastName": "Ray", "age": 20])
            let cid = realm.create(ProjectedPerson.self, value: ["id": 3, "firstName": "Cid", "lastName": "Fox", "age": 40,
                                                                 "address": ["city": "Bergen"]])
            ann.friends.append(objectsIn: [bob, cid])
        }
        return realm
    }

    func ann(_ realm: Realm) -> ProjectedPerson {
        realm.object(ofType: ProjectedPerson.self, forPrimaryKey: 1)!
    }

    @Test func projectedPropertiesReadTheRootThroughTheirKeyPaths() throws {
        let realm = try people()
        let view = PersonView(projecting: ann(realm))
        #expect(view.name == "Ann")
        #expect(view.lastNameCaps == "LEE")
        #expect(view.age == 30)
        #expect(view.homeCity == "Oslo")
        #expect(Array(view.friendNames) == ["Bob", "Cid"])
        #expect(view.friendNames.count == 2)
        #expect(view.friendNames[1] == "Cid")
        #expect(view.friendNames.index(of: "Cid") == 1)
        #expect(view.realm != nil)
        #expect(!view.isInvalidated)
    }

    @Test func aProjectionIsLiveAndChangesWithItsRoot() throws {
        let realm = try people()
        let person = ann(realm)
        let view = PersonView(projecting: person)
        try realm.write {
            person.firstName = "Anna"
            person.address?.city = "Tromsø"
            person.friends.remove(at: 0)
        }
        #expect(view.name == "Anna")
        #expect(view.homeCity == "Tromsø")
        #expect(Array(view.friendNames) == ["Cid"])
    }

    @Test func writingAProjectedPropertyInsideAWriteWritesTheRoot() throws {
        let realm = try people()
        let view = PersonView(projecting: ann(realm))
        try realm.write {
            view.name = "Annie"
            view.age = 31
            view.friendNames[0] = "Bobby"
        }
        #expect(ann(realm).firstName == "Annie")
        #expect(ann(realm).age == 31)
        #expect(realm.object(ofType: ProjectedPerson.self, forPrimaryKey: 2)?.firstName == "Bobby")
    }

    @Test func projectionsOfAnUnmanagedObjectReadAndWriteIt() {
        let person = ProjectedPerson(value: ["firstName": "Eve", "lastName": "Moe"])
        let view = PersonView(projecting: person)
        view.name = "Evelyn"
        #expect(person.firstName == "Evelyn")
        #expect(view.lastNameCaps == "MOE")
        #expect(view.homeCity == nil)
        #expect(view.realm == nil)
    }

    @Test func realmObjectsOfAProjectionReturnsResultsOfProjections() throws {
        let realm = try people()
        let views: Results<PersonView> = realm.objects(PersonView.self)
        #expect(views.count == 3)
        #expect(views.map(\.name) == ["Ann", "Bob", "Cid"])
        #expect(views.first?.rootObject.id == 1)
        #expect(views.index(of: PersonView(projecting: ann(realm))) == 0)
        try realm.write { realm.create(ProjectedPerson.self, value: ["id": 4, "firstName": "Dee"]) }
        #expect(views.count == 4)
    }

    @Test func resultsOfProjectionsFilterAndSortByProjectedKeyPaths() throws {
        let realm = try people()
        let views = realm.objects(PersonView.self)
        #expect(views.where { $0.homeCity == "Bergen" }.map(\.name) == ["Cid"])
        #expect(views.where { $0.age > 25 }.map(\.name) == ["Ann", "Cid"])
        #expect(views.where { $0.name.starts(with: "B") }.map(\.name) == ["Bob"])
        #expect(views.sorted(by: \.age, ascending: false).map(\.name) == ["Cid", "Ann", "Bob"])
        #expect(views.sorted(by: \.name).map(\.age) == [30, 20, 40])
        // Predicate text and key-path strings name the root's properties, as in Realm.
        #expect(views.filter("firstName == %@", "Bob").map(\.age) == [20])
        // Bob has no address: a nil link on the way sorts last, as in realm-core.
        #expect(views.sorted(byKeyPath: "address.city").map(\.name) == ["Cid", "Ann", "Bob"])
        #expect(views.filter("age < 35").sorted(byKeyPath: "age").map(\.name) == ["Bob", "Ann"])
    }

    @Test func projectionsOfTheSameObjectAreEqual() throws {
        let realm = try people()
        let a = PersonView(projecting: ann(realm))
        let b = realm.objects(PersonView.self).first!
        #expect(a == b)
        #expect(Set([a, b]).count == 1)
        #expect(a != realm.objects(PersonView.self)[1])
    }

    @Test func projectedPropertiesOfSuperclassesAndDerivedValuesAreProjected() throws {
        let realm = try people()
        let view = DetailedPersonView(projecting: ann(realm))
        #expect(view.firstName == "Ann")
        #expect(view.nameLength == 3)
        #expect(view.description.contains("nameLength(\\.firstName) = 3;"))
        #expect(view.description.hasPrefix("DetailedPersonView<ProjectedPerson>"))
    }

    @Test func observingAProjectionReportsChangesOfProjectedPropertiesByTheirNames() throws {
        let realm = try people()
        let view = PersonView(projecting: ann(realm))
        let log = LockedBox<[String]>([])
        let token = view.observe { change in
            switch change {
            case .change(let projection, let properties):
                log.mutate { $0.append(properties.map { "\($0.name):\($0.oldValue ?? "nil")->\($0.newValue ?? "nil")" }
                    .joined(separator: ",") + " now \(projection.name)") }
            case .deleted: log.mutate { $0.append("deleted") }
            case .error: break
            }
        }
        try realm.write { ann(realm).lastName = "Kim" }
        try realm.write { ann(realm).firstName = "Anna" }
        try realm.write { ann(realm).nicknames.insert(ann(realm)) }  // not projected: no notification
        try realm.write { realm.delete(ann(realm)) }
        token.invalidate()
        // The Realm's own writes: no old values (Realm's rule for object changes).
        #expect(log.get() == ["lastNameCaps:nil->KIM now Ann", "name:nil->Anna now Anna", "deleted"])
    }

    @Test func observingAProjectionWithKeyPathsReportsOnlyThoseProperties() throws {
        let realm = try people()
        let view = PersonView(projecting: ann(realm))
        let byRootKeyPath = LockedBox<[String]>([])
        let byProjectedKeyPath = LockedBox<[String]>([])
        let first = view.observe(keyPaths: ["address.city"]) { change in
            if case .change(_, let properties) = change { byRootKeyPath.mutate { $0 += properties.map(\.name) } }
        }
        let second = view.observe(keyPaths: [\PersonView.age]) { change in
            if case .change(_, let properties) = change { byProjectedKeyPath.mutate { $0 += properties.map(\.name) } }
        }
        try realm.write { ann(realm).firstName = "Anna" }
        try realm.write { ann(realm).address?.city = "Tromsø" }
        try realm.write { ann(realm).age = 33 }
        first.invalidate()
        second.invalidate()
        #expect(byRootKeyPath.get() == ["homeCity"])
        #expect(byProjectedKeyPath.get() == ["age"])
    }

    @Test func observingAProjectionSeesACommitFromAnotherThread() throws {
        let realm = try people()
        let view = PersonView(projecting: ann(realm))
        let log = LockedBox<[String]>([])
        let token = view.observe(keyPaths: ["name", "friends.firstName"]) { change in
            if case .change(let projection, let properties) = change {
                log.mutate { $0.append("\(properties.map(\.name)) \(projection.name) \(Array(projection.friendNames))") }
            }
        }
        let configuration = realm.configuration
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write {
                other.object(ofType: ProjectedPerson.self, forPrimaryKey: 1)?.firstName = "Anne"
                other.object(ofType: ProjectedPerson.self, forPrimaryKey: 3)?.firstName = "Cyd"
            }
        }
        realm.refresh()
        token.invalidate()
        #expect(log.get() == ["[\"name\", \"friendNames\"] Anne [\"Bob\", \"Cyd\"]"])
    }

    @Test func observingResultsOfProjectionsReportsModificationsOfProjectedKeyPaths() throws {
        let realm = try people()
        let views = realm.objects(PersonView.self).sorted(by: \.age)
        let log = LockedBox<[String]>([])
        let token = views.observe(keyPaths: [\PersonView.name]) { change in
            switch change {
            case .initial(let views): log.mutate { $0.append("initial \(Array(views.map(\.name)))") }
            case .update(let views, let deletions, let insertions, let modifications):
                log.mutate { $0.append("\(Array(views.map(\.name))) d\(deletions) i\(insertions) m\(modifications)") }
            case .error: break
            }
        }
        realm.refresh()
        try realm.write { ann(realm).lastName = "Zed" }  // not observed
        try realm.write { ann(realm).firstName = "Anna" }
        token.invalidate()
        #expect(log.get() == ["initial [\"Bob\", \"Ann\", \"Cid\"]", "[\"Bob\", \"Anna\", \"Cid\"] d[] i[] m[1]"])
    }

    @Test func projectedCollectionsObserveTheirObjects() throws {
        let realm = try people()
        let names = PersonView(projecting: ann(realm)).friendNames
        let log = LockedBox<[String]>([])
        let token = names.observe(keyPaths: ["firstName"]) { change in
            switch change {
            case .initial(let names): log.mutate { $0.append("initial \(Array(names))") }
            case .update(let names, _, let insertions, let modifications):
                log.mutate { $0.append("\(Array(names)) i\(insertions) m\(modifications)") }
            case .error: break
            }
        }
        realm.refresh()
        try realm.write { realm.object(ofType: ProjectedPerson.self, forPrimaryKey: 2)?.firstName = "Rob" }
        try realm.write { ann(realm).friends.append(ann(realm)) }
        token.invalidate()
        #expect(log.get() == ["initial [\"Bob\", \"Cid\"]", "[\"Rob\", \"Cid\"] i[] m[0]", "[\"Rob\", \"Cid\", \"Ann\"] i[2] m[]"])
    }

    @Test func projectingAMutableSetGivesItsObjectsValues() throws {
        let realm = try people()
        final class NicknameView: Projection<ProjectedPerson> {
            @Projected(\ProjectedPerson.nicknames.projectTo.lastName) var names: ProjectedCollection<String>
        }
        try realm.write { ann(realm).nicknames.insert(realm.object(ofType: ProjectedPerson.self, forPrimaryKey: 2)!) }
        #expect(Array(NicknameView(projecting: ann(realm)).names) == ["Ray"])
    }

    @Test func frozenProjectionsKeepTheirValuesAndThaw() throws {
        let realm = try people()
        let view = PersonView(projecting: ann(realm))
        let frozen = view.freeze()
        #expect(frozen.isFrozen)
        #expect(!view.isFrozen)
        try realm.write { ann(realm).firstName = "Anna" }
        #expect(frozen.name == "Ann")
        #expect(Array(frozen.friendNames.freeze()) == ["Bob", "Cid"])
        let shared = Frozen(frozen)
        let read = try onOtherThread { shared.value.name }  // frozen projections cross threads
        #expect(read == "Ann")
        let thawed = frozen.thaw()
        #expect(thawed?.name == "Anna")
        #expect(thawed?.isFrozen == false)
        let frozenResults = realm.objects(PersonView.self).freeze()
        try realm.write { realm.delete(ann(realm)) }
        #expect(frozenResults.count == 3)
        #expect(frozen.thaw() == nil)
    }

    @Test func aProjectionCrossesThreadsThroughAThreadSafeReference() throws {
        let realm = try people()
        let reference = ThreadSafeReference(to: PersonView(projecting: ann(realm)))
        let configuration = realm.configuration
        let name = try onOtherThread {
            let other = try Realm(configuration: configuration)
            return other.resolve(reference)?.name
        }
        #expect(name == "Ann")
    }

    @Test func resultsOfProjectionsAreSectionedByProjectedKeyPaths() throws {
        let realm = try people()
        try realm.write { realm.create(ProjectedPerson.self, value: ["id": 4, "firstName": "Dee", "age": 30]) }
        let sections = realm.objects(PersonView.self).sectioned(by: \.age, ascending: false)
        #expect(sections.allKeys == [40, 30, 20])
        #expect(sections[1].map(\.name).sorted() == ["Ann", "Dee"])
        let byInitial = realm.objects(PersonView.self).sectioned(by: { String($0.name.prefix(1)) },
                                                                 sortDescriptors: [SortDescriptor(keyPath: "firstName")])
        #expect(byInitial.allKeys == ["A", "B", "C", "D"])
        let described = realm.objects(PersonView.self).sectioned(by: \.name,
                                                                 sortDescriptors: [SortDescriptor(keyPath: "firstName")])
        #expect(described.count == 4)
    }

    @Test func observingAProjectionOnAQueueDeliversThere() throws {
        let realm = try people()
        let view = PersonView(projecting: ann(realm))
        let queue = DispatchQueue(label: "projection-observer")
        let log = LockedBox<[String]>([])
        let token = view.observe(keyPaths: ["name"], on: queue) { change in
            if case .change(let projection, let properties) = change {
                log.mutate { $0.append("\(properties.map(\.name)) \(projection.name) \(projection.realm != nil)") }
            }
        }
        try realm.write { ann(realm).firstName = "Anna" }
        for _ in 0..<500 where log.get().isEmpty { usleep(10_000) }
        queue.sync {}
        token.invalidate()
        #expect(log.get() == ["[\"name\"] Anna true"])
    }

    @Test func observingAProjectionOnAnActorDeliversInsideTheActor() async throws {
        let realm = try people()
        let view = PersonView(projecting: ann(realm))
        let inbox = LockedBox<[String]>([])
        let watcher = ProjectionWatcher()
        let token = await view.observe(keyPaths: [\PersonView.homeCity], on: watcher) { watcher, change in
            watcher.assertIsolated()
            if case .change(let projection, let properties) = change {
                inbox.mutate { $0.append("\(properties.map { "\($0.name)=\($0.newValue ?? "nil")" }) \(projection.name)") }
            }
        }
        let configuration = realm.configuration
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.object(ofType: ProjectedPerson.self, forPrimaryKey: 1)?.address?.city = "Tromsø" }
        }
        for _ in 0..<500 where inbox.get().isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        token.invalidate()
        #expect(inbox.get() == ["[\"homeCity=Tromsø\"] Ann"])
    }

    @Test func aProjectionOfADerivedValueTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = BrokenView(projecting: ProjectedPerson())
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("@Projected property 'text' must be a part of Realm object"))
    }

    @Test func settingAComputedProjectedPropertyTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Writable: Projection<ProjectedPerson> {
                @Projected(\ProjectedPerson.lastName.localizedUppercase) var caps
            }
            let view = Writable(projecting: ProjectedPerson())
            view.setValueThroughKeyPath(\.caps, "X")
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("KeyPath is not writable"))
    }

    @Test func writingAProjectedPropertyOutsideAWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseTests.freshRealm()
            let dog = Dog()
            try? realm.write { realm.add(dog) }
            final class DogView: Projection<Dog> { @Projected(\Dog.name) var name }
            DogView(projecting: dog).name = "x"
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Attempting to modify object outside of a write transaction"))
    }

    @Test func observingAProjectionWithAnUnknownKeyPathTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseTests.freshRealm()
            let dog = Dog()
            try? realm.write { realm.add(dog) }
            final class DogView: Projection<Dog> { @Projected(\Dog.name) var name }
            _ = DogView(projecting: dog).observe(keyPaths: ["age"]) { _ in }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Property 'age' is not a projected property"))
    }

    @Test func observingAProjectionOfAnUnmanagedObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class DogView: Projection<Dog> { @Projected(\Dog.name) var name }
            _ = DogView(projecting: Dog()).observe { _ in }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Only objects which are managed by a Realm support change notifications"))
    }
}

extension ProjectionObservable {
    /// Sets a projected property through a writable key path of the projection (the setter of
    /// `@Projected` runs whatever the property's key path is).
    func setValueThroughKeyPath<V>(_ keyPath: ReferenceWritableKeyPath<Self, V>, _ value: V) {
        self[keyPath: keyPath] = value
    }
}

/// An actor that receives projection notifications.
actor ProjectionWatcher {}

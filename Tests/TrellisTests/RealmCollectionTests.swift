import Foundation
import Testing
@testable import Trellis

/// One generic body, run over `Results`, `List`, `MutableSet`, `LinkingObjects` and
/// `AnyRealmCollection` holding the same pets: the `RealmCollection` contract behaves the same
/// for all five.
@Suite struct RealmCollectionTests {
    enum Kind: String, CaseIterable, Sendable {
        case results, list, mutableSet, linkingObjects, anyRealmCollection
    }

    let folder = TemporaryFolder()

    /// Pets aged 1...5 ("p1"..."p5"), owned (in `dogs`, `dogSet`, and as `dog` of one owner each)
    /// by one owner; plus an owner "other" with no pets.
    func realmWithPets() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
        try realm.write {
            let owner = realm.create(Owner.self, value: ["name": "owner"])
            let target = realm.create(Pet.self, value: ["name": "target", "age": 99])
            for age in 1...5 {
                let pet = realm.create(Pet.self, value: ["name": "p\(age)", "age": age])
                owner.dogs.append(pet)
                owner.dogSet.insert(pet)
                // Each pet-like origin links to `target`: LinkingObjects of target hold them.
                realm.create(Owner.self, value: ["name": "p\(age)", "age": age, "dog": target])
            }
            realm.create(Owner.self, value: ["name": "other"])
        }
        return realm
    }

    /// Calls `body` with the collection of `kind`. For LinkingObjects the elements are owners
    /// named and aged like the pets, so the generic body reads `name` and `age` by key path.
    func withCollection(_ kind: Kind, _ realm: Realm, _ body: (any RealmCollectionUnderTest) throws -> Void) throws {
        let owner = try #require(realm.objects(Owner.self).filter("name == 'owner'").first)
        switch kind {
        case .results: try body(realm.objects(Pet.self).filter("age < 10"))
        case .list: try body(owner.dogs)
        case .mutableSet: try body(owner.dogSet)
        case .linkingObjects:
            let target = try #require(realm.objects(Pet.self).filter("name == 'target'").first)
            try body(target.owners)
        case .anyRealmCollection: try body(AnyRealmCollection(owner.dogs))
        }
    }

    @Test(arguments: Kind.allCases)
    func countsFiltersSortsAndAggregatesTheSameWay(kind: Kind) throws {
        let realm = try realmWithPets()
        try withCollection(kind, realm) { collection in try collection.checkContract(realm) }
    }

    @Test func resultsPassedWhereAnyRealmCollectionIsExpectedStaysLive() throws {
        let realm = try realmWithPets()
        let model = PetsViewModel(AnyRealmCollection(realm.objects(Pet.self)))
        #expect(model.pets.count == 6)
        try realm.write { realm.create(Pet.self, value: ["name": "new", "age": 7]) }
        #expect(model.pets.count == 7)
        #expect(model.pets.filter("age > 5").count == 2)
        model.pets = AnyRealmCollection(realm.objects(Owner.self).first!.dogs)
        #expect(model.pets.count == 5)
    }

    @Test func valueForKeyGivesOneValuePerElementAndSetValueWritesEach() throws {
        let realm = try realmWithPets()
        let owner = try #require(realm.objects(Owner.self).filter("name == 'owner'").first)
        #expect(owner.dogs.value(forKey: "name") as? [String] == ["p1", "p2", "p3", "p4", "p5"])
        #expect(owner.value(forKey: "name") as? String == "owner")
        #expect(owner.value(forKeyPath: "dogs.age") as? [Int] == [1, 2, 3, 4, 5])
        try realm.write {
            owner.dogs.setValue(10, forKey: "age")
            owner.setValue("renamed", forKey: "name")
        }
        #expect(owner.dogs.map(\.age) == [10, 10, 10, 10, 10])
        #expect(owner.name == "renamed")
        try realm.write {
            owner.nicknames.setValue("Rex", forKey: "first")
            owner.nicknames.setValue("Max", forKey: "second")
            owner.nicknames.setValue(nil, forKey: "second")
        }
        #expect(owner.nicknames.value(forKey: "first") as? String == "Rex")
        #expect(owner.nicknames.count == 1)
    }

    @Test func objectsAtIndexesAndIndexOutOfBoundsMessage() throws {
        let realm = try realmWithPets()
        let pets = realm.objects(Pet.self).sorted(byKeyPath: "age")
        #expect(pets.objects(at: IndexSet([0, 2])).map(\.age) == [1, 3])
    }
}

/// The generic body: written only against `RealmCollection`, as library code would be.
protocol RealmCollectionUnderTest {
    func checkContract(_ realm: Realm) throws
}

extension RealmCollectionUnderTest where Self: RealmCollection, Element: ObjectBase {
    func checkContract(_ realm: Realm) throws {
        #expect(count == 5)
        #expect(self.realm == realm)
        #expect(!isInvalidated)
        #expect(!isFrozen)
        #expect(filter("age > 2").count == 3)
        #expect(self.where { _ in Query<Bool>(.predicate(.constant(true), subquery: nil)) }.count == 5)
        let ages: [Int] = sorted(byKeyPath: "age", ascending: false).map { $0["age"] as? Int ?? -1 }
        #expect(ages == [5, 4, 3, 2, 1])
        #expect(sorted(by: [SortDescriptor(keyPath: "age")]).first?["name"] as? String == "p1")
        #expect(distinct(by: ["age"]).count == 5)
        let minimum: Int? = min(ofProperty: "age")
        let maximum: Int? = max(ofProperty: "age")
        let total: Int = sum(ofProperty: "age")
        let mean: Double? = average(ofProperty: "age")
        #expect(minimum == 1 && maximum == 5 && total == 15 && mean == 3)
        let third = try #require(filter("age == 3").first)
        if !(self is MutableSet<Element>) {  // a set has no positions: Realm traps there
            #expect(index(of: third) != nil)
            #expect(index(matching: "age == 3") != nil)
        }
        #expect((value(forKey: "age") as? [Any])?.count == 5)
        let frozen = freeze()
        #expect(frozen.isFrozen && frozen.count == 5)
        #expect(frozen.thaw()?.count == 5)
        var deliveries = 0
        let token = observe(keyPaths: nil, on: nil) { _ in deliveries += 1 }
        realm.refresh()
        token.invalidate()
        #expect(count == 5)
        _ = deliveries
    }
}

extension Results: RealmCollectionUnderTest where Element: ObjectBase {}
extension List: RealmCollectionUnderTest where Element: ObjectBase {}
extension MutableSet: RealmCollectionUnderTest where Element: ObjectBase {}
extension LinkingObjects: RealmCollectionUnderTest {}
extension AnyRealmCollection: RealmCollectionUnderTest where Element: ObjectBase {}

/// A view model holding any collection of pets, as apps do.
final class PetsViewModel {
    var pets: AnyRealmCollection<Pet>
    init(_ pets: AnyRealmCollection<Pet>) { self.pets = pets }
}

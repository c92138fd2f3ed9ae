import Foundation
import Testing
@testable import Trellis

/// Queries evaluated over the relationship model: to-one, List, MutableSet, Map, embedded
/// objects and LinkingObjects.
@Suite struct QueryEvaluationTests {
    let folder = TemporaryFolder()

    /// Alice (30) has Rex (5) and Fido (12); Bob (45) has Fido; Carol (60) has none.
    /// Alice's child is Dave (8), Bob's children are Dave and Erin (10).
    func fixture() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
        try realm.write {
            let rex = Pet("Rex", age: 5), fido = Pet("Fido", age: 12), spot = Pet("Spot", age: 1)
            let alice = Owner("Alice", age: 30), bob = Owner("Bob", age: 45), carol = Owner("Carol", age: 60)
            let dave = Owner("Dave", age: 8), erin = Owner("Erin", age: 10)
            alice.dog = rex
            bob.dog = fido
            alice.dogs.append(objectsIn: [rex, fido])
            bob.dogs.append(fido)
            alice.dogSet.insert(rex)
            alice.dogMap["best"] = rex
            bob.dogMap["best"] = fido
            alice.children.append(dave)
            bob.children.append(objectsIn: [dave, erin])
            alice.tags.append(objectsIn: ["brave", "Kind"])
            bob.tags.append("Café")
            alice.scores.insert(objectsIn: [1, 5, 9])
            bob.scores.insert(3)
            alice.nicknames["short"] = "Al"
            realm.add([alice, bob, carol, dave, erin, spot])
        }
        return realm
    }

    /// The names of the matches, sorted (key order depends on how the graph was added).
    func names(_ results: Results<Owner>) -> [String] { results.map(\.name).sorted() }
    func names(_ results: Results<Pet>) -> [String] { results.map(\.name).sorted() }
    /// The names in the results' own order.
    func ordered(_ results: Results<Owner>) -> [String] { results.map(\.name) }
    func ordered(_ results: Results<Pet>) -> [String] { results.map(\.name) }

    @Test func comparesScalarProperties() throws {
        let realm = try fixture()
        let owners = realm.objects(Owner.self)
        #expect(names(owners.filter("age > 40")) == ["Bob", "Carol"])
        #expect(names(owners.filter("age >= 45 AND age < 60")) == ["Bob"])
        #expect(names(owners.filter("age = 8 OR name == 'Erin'")) == ["Dave", "Erin"])
        #expect(names(owners.filter("NOT (age > 9)")) == ["Dave"])
        #expect(names(owners.filter("age BETWEEN {10, 30}")) == ["Alice", "Erin"])
        #expect(names(owners.filter("age IN {8, 60}")) == ["Carol", "Dave"])
        #expect(names(owners.filter("age IN %@", [8, 60])) == ["Carol", "Dave"])
        #expect(names(owners.filter("age > %@ && name != %@", 20, "Bob")) == ["Alice", "Carol"])
        #expect(owners.filter("TRUEPREDICATE").count == 5)
        #expect(owners.filter("FALSEPREDICATE").count == 0)
        #expect(names(owners.filter("%K == %@", "name", "Carol")) == ["Carol"])
        #expect(names(owners.filter("$0 < age AND age < $1", 40, 50)) == ["Bob"])
    }

    @Test func comparesStringsWithOptions() throws {
        let realm = try fixture()
        let owners = realm.objects(Owner.self)
        #expect(names(owners.filter("name BEGINSWITH 'A'")) == ["Alice"])
        #expect(names(owners.filter("name BEGINSWITH[c] 'a'")) == ["Alice"])
        #expect(names(owners.filter("name ENDSWITH 'e'")) == ["Alice", "Dave"])
        #expect(names(owners.filter("name CONTAINS[c] 'R'")) == ["Carol", "Erin"])
        #expect(names(owners.filter("name LIKE '?a*'")) == ["Carol", "Dave"])
        #expect(names(owners.filter("name ==[c] 'BOB'")) == ["Bob"])
        #expect(names(owners.filter("ANY tags ==[cd] 'cafe'")) == ["Bob"])
        #expect(names(owners.filter("name < 'C'")) == ["Alice", "Bob"])
    }

    @Test func followsToOneLinks() throws {
        let realm = try fixture()
        let owners = realm.objects(Owner.self)
        #expect(names(owners.filter("dog.age > 10")) == ["Bob"])
        #expect(names(owners.filter("dog.name == 'Rex'")) == ["Alice"])
        #expect(names(owners.filter("dog == nil")) == ["Carol", "Dave", "Erin"])
        let rex = realm.objects(Pet.self).filter("name == 'Rex'")[0]
        #expect(names(owners.filter("dog == %@", rex)) == ["Alice"])
        #expect(names(owners.filter("dog != %@", rex)) == ["Bob", "Carol", "Dave", "Erin"])
        #expect(owners.filter("dog == %@", Pet("Rex")).count == 0)
        #expect(owners.filter("dog != %@", Pet("Rex")).count == 5)
    }

    @Test func quantifiesOverListsSetsAndMaps() throws {
        let realm = try fixture()
        let owners = realm.objects(Owner.self)
        #expect(names(owners.filter("ANY dogs.age > 10")) == ["Alice", "Bob"])
        #expect(names(owners.filter("ALL dogs.age > 10")) == ["Bob", "Carol", "Dave", "Erin"])
        #expect(names(owners.filter("NONE dogs.age > 10")) == ["Carol", "Dave", "Erin"])
        #expect(names(owners.filter("SOME dogSet.name == 'Rex'")) == ["Alice"])
        #expect(names(owners.filter("ANY scores > 8")) == ["Alice"])
        #expect(names(owners.filter("ANY tags == 'brave'")) == ["Alice"])
        #expect(names(owners.filter("'brave' IN tags")) == ["Alice"])
        #expect(names(owners.filter("nicknames['short'] == 'Al'")) == ["Alice"])
        #expect(names(owners.filter("ANY nicknames.@allKeys BEGINSWITH 'sh'")) == ["Alice"])
        #expect(names(owners.filter("ANY nicknames.@allValues == 'Al'")) == ["Alice"])
        let fido = realm.objects(Pet.self).filter("name == 'Fido'")[0]
        #expect(names(owners.filter("ANY dogs == %@", fido)) == ["Alice", "Bob"])
        #expect(names(owners.filter("%@ IN dogs", fido)) == ["Alice", "Bob"])
        #expect(names(owners.filter("ANY dogMap.@allValues == %@", fido)) == ["Bob"])
        #expect(names(owners.filter("dogMap['best'] == %@", fido)) == ["Bob"])
    }

    @Test func countsAndAggregatesCollections() throws {
        let realm = try fixture()
        let owners = realm.objects(Owner.self)
        #expect(names(owners.filter("dogs.@count == 2")) == ["Alice"])
        #expect(names(owners.filter("dogs.@size > 0")) == ["Alice", "Bob"])
        #expect(names(owners.filter("dogs.@avg.age > 8")) == ["Alice", "Bob"])
        #expect(names(owners.filter("dogs.@sum.age == 17")) == ["Alice"])
        #expect(names(owners.filter("dogs.@min.age == 12")) == ["Bob"])
        #expect(names(owners.filter("dogs.@max.age == 12")) == ["Alice", "Bob"])
        #expect(names(owners.filter("scores.@sum == 15")) == ["Alice"])
        #expect(names(owners.filter("scores.@count == 1")) == ["Bob"])
        #expect(names(owners.filter("nicknames.@count == 1")) == ["Alice"])
        #expect(names(owners.filter("SUBQUERY(dogs, $d, $d.age > 4 AND $d.name BEGINSWITH 'R').@count == 1")) == ["Alice"])
        #expect(names(owners.filter("SUBQUERY(children, $c, SUBQUERY($c.parents, $p, $p.age > 40).@count > 0).@count == 2")) == ["Bob"])
    }

    @Test func queriesThroughLinkingObjectsAndLinks() throws {
        let realm = try fixture()
        let pets = realm.objects(Pet.self)
        #expect(names(pets.filter("ANY owners.name == 'Alice'")) == ["Rex"])
        #expect(names(pets.filter("listOwners.@count == 2")) == ["Fido"])
        #expect(names(pets.filter("listOwners.@count == 0")) == ["Spot"])
        #expect(names(pets.filter("ANY listOwners.age > 40")) == ["Fido"])
        #expect(names(pets.filter("@links.Owner.dogs.@count == 1")) == ["Rex"])
        #expect(names(pets.filter("ANY @links.Owner.dogSet.name == 'Alice'")) == ["Rex"])
        #expect(names(pets.filter("@links.@count == 0")) == ["Spot"])
        // Rex: Alice.dog, .dogs, .dogSet, .dogMap; Fido: Bob.dog, Alice.dogs, Bob.dogs, Bob.dogMap.
        #expect(names(pets.filter("@links.@count == 4")) == ["Fido", "Rex"])
        #expect(names(pets.filter("@links.@count == 0")) == ["Spot"])
        let owners = realm.objects(Owner.self)
        #expect(names(owners.filter("ANY parents.name == 'Bob'")) == ["Dave", "Erin"])
        #expect(names(owners.filter("ANY children.parents.name == 'Alice'")) == ["Alice", "Bob"])
        #expect(names(owners.filter("parents.@count == 0")) == ["Alice", "Bob", "Carol"])
        #expect(names(owners.filter("SUBQUERY(parents, $p, $p.age > 40).@count > 0")) == ["Dave", "Erin"])
    }

    @Test func queriesEmbeddedObjects() throws {
        let realm = try Realm(configuration: folder.configuration([Parent.self, Child.self, Grandchild.self, Pet.self, Owner.self]))
        try realm.write {
            let a = Parent(), b = Parent()
            a.pk = 1
            b.pk = 2
            a.child = Child(3)
            a.child?.grandchild = Grandchild()
            a.child?.grandchild?.value = 7
            b.children.append(objectsIn: [Child(1), Child(9)])
            realm.add([a, b])
        }
        let parents = realm.objects(Parent.self)
        #expect(parents.filter("child.value == 3").map(\.pk) == [1])
        #expect(parents.filter("child.grandchild.value == 7").map(\.pk) == [1])
        #expect(parents.filter("ANY children.value > 5").map(\.pk) == [2])
        #expect(parents.filter("children.@sum.value == 10").map(\.pk) == [2])
    }

    @Test func primaryKeyEqualityUsesTheIndexAndGivesTheSameAnswer() throws {
        let realm = try Realm(configuration: folder.configuration([Parent.self, Child.self, Grandchild.self, Pet.self, Owner.self]))
        try realm.write {
            for pk in 0..<50 {
                let parent = Parent()
                parent.pk = pk
                parent.child = Child(pk % 7)
                realm.add(parent)
            }
        }
        let parents = realm.objects(Parent.self)
        let pipeline = ResultsPipeline(core: realm.core, table: try #require(parents.table))
        let filter = parents.filter("pk IN {3, 4, 99} AND child.value > 3")
        #expect(pipeline.indexedCandidates(filter.steps)?.count == 2)
        #expect(filter.map(\.pk) == [4])
        #expect(parents.filter("pk == 10").map(\.pk) == [10])
        #expect(parents.filter("pk == 10 OR pk == 11").map(\.pk) == [10, 11])
    }

    @Test func resultsAreLiveAndChain() throws {
        let realm = try fixture()
        let old = realm.objects(Owner.self).filter("age > 40")
        #expect(old.count == 2)
        try realm.write { realm.add(Owner("Zed", age: 99)) }
        #expect(old.count == 3)
        #expect(names(old.filter("name BEGINSWITH 'Z'")) == ["Zed"])
        try realm.write { realm.delete(old.filter("name == 'Zed'")) }
        #expect(old.count == 2)
    }

    @Test func scopedCollectionQueries() throws {
        let realm = try fixture()
        let alice = realm.objects(Owner.self).filter("name == 'Alice'")[0]
        #expect(names(alice.dogs.filter("age > 10")) == ["Fido"])
        #expect(names(alice.dogSet.filter("age < 10")) == ["Rex"])
        let fido = realm.objects(Pet.self).filter("name == 'Fido'")[0]
        #expect(names(fido.listOwners.filter("age > 40")) == ["Bob"])
        #expect(ordered(alice.dogs.sorted(byKeyPath: "age", ascending: false)) == ["Fido", "Rex"])
        #expect(alice.dogs.sum(ofProperty: "age") == 17)
        #expect(alice.dogs.index(matching: "age > 10") == 1)
        #expect(alice.dogs.index(matching: { $0.name == "Rex" }) == 0)
        let live = alice.dogs.filter("age > 1")
        try realm.write { alice.dogs.append(realm.objects(Pet.self).filter("name == 'Spot'")[0]) }
        #expect(live.count == 2)
        try realm.write { alice.dogs[2].age = 3 }
        #expect(ordered(live) == ["Rex", "Fido", "Spot"])
    }

    @Test func sortsAndDistinct() throws {
        let realm = try fixture()
        let owners = realm.objects(Owner.self)
        #expect(ordered(owners.sorted(byKeyPath: "age", ascending: false)) == ["Carol", "Bob", "Alice", "Erin", "Dave"])
        // Owners without a dog (a nil link on the way) sort last, first when descending, as in
        // realm-core; ties keep the earlier order.
        let byDogAge = ordered(owners.sorted(byKeyPath: "dog.age"))
        #expect(Array(byDogAge.prefix(2)) == ["Alice", "Bob"])
        #expect(Array(byDogAge.suffix(3)) == ordered(owners).filter { ["Carol", "Dave", "Erin"].contains($0) })
        #expect(ordered(owners.sorted(by: [SortDescriptor(keyPath: "dog.name", ascending: false), "name"]))
            == ["Carol", "Dave", "Erin", "Alice", "Bob"])
        #expect(ordered(owners.sorted(by: \.name).filter("age > 20")) == ["Alice", "Bob", "Carol"])
        let distinct = ordered(owners.distinct(by: ["dog"]))
        #expect(distinct.count == 3 && distinct.contains("Alice") && distinct.contains("Bob"))
    }

    @Test func aggregatesProperties() throws {
        let realm = try fixture()
        let owners = realm.objects(Owner.self)
        #expect(owners.min(ofProperty: "age") == 8)
        #expect(owners.max(ofProperty: "age") == 60)
        #expect(owners.sum(ofProperty: "age") == 153)
        #expect(owners.average(ofProperty: "age") == 30.6)
        #expect(owners.filter("age > 100").average(ofProperty: "age") as Double? == nil)
        #expect(owners.filter("age > 100").sum(ofProperty: "age") == 0)
        #expect(owners.max(of: \.age) == 60)
        let order = owners.map(\.name)
        #expect(owners.index(matching: "name == 'Carol'") == order.firstIndex(of: "Carol"))
        #expect(owners.index(matching: { $0.name == "Erin" }) == order.firstIndex(of: "Erin"))
        #expect(owners.index(matching: "name == 'Nobody'") == nil)
    }
}

import Foundation
import Testing
@testable import Trellis

// `Realm.add` reuses the add session the Realm values keep (`RealmSpares`), emptied between
// adds: nothing one add learnt (the objects it stored, by identity; its update policy) may
// leak into the next, whose new objects can sit at the addresses of dropped ones.

@Suite struct AddSessionReuseTests {
    let folder = TemporaryFolder()

    private func realm() throws -> Realm {
        try Realm(configuration: folder.configuration([LookupPet.self, LookupToy.self, LookupStatefulPet.self]))
    }

    @Test func objectsAddedOneByOneAndDroppedAreEachStored() throws {
        let realm = try realm()
        try realm.write {
            for id in 0..<300 {
                // Dropped at once: the next object is often made at the same address.
                realm.add(LookupPet(value: ["id": id, "name": "pet \(id)", "age": id % 7]))
            }
        }
        let pets = realm.objects(LookupPet.self)
        #expect(pets.count == 300)
        #expect(Set(pets.map(\.id)) == Set(0..<300))
        #expect(pets.allSatisfy { $0.name == "pet \($0.id)" })
    }

    @Test func graphsAddedOneAfterAnotherAreEachStoredWhole() throws {
        let realm = try realm()
        try realm.write {
            for id in 0..<40 {
                // Each add stores a pet and its toys (more than the session keeps inline).
                let pet = LookupPet(value: ["id": id, "name": "pet \(id)"])
                for toy in 0..<20 { pet.toys.append(LookupToy(value: ["label": "toy \(id).\(toy)", "weight": toy])) }
                realm.add(pet)
            }
        }
        #expect(realm.objects(LookupToy.self).count == 800)
        for id in [0, 17, 39] {
            let pet = try #require(realm.object(ofType: LookupPet.self, forPrimaryKey: id))
            #expect(pet.toys.map(\.label) == (0..<20).map { "toy \(id).\($0)" })
        }
    }

    @Test func eachAddUsesItsOwnUpdatePolicy() throws {
        let realm = try realm()
        try realm.write {
            realm.add(LookupPet(value: ["id": 1, "name": "first", "age": 1]))
            realm.add(LookupPet(value: ["id": 1, "name": "updated", "age": 2]), update: .modified)
            realm.add(LookupPet(value: ["id": 2, "name": "second"]))
            realm.add(LookupPet(value: ["id": 2, "name": "all"]), update: .all)
            realm.create(LookupPet.self, value: ["id": 3, "name": "created"])
            realm.add(LookupPet(value: ["id": 4, "name": "fourth"]))
        }
        #expect(realm.object(ofType: LookupPet.self, forPrimaryKey: 1)?.name == "updated")
        #expect(realm.object(ofType: LookupPet.self, forPrimaryKey: 1)?.age == 2)
        #expect(realm.object(ofType: LookupPet.self, forPrimaryKey: 2)?.name == "all")
        #expect(realm.objects(LookupPet.self).count == 4)
    }

    @Test func anObjectAddedEarlierIsLinkedNotAddedAgain() throws {
        let realm = try realm()
        let toy = LookupToy(value: ["label": "ball", "weight": 3])
        try realm.write {
            realm.add(toy)
            let pet = LookupPet(value: ["id": 9, "name": "nine"])
            pet.toys.append(toy)
            pet.toys.append(toy)
            realm.add(pet)
        }
        #expect(realm.objects(LookupToy.self).count == 1)
        #expect(realm.object(ofType: LookupPet.self, forPrimaryKey: 9)?.toys.map(\.label) == ["ball", "ball"])
    }

    @Test func realmValuesShareOneSpareSession() throws {
        let realm = try realm()
        let again = try Realm(configuration: folder.configuration([LookupPet.self, LookupToy.self, LookupStatefulPet.self]))
        try realm.write {
            realm.add(LookupPet(value: ["id": 1]))
            again.add(LookupPet(value: ["id": 2]))
            realm.add(LookupPet(value: ["id": 3]))
        }
        #expect(realm.objects(LookupPet.self).map(\.id).sorted() == [1, 2, 3])
        #expect(realm.spares === again.spares)
    }
}

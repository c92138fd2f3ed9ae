import Foundation
import Testing
@testable import Trellis

/// Realm takes any sequence of objects for a `List` or `MutableSet` property: a `Results`, a
/// `LinkingObjects`, a Swift `Set`, through `setValue(_:forKey:)`, subscripts and initializer
/// values (realm-swift's `ObjectCreationTests` and its docs' batch update assign a `Results`).
@Suite struct CollectionAssignmentTests {
    let folder = TemporaryFolder()

    func openWithPets() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
        try realm.write {
            for (name, age) in [("Rex", 3), ("Fido", 7), ("Spot", 9)] { realm.add(Pet(name, age: age)) }
        }
        return realm
    }

    @Test func resultsAssignedToAListBySetValueReplaceItsElements() throws {
        try onOtherThread {
            let realm = try openWithPets()
            let old = realm.objects(Pet.self).filter("age > 5").sorted(byKeyPath: "age")
            try realm.write {
                let owner = realm.create(Owner.self, value: ["name": "Ana"])
                owner.setValue(old, forKey: "dogs")
                owner.setValue(realm.objects(Pet.self), forKey: "dogSet")
                #expect(Array(owner.dogs.map(\.name)) == ["Fido", "Spot"])
                #expect(owner.dogSet.count == 3)
                // The live Results of the list itself: read before the list changes.
                owner["dogs"] = owner.dogs.filter("age > 8")
                #expect(Array(owner.dogs.map(\.name)) == ["Spot"])
            }
            #expect(realm.objects(Pet.self).count == 3)
            #expect(realm._consistencyProblems().isEmpty)
        }
    }

    @Test func resultsInInitializerValuesAndCreateFillTheList() throws {
        try onOtherThread {
            let realm = try openWithPets()
            let pets = realm.objects(Pet.self).sorted(byKeyPath: "name")
            let unmanaged = Owner(value: ["name": "Bo", "dogs": pets, "dogSet": pets.filter("age < 5")])
            #expect(Array(unmanaged.dogs.map(\.name)) == ["Fido", "Rex", "Spot"])
            #expect(Array(unmanaged.dogSet.map(\.name)) == ["Rex"])
            try realm.write {
                realm.add(unmanaged)
                let created = realm.create(Owner.self, value: ["name": "Cy", "dogs": pets])
                #expect(created.dogs.count == 3)
            }
            #expect(realm.objects(Pet.self).count == 3)  // the same pets, linked, not copied
            #expect(realm.objects(Pet.self).first?.listOwners.count == 2)
        }
    }

    @Test func linkingObjectsAndSwiftSetsAreSequencesToo() throws {
        try onOtherThread {
            let realm = try openWithPets()
            let rex = try #require(realm.objects(Pet.self).filter("name == 'Rex'").first)
            try realm.write {
                let first = realm.create(Owner.self, value: ["name": "A", "dogs": [rex]])
                let second = realm.create(Owner.self, value: ["name": "B"])
                second.setValue(rex.listOwners, forKey: "children")
                second.setValue(Set([rex]), forKey: "dogSet")
                #expect(second.children.first?.name == "A")
                #expect(second.dogSet.first?.name == "Rex")
                #expect(first.dogs.count == 1)
                second.setValue(["x", "y"] as Set<String>, forKey: "tags")
                #expect(Set(second.tags) == ["x", "y"])
            }
        }
    }
}

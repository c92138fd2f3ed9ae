import Foundation
import Testing
@testable import Trellis

/// `realm.delete(_:)` of a list, `Results` or array: an object that an earlier element
/// already deleted is skipped, as in Realm, instead of trapping.
@Suite struct DeletingSequencesTests {
    let folder = TemporaryFolder()

    /// An owner whose `dogs` list holds `p` twice, then `q`.
    func ownerWithADuplicate(_ realm: Realm) throws -> Owner {
        try realm.write {
            let owner = realm.create(Owner.self, value: ["name": "o"])
            let pet = realm.create(Pet.self, value: ["name": "p"])
            owner.dogs.append(objectsIn: [pet, pet, realm.create(Pet.self, value: ["name": "q"])])
            return owner
        }
    }

    @Test func deletingAListThatHoldsAnObjectTwiceDeletesItOnce() throws {
        let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
        let owner = try ownerWithADuplicate(realm)
        try realm.write { realm.delete(owner.dogs) }
        #expect(realm.objects(Pet.self).isEmpty)
        #expect(owner.dogs.isEmpty)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func deletingResultsOrAnArrayWithDuplicatesDeletesEachObjectOnce() throws {
        let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
        let owner = try ownerWithADuplicate(realm)
        // Results of the list (its elements, duplicates included, in list order).
        try realm.write { realm.delete(owner.dogs.filter("name == 'p'")) }
        #expect(realm.objects(Pet.self).map(\.name) == ["q"])
        #expect(owner.dogs.map(\.name) == ["q"])

        // An array holding one object twice: the same accessor, and a second accessor of it.
        let pets = try realm.write { [realm.create(Pet.self, value: ["name": "r"])] }
        let again = try #require(realm.objects(Pet.self).filter("name == 'r'").first)
        try realm.write { realm.delete(pets + pets + [again]) }
        #expect(realm.objects(Pet.self).map(\.name) == ["q"])

        // Results sorted, over a list holding everything twice.
        try realm.write { owner.dogs.append(objectsIn: Array(owner.dogs) + Array(owner.dogs)) }
        try realm.write { realm.delete(owner.dogs.sorted(byKeyPath: "name")) }
        #expect(realm.objects(Pet.self).isEmpty)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func deletingAParentBeforeItsEmbeddedObjectsDeletesThemOnce() throws {
        let realm = try Realm(configuration: folder.configuration([Parent.self, Child.self, Grandchild.self, Pet.self,
                                                                   Owner.self]))
        let parent = try realm.write {
            realm.create(Parent.self, value: ["pk": 1, "child": ["value": 1], "children": [["value": 2], ["value": 3]]])
        }
        let embedded: [ObjectBase] = Array(parent.children) + [parent.child].compactMap { $0 }
        // The parent's deletion cascades to its embedded objects, which come after it.
        try realm.write { realm.delete([parent] + embedded) }
        #expect(realm.objects(Parent.self).isEmpty)
        #expect(realm._consistencyProblems().isEmpty)
    }
}

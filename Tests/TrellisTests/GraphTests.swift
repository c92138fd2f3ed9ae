import Foundation
import Testing
@testable import Trellis

/// `add` and `create` of whole object graphs through every kind of relationship.
@Suite struct GraphTests {
    let folder = TemporaryFolder()

    @Test func addTakesTheWholeGraphThroughEveryRelationshipOnce() throws {
        let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
        let shared = Pet("shared")
        let owner = Owner("o")
        owner.dog = shared
        owner.dogs.append(objectsIn: [shared, Pet("listed")])
        owner.dogSet.insert(shared)
        owner.dogMap["m"] = Pet("mapped")
        let child = Owner("child")
        child.children.append(owner)  // a cycle: owner -> child -> owner
        owner.children.append(child)
        try realm.write { realm.add(owner) }
        #expect(realm.objects(Pet.self).count == 3)
        #expect(realm.objects(Owner.self).count == 2)
        #expect(shared.owners.count == 1)
        #expect(shared.listOwners.count == 1)
        #expect(owner.parents.first?.name == "child")
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func selfLinksAndCyclesThroughToOneLinksWork() throws {
        let realm = try Realm(configuration: folder.configuration([Linked.self]))
        let single = Linked()
        single.next = single
        let a = Linked(), b = Linked()
        a.next = b
        b.next = a
        try realm.write {
            realm.add(single)
            realm.add(a)
        }
        #expect(realm.objects(Linked.self).count == 3)
        #expect(single.next?.isSameObject(as: single) == true)
        #expect(a.next?.next?.isSameObject(as: a) == true)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func updateMergesLinkedObjectsByPrimaryKeyAndReplacesLists() throws {
        let realm = try Realm(configuration: folder.configuration([PKTeam.self, PKDog.self]))
        try realm.write {
            realm.create(PKTeam.self, value: ["pk": "t", "dogs": [["pk": "a", "value": 1], ["pk": "b", "value": 2]]])
        }
        let update = PKTeam(value: ["pk": "t", "dogs": [["pk": "a", "value": 10]]])
        try realm.write { realm.add(update, update: .modified) }
        let team = try #require(realm.object(ofType: PKTeam.self, forPrimaryKey: "t"))
        #expect(team.dogs.map(\.pk) == ["a"])
        #expect(team.dogs.first?.value == 10)
        #expect(realm.objects(PKDog.self).count == 2)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func duplicatePrimaryKeysInsideOneGraphBecomeOneRow() throws {
        let realm = try Realm(configuration: folder.configuration([PKTeam.self, PKDog.self]))
        let team = PKTeam()
        team.pk = "t"
        team.dogs.append(objectsIn: [PKDog(value: ["pk": "a", "value": 1]), PKDog(value: ["pk": "a", "value": 2])])
        try realm.write { realm.add(team, update: .all) }
        #expect(realm.objects(PKDog.self).count == 1)
        #expect(team.dogs.count == 2)
        #expect(team.dogs[0].value == 2)
        #expect(team.dogs[1].isSameObject(as: team.dogs[0]))
    }

    @Test func linkedObjectsWithoutAPrimaryKeyAreAlwaysNew() throws {
        let realm = try Realm(configuration: folder.configuration([PKOwner.self, PKDog.self, Pet.self, Owner.self]))
        try realm.write {
            realm.create(PKOwner.self, value: ["pk": "o", "dog": ["pk": "d", "value": 1]], update: .all)
            realm.create(PKOwner.self, value: ["pk": "o", "dog": ["pk": "d", "value": 2]], update: .all)
        }
        #expect(realm.objects(PKDog.self).count == 1)
        #expect(realm.objects(PKDog.self).first?.value == 2)
        try realm.write {
            realm.add(Owner(value: ["name": "a", "dog": ["name": "x"]]))
            realm.add(Owner(value: ["name": "b", "dog": ["name": "x"]]))
        }
        #expect(realm.objects(Pet.self).count == 2)
    }

    @Test func collectionElementRulesAreSchemaErrors() {
        let cases: [(ObjectBase.Type, String)] = [
            (OptionalListElement.self, "List<Pet> property 'dogs' must not be marked as optional."),
            (OptionalSetElement.self, "MutableSet<Pet> property 'dogs' must not be marked as optional."),
            (RequiredMapValue.self, "Map<String, Pet> property 'dogs' must be marked as optional."),
            (EmbeddedSet.self, "Set property 'EmbeddedSet.children' cannot contain embedded object type 'Child'."),
        ]
        for (type, message) in cases {
            let types: [ObjectBase.Type] = [type, Pet.self, Owner.self, Child.self, Grandchild.self, Parent.self]
            do {
                _ = try Realm(configuration: folder.configuration(types, name: "\(type).realm"))
                Issue.record("\(type) opened")
            } catch {
                #expect("\(error)".contains(message), "\(error)")
            }
        }
    }
}

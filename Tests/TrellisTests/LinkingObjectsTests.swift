import Foundation
import Testing
@testable import Trellis

/// Inverse relationships: computed from the backlink index, live, counted per link occurrence.
@Suite struct LinkingObjectsTests {
    let folder = TemporaryFolder()

    func open() throws -> Realm {
        try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
    }

    @Test func unmanagedObjectsHaveNoLinkingObjects() {
        let pet = Pet("a")
        let owner = Owner("o")
        owner.dog = pet
        #expect(pet.owners.count == 0)
        #expect(pet.owners.first == nil)
        #expect(pet.owners.realm == nil)
    }

    @Test func aToOneLinkAppearsInTheTargetsLinkingObjects() throws {
        let realm = try open()
        let owner = Owner("o")
        owner.dog = Pet("a")
        try realm.write { realm.add(owner) }
        let pet = try #require(owner.dog)
        #expect(pet.owners.count == 1)
        #expect(pet.owners.first?.name == "o")
    }

    @Test func heldLinkingObjectsUpdateWhenTheLinkIsRemoved() throws {
        let realm = try open()
        let owner = Owner("o")
        owner.dog = Pet("a")
        try realm.write { realm.add(owner) }
        let owners = try #require(owner.dog).owners
        try realm.write { owner.dog = nil }
        #expect(owners.count == 0)
    }

    @Test func listLinksAppearInsideTheWriteAndAccumulate() throws {
        let realm = try open()
        let mark = Owner("mark"), diane = Owner("diane")
        let hannah = Owner("hannah")
        try realm.write {
            realm.add([mark, hannah])
            mark.children.append(hannah)
            #expect(hannah.parents.map(\.name) == ["mark"])
            diane.children.append(hannah)
            realm.add(diane)
        }
        #expect(Set(hannah.parents.map(\.name)) == ["mark", "diane"])
        let parents = hannah.parents
        try realm.write { realm.delete(hannah) }
        #expect(Array(parents).isEmpty)
    }

    @Test func anOriginLinkingTwiceCountsTwice() throws {
        let realm = try open()
        let owner = Owner("o")
        let pet = Pet("a")
        try realm.write {
            realm.add(owner)
            owner.dogs.append(objectsIn: [pet, pet, pet])
        }
        #expect(pet.listOwners.count == 3)
        try realm.write { owner.dogs.remove(at: 0) }
        #expect(pet.listOwners.count == 2)
    }

    @Test func anUnmanagedOriginDoesNotCountUntilAdded() throws {
        let realm = try open()
        let pet = Pet("a")
        let first = Owner("1")
        first.dog = pet
        try realm.write { realm.add(first) }
        let second = Owner("2")
        second.dog = pet
        #expect(pet.owners.count == 1)
        try realm.write { realm.add(second) }
        #expect(pet.owners.count == 2)
    }

    @Test func deletingTheOriginRemovesItsBacklinks() throws {
        let realm = try open()
        let owner = Owner("o")
        let pet = Pet("a")
        owner.dog = pet
        owner.dogs.append(pet)
        try realm.write { realm.add(owner) }
        try realm.write { realm.delete(owner) }
        #expect(pet.owners.count == 0)
        #expect(pet.listOwners.count == 0)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func dynamicAccessByNameReturnsTheLinkingObjects() throws {
        let realm = try open()
        let owner = Owner("jp")
        owner.dog = Pet("fido")
        try realm.write { realm.add(owner) }
        let pet = try #require(owner.dog)
        let owners = try #require(pet["owners"] as? LinkingObjects<Owner>)
        #expect(owners.first?.name == "jp")
        let dynamic = pet.linkingObjects(Owner.self, forProperty: "dog")
        #expect(dynamic.count == 1)
        #expect(dynamic.first?.name == "jp")
    }

    @Test func eachReadMakesANewLinkingObjectsValue() throws {
        let realm = try open()
        let owner = Owner("o")
        owner.dog = Pet("a")
        try realm.write { realm.add(owner) }
        let pet = try #require(owner.dog)
        #expect(pet.owners != pet.owners)
        let owners = pet.owners
        #expect(owners == owners)
    }

    @Test func theLegacyLetDeclarationIsLiveForListsAndToOnes() throws {
        let realm = try Realm(configuration: folder.configuration([LegacyUser.self, LegacyTask.self]))
        let task = LegacyTask()
        #expect(task.assignee.count == 0)
        let user = LegacyUser()
        user.name = "Ada"
        user.tasks.append(task)
        try realm.write { realm.add(user) }
        #expect(task.assignee.first?.name == "Ada")
        let fetched = try #require(realm.objects(LegacyTask.self).first)
        #expect(fetched.assignee.count == 1)
        let byLink = LegacyUser()
        byLink.favorite = fetched
        try realm.write { realm.add(byLink) }
        #expect(fetched.linkingObjects(LegacyUser.self, forProperty: "favorite").count == 1)
    }

    @Test func linkingObjectsAreNotPartOfTheStoredSchema() {
        let names = Pet().objectSchema.properties.map(\.name)
        #expect(names == ["name", "age"])
    }

    @Test func linkingObjectsOriginsAreValidated() {
        #expect(throws: Realm.Error.self) {
            _ = try Realm(configuration: folder.configuration([MissingOrigin.self, Owner.self, Pet.self]))
        }
        let messages = [OriginNotALink.self, OriginLinksElsewhere.self, MissingOrigin.self].map { type in
            (try? Realm(configuration: folder.configuration([type, Owner.self, Pet.self], name: "\(type).realm")))
                .map { _ in "" } ?? (openError([type, Owner.self, Pet.self]))
        }
        #expect(messages[0].contains("Property 'Owner.age' declared as origin of linking objects property "
            + "'OriginNotALink.owners' is not a link"))
        #expect(messages[1].contains("Property 'Owner.dog' declared as origin of linking objects property "
            + "'OriginLinksElsewhere.owners' links to type 'Pet'"))
        #expect(messages[2].contains("Property 'Owner.nosuch' declared as origin of linking objects property "
            + "'MissingOrigin.owners' does not exist"))
    }

    func openError(_ types: [ObjectBase.Type]) -> String {
        do {
            _ = try Realm(configuration: folder.configuration(types, name: "err-\(UUID().uuidString).realm"))
            return ""
        } catch {
            return "\(error)"
        }
    }
}

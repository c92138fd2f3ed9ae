import Foundation
import Testing
import Trellis

final class KeyPathOwner: Object {
    @Persisted var name = ""
    @Persisted var pet: KeyPathPet?
    @Persisted var pets: List<KeyPathPet>
}

final class KeyPathPet: Object {
    @Persisted var name = ""
    @Persisted var age = 0
}

/// `setValue(_:forKeyPath:)`, which Realm's objects inherit from NSObject: Realm's
/// CustomColumnTestsBase.setUp sets every property by `object.setValue(value, forKeyPath:
/// _name(for: keyPath))`. The last name is set on what the rest of the path leads to; nothing
/// happens through a nil link; through a collection every element is set.
@Suite struct KeyValueCodingSetKeyPathTests {
    @Test func aOneNamePathSetsThePropertyItself() {
        let owner = KeyPathOwner()
        owner.setValue("Ann", forKeyPath: "name")
        #expect(owner.name == "Ann")
    }

    @Test func aDottedPathSetsThroughLinksAndCollections() throws {
        let folder = TemporaryFolder()
        let realm = try Realm(configuration: folder.configuration([KeyPathOwner.self, KeyPathPet.self]))
        let owner = KeyPathOwner()
        owner.setValue("no pet yet", forKeyPath: "pet.name")  // a nil link: nothing to set
        #expect(owner.pet == nil)
        owner.pet = KeyPathPet()
        owner.pets.append(objectsIn: [KeyPathPet(), KeyPathPet()])
        try realm.write {
            realm.add(owner)
            owner.setValue("Rex", forKeyPath: "pet.name")
            owner.setValue(4, forKeyPath: "pets.age")
        }
        #expect(owner.pet?.name == "Rex")
        #expect(owner.pets.map(\.age) == [4, 4])
    }
}

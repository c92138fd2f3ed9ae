import Foundation
import Testing
@testable import Trellis

/// Realm's `Object.observe<T: RLMObjectBase>(keyPaths:on:_:)`: the block's `ObjectChange` type
/// decides the object's static type. Realm's own tests build one block typed
/// `(ObjectChange<ObjectBase>) -> Void` and hand it to objects of several classes
/// (ObjectTests.expectChange); Trellis's `ObjectChange<Self>` alone did not compile with it.
@Suite struct ObjectObserveGenericBlockTests {
    let folder = TemporaryFolder()

    @Test func aBlockTakingObjectChangeOfObjectBaseObservesObjectsOfAnyClass() throws {
        let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
        let owner = Owner("tim"), pet = Pet("rex")
        try realm.write { realm.add([owner, pet]) }
        let seen = LockedBox<[String]>([])
        let block: (ObjectChange<ObjectBase>) -> Void = { change in
            switch change {
            case .change(let object, let properties):
                let names = properties.map(\.name).joined(separator: ",")
                seen.mutate { $0.append("\(type(of: object)) \(names) \(properties.first?.newValue as? Int ?? -1)") }
            case .deleted:
                seen.mutate { $0.append("deleted") }
            case .error:
                seen.mutate { $0.append("error") }
            }
        }
        let ownerToken = owner.observe(block)
        let petToken = pet.observe(keyPaths: ["age"], block)
        try realm.write { owner.age = 41 }
        try realm.write { pet.name = "max" }  // not in the key paths
        try realm.write { pet.age = 3 }
        try realm.write { realm.delete(owner) }
        #expect(seen.get() == ["Owner age 41", "Pet age 3", "deleted"])
        ownerToken.invalidate()
        petToken.invalidate()
    }

    @Test func anUnannotatedBlockStillGetsTheObjectsOwnClass() throws {
        let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
        let pet = Pet("rex")
        try realm.write { realm.add(pet) }
        let names = LockedBox<[String]>([])
        let token = pet.observe { change in
            if case .change(let object, _) = change { names.mutate { $0.append(object.name) } }
        }
        try realm.write { pet.name = "max" }
        #expect(names.get() == ["max"])
        token.invalidate()
    }
}

import Foundation
import Testing
import Trellis

final class ReferenceCheckOwner: Object {
    @Persisted var dogs: List<Dog>
}

/// Realm's checks when a ``ThreadSafeReference`` is made and resolved (RLMThreadSafeReference;
/// Realm's ThreadSafeReferenceTests.testInvalidThreadSafeReferenceConstruction and
/// testInvalidThreadSafeReferenceUsage):
/// - a deleted object, or a List/MutableSet whose owner was deleted, cannot be referenced:
///   "Cannot construct reference to invalidated object" (checked before "unmanaged");
/// - a reference resolved in a Realm of another file finds nothing there (nil): Realm 10.54 no
///   longer traps "with different configuration than the source Realm".
@Suite struct ThreadSafeReferenceRealmChecksTests {
    let folder = TemporaryFolder()

    @Test func aDeletedObjectCannotBeReferenced() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TemporaryFolder()
            let realm = try Realm(configuration: folder.configuration([ReferenceCheckOwner.self, Dog.self]))
            let owner = ReferenceCheckOwner()
            try realm.write {
                realm.add(owner)
                realm.delete(owner)
            }
            _ = ThreadSafeReference(to: owner)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Cannot construct reference to invalidated object"))
    }

    @Test func theListOfADeletedObjectCannotBeReferenced() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TemporaryFolder()
            let realm = try Realm(configuration: folder.configuration([ReferenceCheckOwner.self, Dog.self]))
            let owner = ReferenceCheckOwner()
            try realm.write {
                realm.add(owner)
                realm.delete(owner)
            }
            _ = ThreadSafeReference(to: owner.dogs)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Cannot construct reference to invalidated object"))
    }

    @Test func aReferenceResolvedInAnotherFileIsNil() throws {
        let realm = try Realm(configuration: folder.configuration([Dog.self], name: "source.realm"))
        let other = try Realm(configuration: folder.configuration([Dog.self], name: "other.realm"))
        let dog = Dog()
        try realm.write { realm.add(dog) }
        try other.write { other.add(Dog()) }
        let reference = ThreadSafeReference(to: dog)
        #expect(other.resolve(reference) == nil)
        #expect(reference.isInvalidated)
    }
}

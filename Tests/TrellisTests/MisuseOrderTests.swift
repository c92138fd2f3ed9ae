import Foundation
import Testing
@testable import Trellis

/// Misuse checks come in Realm's order: a deleted or invalidated object or collection is
/// reported before a missing write transaction (Realm's accessors check "attached" first), and
/// `delete` of an object of no Realm or another one before the write check.
@Suite struct MisuseOrderTests {
    static func ownerRealm() -> Realm {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID()).realm")
        do {
            return try Realm(configuration: .init(fileURL: url, objectTypes: [Owner.self, Pet.self]))
        } catch {
            fatalError("could not open \(url): \(error)")
        }
    }

    /// An owner with one dog, added and then deleted (outside any write afterwards).
    static func deletedOwner() -> (Realm, Owner) {
        let realm = ownerRealm()
        let owner = Owner("Ada")
        owner.dogs.append(Pet())
        try? realm.write { realm.add(owner) }
        try? realm.write { realm.delete(owner) }
        return (realm, owner)
    }

    @Test func settingAPropertyOfADeletedObjectOutsideAWriteSaysDeleted() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, owner) = MisuseOrderTests.deletedOwner()
            owner.name = "x"
        }
        #expect(exitTestStandardError(result).contains("Object has been deleted or invalidated."))
        #expect(!exitTestStandardError(result).contains("outside of a write transaction"))
    }

    @Test func settingAPropertyOfAnInvalidatedObjectOutsideAWriteSaysInvalidated() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseOrderTests.ownerRealm()
            let owner = Owner("Ada")
            try? realm.write { realm.add(owner) }
            realm.invalidate()
            owner.age = 3
        }
        #expect(exitTestStandardError(result).contains("Object has been deleted or invalidated."))
    }

    @Test func appendingToTheListOfADeletedObjectOutsideAWriteSaysDeleted() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseOrderTests.ownerRealm()
            let owner = Owner("Ada")
            try? realm.write { realm.add(owner) }
            let dogs = owner.dogs
            try? realm.write { realm.delete(owner) }
            dogs.append(Pet())
        }
        #expect(exitTestStandardError(result).contains(invalidatedCollectionMessage("List")))
        #expect(!exitTestStandardError(result).contains("outside of a write transaction"))
    }

    @Test func insertingIntoTheSetOfAnInvalidatedObjectOutsideAWriteSaysInvalidated() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseOrderTests.ownerRealm()
            let owner = Owner("Ada")
            try? realm.write { realm.add(owner) }
            let scores = owner.scores
            realm.invalidate()
            scores.insert(1)
        }
        #expect(exitTestStandardError(result).contains(invalidatedCollectionMessage("Set")))
    }

    @Test func settingAMapKeyOfADeletedObjectOutsideAWriteSaysDeleted() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseOrderTests.ownerRealm()
            let owner = Owner("Ada")
            try? realm.write { realm.add(owner) }
            let nicknames = owner.nicknames
            try? realm.write { realm.delete(owner) }
            nicknames["a"] = "b"
        }
        #expect(exitTestStandardError(result).contains(invalidatedCollectionMessage("Dictionary")))
    }

    @Test func aValidObjectOutsideAWriteStillSaysWriteTransaction() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseOrderTests.ownerRealm()
            let owner = Owner("Ada")
            try? realm.write { realm.add(owner) }
            owner.dogs.append(Pet())
        }
        #expect(exitTestStandardError(result).contains("Cannot modify List outside of a write transaction."))
    }

    @Test func deletingAnUnmanagedObjectOutsideAWriteSaysWhichRealm() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            MisuseOrderTests.ownerRealm().delete(Owner("Ada"))
        }
        #expect(exitTestStandardError(result).contains("Can only delete an object from the Realm it belongs to."))
    }

    @Test func deletingADeletedObjectOutsideAWriteSaysWhichRealm() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, owner) = MisuseOrderTests.deletedOwner()
            realm.delete(owner)
        }
        #expect(exitTestStandardError(result).contains("Can only delete an object from the Realm it belongs to."))
    }
}

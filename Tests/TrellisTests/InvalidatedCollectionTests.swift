import Foundation
import Testing
@testable import Trellis

/// A `List`, `MutableSet` or `Map` belongs to the read transaction it was read in, as realm-core's
/// collections do: after `realm.invalidate()` reading or writing one read before traps with
/// realm-core's `Collection::verify_attached` message (v14.14, Realm Swift 10.54's), "List is no
/// longer valid. Either the parent object was deleted or the containing Realm has been invalidated
/// or closed." ("Set", "Dictionary"), the same for a collection nested in an `AnyRealmValue` and
/// for the collection of a deleted object; `isInvalidated` answers without trapping (Realm's
/// testAllMethodsCheckForInvalidation).
@Suite struct InvalidatedCollectionTests {
    static func invalidatedOwner() -> (Realm, Owner) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID()).realm")
        do {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Owner.self, Pet.self]))
            let owner = Owner("a")
            owner.tags.append(objectsIn: ["x", "y"])
            owner.scores.insert(objectsIn: [1, 2])
            owner.nicknames["n"] = "ann"
            try realm.write { realm.add(owner) }
            return (realm, owner)
        } catch {
            fatalError("could not open \(url): \(error)")
        }
    }

    @Test func countingAListReadBeforeInvalidateTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, owner) = InvalidatedCollectionTests.invalidatedOwner()
            let tags = owner.tags
            realm.invalidate()
            #expect(tags.isInvalidated)
            _ = tags.count
        }
        #expect(exitTestStandardError(result).contains(invalidatedCollectionMessage("List")))
    }

    @Test func readingAnElementOfAListReadBeforeInvalidateTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, owner) = InvalidatedCollectionTests.invalidatedOwner()
            let tags = owner.tags
            realm.invalidate()
            _ = tags[0]
        }
        #expect(exitTestStandardError(result).contains(invalidatedCollectionMessage("List")))
    }

    @Test func appendingToAListReadBeforeInvalidateTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, owner) = InvalidatedCollectionTests.invalidatedOwner()
            let tags = owner.tags
            realm.invalidate()
            realm.beginWrite()
            tags.append("z")
        }
        #expect(exitTestStandardError(result).contains(invalidatedCollectionMessage("List")))
    }

    @Test func readingASetReadBeforeInvalidateTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, owner) = InvalidatedCollectionTests.invalidatedOwner()
            let scores = owner.scores
            realm.invalidate()
            #expect(scores.isInvalidated)
            _ = scores.contains(1)
        }
        #expect(exitTestStandardError(result).contains(invalidatedCollectionMessage("Set")))
    }

    @Test func readingAMapReadBeforeInvalidateTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, owner) = InvalidatedCollectionTests.invalidatedOwner()
            let nicknames = owner.nicknames
            realm.invalidate()
            #expect(nicknames.isInvalidated)
            _ = nicknames["n"]
        }
        #expect(exitTestStandardError(result).contains(invalidatedCollectionMessage("Dictionary")))
    }

    @Test func settingAMapKeyReadBeforeInvalidateTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, owner) = InvalidatedCollectionTests.invalidatedOwner()
            let nicknames = owner.nicknames
            realm.invalidate()
            nicknames["m"] = "bo"
        }
        #expect(exitTestStandardError(result).contains(invalidatedCollectionMessage("Dictionary")))
    }

    @Test func readingANestedListReadBeforeInvalidateTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID()).realm")
            guard let realm = try? Realm(configuration: .init(fileURL: url, objectTypes: [MixedHolder.self, MixedTarget.self]))
            else { fatalError("could not open \(url)") }
            let holder = MixedHolder()
            holder.anyCol = .fromArray([.int(1)])
            try? realm.write { realm.add(holder) }
            guard let nested = holder.anyCol.listValue else { fatalError("no nested list") }
            realm.invalidate()
            _ = nested.count
        }
        #expect(exitTestStandardError(result).contains(invalidatedCollectionMessage("List")))
    }

    /// The set of a deleted object says the same as after `invalidate()` (realm-core routes both
    /// through `verify_attached`). Before, Trellis said "Object has been deleted or invalidated.".
    @Test func readingTheSetOfADeletedObjectTrapsWithRealmCoresMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, owner) = InvalidatedCollectionTests.invalidatedOwner()
            let scores = owner.scores
            try? realm.write { realm.delete(owner) }
            #expect(scores.isInvalidated)
            _ = scores.contains(1)
        }
        #expect(exitTestStandardError(result).contains(invalidatedCollectionMessage("Set")))
    }

    /// Collections read after `invalidate()` belong to the new read transaction and work.
    @Test func aCollectionReadAgainAfterInvalidateIsUsable() throws {
        let (realm, owner) = Self.invalidatedOwner()
        let owners = realm.objects(Owner.self)
        realm.invalidate()
        let again = try #require(realm.objects(Owner.self).first)
        #expect(Array(again.tags) == ["x", "y"])
        #expect(again.scores.count == 2)
        #expect(again.nicknames["n"] == "ann")
        #expect(owners.isInvalidated)
        #expect(owner.isInvalidated)
    }
}

import Foundation
import Testing
@testable import Trellis

/// Collection misuse traps with Realm's messages (each body runs in a child process).
@Suite struct CollectionMisuseTests {
    /// A Realm with one managed owner holding two dogs, one in a set, one in a map, and a
    /// parent with an embedded child in a list.
    static func managedOwner() -> (Realm, Owner) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID()).realm")
        do {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [
                Owner.self, Pet.self, Parent.self, Child.self, Grandchild.self,
            ]))
            let owner = Owner("o")
            owner.dogs.append(objectsIn: [Pet("a"), Pet("b")])
            owner.dogSet.insert(Pet("c"))
            owner.dogMap["d"] = Pet("d")
            try realm.write { realm.add(owner) }
            return (realm, owner)
        } catch {
            fatalError("could not open \(url): \(error)")
        }
    }

    @Test func appendingToAListOutsideAWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, owner) = CollectionMisuseTests.managedOwner()
            owner.dogs.append(Pet("x"))
        }
        #expect(exitTestStandardError(result).contains("Cannot modify List outside of a write transaction."))
    }

    @Test func settingAListElementOutsideAWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, owner) = CollectionMisuseTests.managedOwner()
            owner.dogs[0] = Pet("x")
        }
        #expect(exitTestStandardError(result).contains("Cannot modify List outside of a write transaction."))
    }

    @Test func insertingIntoASetOutsideAWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, owner) = CollectionMisuseTests.managedOwner()
            owner.dogSet.insert(Pet("x"))
        }
        #expect(exitTestStandardError(result).contains("Cannot modify Set outside of a write transaction."))
    }

    @Test func settingAMapKeyOutsideAWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, owner) = CollectionMisuseTests.managedOwner()
            owner.dogMap["x"] = nil
        }
        #expect(exitTestStandardError(result).contains("Cannot modify Dictionary outside of a write transaction."))
    }

    @Test func anOutOfBoundsIndexTrapsWithTheBound() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, owner) = CollectionMisuseTests.managedOwner()
            try? realm.write { owner.dogs.insert(Pet("x"), at: 3) }
        }
        #expect(exitTestStandardError(result).contains("Index 3 is out of bounds (must be less than 3)."))
    }

    @Test func aNegativeIndexTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, owner) = CollectionMisuseTests.managedOwner()
            try? realm.write { owner.dogs.remove(at: -1) }
        }
        #expect(exitTestStandardError(result).contains("Cannot pass a negative value for 'index'."))
    }

    @Test func removingMoreThanTheListHoldsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, owner) = CollectionMisuseTests.managedOwner()
            try? realm.write { owner.dogs.removeLast(3) }
        }
        #expect(exitTestStandardError(result).contains(
            "It is not possible to remove more objects (3) from a list than it already contains (2)."))
    }

    @Test func settingLinkingObjectsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, owner) = CollectionMisuseTests.managedOwner()
            try? realm.write { owner.parents = LinkingObjects(fromType: Owner.self, property: "children") }
        }
        #expect(exitTestStandardError(result).contains("LinkingObjects properties are read-only"))
    }

    @Test func reusingAManagedEmbeddedObjectInAListTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = CollectionMisuseTests.managedOwner()
            let parent = Parent()
            parent.children.append(Child(1))
            try? realm.write {
                realm.add(parent)
                parent.children.append(parent.children[0])
            }
        }
        #expect(exitTestStandardError(result).contains("Cannot add an existing managed embedded object to a List."))
    }

    @Test func reusingAManagedEmbeddedObjectInALinkTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = CollectionMisuseTests.managedOwner()
            let parent = Parent()
            parent.children.append(Child(1))
            try? realm.write {
                realm.add(parent)
                parent.child = parent.children[0]
            }
        }
        #expect(exitTestStandardError(result).contains("Can't set link to existing managed embedded object"))
    }

    @Test func reusingAManagedEmbeddedObjectInAMapTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = CollectionMisuseTests.managedOwner()
            let parent = Parent()
            parent.childMap["a"] = Child(1)
            try? realm.write {
                realm.add(parent)
                parent.childMap["b"] = parent.childMap["a"] ?? nil
            }
        }
        #expect(exitTestStandardError(result).contains("Cannot add an existing managed embedded object to a Dictionary."))
    }

    @Test func mapKeysStartingWithADollarTrap() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, owner) = CollectionMisuseTests.managedOwner()
            try? realm.write { owner.nicknames["$x"] = "x" }
        }
        #expect(exitTestStandardError(result).contains("Dictionary::insert: key must not start with '$'"))
    }

    @Test func mapKeysWithADotTrap() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let owner = Owner("unmanaged")
            owner.nicknames["a.b"] = "x"
        }
        #expect(exitTestStandardError(result).contains("Dictionary::insert: key must not contain '.'"))
    }

    @Test func readingTheListOfADeletedObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, owner) = CollectionMisuseTests.managedOwner()
            let dogs = owner.dogs
            try? realm.write { realm.delete(owner) }
            _ = dogs.count
        }
        // realm-core's message (Collection::verify_attached), as after invalidate().
        #expect(exitTestStandardError(result).contains(invalidatedCollectionMessage("List")))
    }

    @Test func mutatingAListFromAnotherThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, owner) = CollectionMisuseTests.managedOwner()
            nonisolated(unsafe) let dogs = owner.dogs
            let thread = Thread { _ = dogs.count }
            thread.start()
            sleep(5)
        }
        #expect(exitTestStandardError(result).contains("Realm accessed from incorrect thread."))
    }

    /// realm-core's words for sorting on a name that is not a property (Realm's
    /// RealmCollectionTypeTests.testSortWithProperty / testSortWithDescriptor), also through a
    /// to-one link, where the class named is the link's target.
    @Test func sortingOnAMissingPropertyNamesTheClassAndProperty() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = CollectionMisuseTests.managedOwner()
            _ = realm.objects(Owner.self).sorted(byKeyPath: "noSuchCol")
        }
        #expect(exitTestStandardError(result).contains(
            "Cannot sort on key path 'noSuchCol': property 'Owner.noSuchCol' does not exist"))
        let throughLink = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, owner) = CollectionMisuseTests.managedOwner()
            _ = owner.dogs.sorted(by: [SortDescriptor(keyPath: "name"), SortDescriptor(keyPath: "owners.nope")])
        }
        #expect(exitTestStandardError(throughLink).contains("Cannot sort on key path 'owners.nope'"))
        let distinct = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = CollectionMisuseTests.managedOwner()
            _ = realm.objects(Owner.self).distinct(by: ["dog.noSuchCol"])
        }
        #expect(exitTestStandardError(distinct).contains(
            "Cannot distinct on key path 'dog.noSuchCol': property 'Pet.noSuchCol' does not exist"))
    }
}

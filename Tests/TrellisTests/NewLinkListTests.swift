import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

// A new owner's list of objects is stored straight from its elements' keys
// (`RealmCore.storeNewLinkList`), not through `listSplice`. Both must leave the same bytes:
// the same chunks and header, the same backlinks.

final class NewListDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<NewListOwner>
}

final class NewListOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var dogs: List<NewListDog>
    @Persisted var favourites: List<NewListDog>
}

@Suite struct NewLinkListTests {
    let folder = TemporaryFolder()

    private func realm() throws -> Realm {
        try Realm(configuration: folder.configuration([NewListDog.self, NewListOwner.self]))
    }

    /// Where a managed owner's `dogs` are stored.
    private func location(of owner: NewListOwner, _ keyPath: KeyPath<NewListOwner, List<NewListDog>>) throws
        -> CollectionLocation
    {
        try #require(owner[keyPath: keyPath].storage.binding).location
    }

    /// Every stored entry of a list (header and chunks), keyed by what follows the owner prefix.
    private func storedEntries(_ core: RealmCore, _ location: CollectionLocation) -> [[UInt8]: [UInt8]] {
        var entries: [[UInt8]: [UInt8]] = [:]
        for entry in core.collectionEntries(prefix: location.ownerPrefix) {
            entries[Array(entry.key.dropFirst(CollectionKey.ownerSize))] = Array(entry.value)
        }
        return entries
    }

    @Test func aChunkOfLinksHasTheBytesOfItsElementsEncodedOneByOne() {
        var random = SplitMix64(seed: 18)
        for count in [0, 1, 2, 17, 256] {
            let keys = (0..<count).map { _ in random.next() >> UInt64.random(in: 0...63, using: &random) }
            let general = ListChunk.encode(keys.map(CollectionElement.link))
            #expect(ListChunk.encodeLinks(keys[...]) == general, "\(count) keys")
            #expect(ListChunk.elements(general.withUnsafeBytes { UnsafeRawBufferPointer($0) }).count == count)
        }
    }

    /// For seeded random lists (new objects, repeated ones, objects stored before; lengths
    /// around the chunk size), an owner added with its list stores what an owner added empty
    /// and then appended to stores.
    @Test(arguments: [1, 2, 3, 4])
    func anAddedOwnersListIsStoredAsAppendingWouldStoreIt(seed: UInt64) throws {
        let realm = try realm()
        var random = SplitMix64(seed: seed)
        var nextDog = 0
        func newDog() -> NewListDog {
            nextDog += 1
            return NewListDog(value: ["id": nextDog, "name": "dog \(nextDog)"])
        }
        let lengths = [0, 1, 10, 255, 256, 257, 600, Int.random(in: 2...700, using: &random)]
        try realm.write { for _ in 0..<20 { realm.add(newDog()) } }
        let stored = Array(realm.objects(NewListDog.self))
        for (index, length) in lengths.enumerated() {
            var elements: [NewListDog] = []
            for _ in 0..<length {
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<2 where !elements.isEmpty:
                    elements.append(elements[Int.random(in: 0..<elements.count, using: &random)])
                case 2..<4: elements.append(stored[Int.random(in: 0..<stored.count, using: &random)])
                default: elements.append(newDog())
                }
            }
            let added = NewListOwner(value: ["id": 2 * index])
            added.dogs.append(objectsIn: elements)
            let appended = NewListOwner(value: ["id": 2 * index + 1])
            try realm.write {
                realm.add(added)
                realm.add(appended)
                appended.dogs.append(objectsIn: elements)  // now managed: the same keys
            }
            #expect(added.dogs.count == length)
            #expect(Array(added.dogs.map(\.id)) == elements.map(\.id))
            let addedAt = try location(of: added, \.dogs), appendedAt = try location(of: appended, \.dogs)
            #expect(storedEntries(realm.core, addedAt) == storedEntries(realm.core, appendedAt), "length \(length)")
            #expect(storedEntries(realm.core, addedAt).count == (length + 255) / 256 + (length > 0 ? 1 : 0))
            for dog in Set(elements.map(\.id)) {
                let target = try #require(realm.object(ofType: NewListDog.self, forPrimaryKey: dog))
                let fromAdded = target.owners.filter("id == %@", added.id).count
                let fromAppended = target.owners.filter("id == %@", appended.id).count
                #expect(fromAdded == elements.count { $0.id == dog })
                #expect(fromAdded == fromAppended, "dog \(dog), length \(length)")
                let table = try #require(target._managed).table
                let backlinks = realm.core.backlinks(to: table, key: try #require(target._managed).key)
                let counts = Dictionary(grouping: backlinks, by: \.key.originKey).mapValues { $0.map(\.count) }
                #expect(counts[addedAt.key] == counts[appendedAt.key])
            }
        }
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func aNewObjectInTheListTwiceIsAddedOnceAndLinkedTwice() throws {
        let realm = try realm()
        let dog = NewListDog(value: ["id": 1])
        let owner = NewListOwner(value: ["id": 1])
        owner.dogs.append(objectsIn: [dog, dog, NewListDog(value: ["id": 2]), dog])
        try realm.write { realm.add(owner) }
        #expect(realm.objects(NewListDog.self).count == 2)
        #expect(Array(owner.dogs.map(\.id)) == [1, 1, 2, 1])
        #expect(dog.owners.count == 3)
        #expect(owner.dogs.index(of: dog) == 0)
        #expect(owner.dogs.filter("id == 1").count == 3)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func twoListsOfOneOwnerKeepTheirOwnBacklinks() throws {
        let realm = try realm()
        let rex = NewListDog(value: ["id": 1]), fido = NewListDog(value: ["id": 2])
        let owner = NewListOwner(value: ["id": 1])
        owner.dogs.append(objectsIn: [rex, fido])
        owner.favourites.append(rex)
        try realm.write { realm.add(owner) }
        #expect(rex.owners.count == 1)  // `owners` are the origins of `dogs` only
        #expect(Array(owner.favourites.map(\.id)) == [1])
        try realm.write { owner.dogs.removeAll() }
        #expect(rex.owners.isEmpty)
        #expect(owner.favourites.first?.id == 1)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func aLongListReadsBackAcrossItsChunksAndStaysEditable() throws {
        let realm = try realm()
        let owner = NewListOwner(value: ["id": 1])
        owner.dogs.append(objectsIn: (0..<700).map { NewListDog(value: ["id": $0, "name": "dog \($0)"]) })
        try realm.write { realm.add(owner) }
        #expect(owner.dogs.count == 700)
        #expect(owner.dogs[0].id == 0 && owner.dogs[255].id == 255 && owner.dogs[256].id == 256)
        #expect(owner.dogs[699].name == "dog 699")
        try realm.write {
            owner.dogs.remove(at: 300)
            owner.dogs.insert(NewListDog(value: ["id": 1000]), at: 0)
            owner.dogs.append(NewListDog(value: ["id": 1001]))
        }
        #expect(owner.dogs.count == 701)
        #expect(owner.dogs[0].id == 1000 && owner.dogs[301].id == 301 && owner.dogs[700].id == 1001)
        #expect(realm.objects(NewListDog.self).filter("ANY owners.id == 1").count == 701)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func replacingAStoredOwnerWithUpdateStillReplacesItsList() throws {
        let realm = try realm()
        try realm.write {
            realm.add(NewListOwner(value: ["id": 1, "dogs": [["id": 1], ["id": 2], ["id": 3]]]))
        }
        let replacement = NewListOwner(value: ["id": 1])
        replacement.dogs.append(objectsIn: [NewListDog(value: ["id": 4])])
        try realm.write { realm.add(replacement, update: .modified) }
        let stored = try #require(realm.object(ofType: NewListOwner.self, forPrimaryKey: 1))
        #expect(Array(stored.dogs.map(\.id)) == [4])
        #expect(realm.object(ofType: NewListDog.self, forPrimaryKey: 1)?.owners.isEmpty == true)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func createdOwnersStoreTheirListsFromValues() throws {
        let realm = try realm()
        try realm.write {
            realm.create(NewListOwner.self, value: ["id": 1, "dogs": [["id": 1, "name": "a"], ["id": 2, "name": "b"]]])
            let stored = realm.create(NewListDog.self, value: ["id": 3])
            realm.create(NewListOwner.self, value: ["id": 2, "dogs": [stored, stored]])
        }
        #expect(realm.object(ofType: NewListOwner.self, forPrimaryKey: 1)?.dogs.map(\.name) == ["a", "b"])
        #expect(realm.object(ofType: NewListDog.self, forPrimaryKey: 3)?.owners.count == 2)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func aListHoldingAnObjectOfAnotherRealmTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TemporaryFolder()
            let types: [ObjectBase.Type] = [NewListDog.self, NewListOwner.self]
            let first = try Realm(configuration: folder.configuration(types, name: "first.realm"))
            let second = try Realm(configuration: folder.configuration(types, name: "second.realm"))
            let dog = NewListDog(value: ["id": 1])
            try first.write { first.add(dog) }
            let owner = NewListOwner(value: ["id": 1])
            owner.dogs.append(dog)
            try second.write { second.add(owner) }
        }
        #expect(exitTestStandardError(result).contains("Object is already managed by another Realm."))
    }
}

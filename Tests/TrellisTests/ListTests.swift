import Foundation
import Testing
@testable import Trellis

/// `List`: order, duplicates, the mutation API and its index errors, persistence.
@Suite struct ListTests {
    let folder = TemporaryFolder()

    func open() throws -> Realm {
        try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
    }

    func names(_ list: List<Pet>) -> [String] { list.map(\.name) }

    @Test func duplicatesAreKeptInOrder() throws {
        let realm = try open()
        let owner = Owner("o")
        let a = Pet("a"), b = Pet("b")
        try realm.write {
            realm.add(owner)
            owner.dogs.append(a)
            owner.dogs.append(b)
            owner.dogs.append(a)
        }
        #expect(names(owner.dogs) == ["a", "b", "a"])
        #expect(realm.objects(Pet.self).count == 2)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func appendingAnUnmanagedObjectTwiceAddsItOnce() throws {
        let realm = try open()
        let owner = Owner("o")
        let unmanaged = Pet("u")
        try realm.write {
            realm.add(owner)
            owner.dogs.append(unmanaged)
            owner.dogs.append(realm.create(Pet.self, value: ["name": "c"]))
            owner.dogs.append(unmanaged)
        }
        #expect(names(owner.dogs) == ["u", "c", "u"])
        #expect(unmanaged.realm != nil)
        #expect(realm.objects(Pet.self).count == 2)
    }

    @Test func appendObjectsInKeepsOrderAndCanAppendItself() throws {
        let realm = try open()
        let owner = Owner("o")
        try realm.write {
            realm.add(owner)
            owner.dogs.append(objectsIn: [Pet("a"), Pet("b")])
            owner.dogs.append(objectsIn: owner.dogs)
        }
        #expect(names(owner.dogs) == ["a", "b", "a", "b"])
    }

    @Test func insertRemoveReplaceMoveAndSwapFollowRealm() throws {
        let realm = try open()
        let owner = Owner("o")
        let pets = (0..<5).map { Pet("p\($0)") }
        try realm.write {
            realm.add(owner)
            owner.dogs.append(objectsIn: pets)
            owner.dogs.insert(Pet("x"), at: 0)                  // x p0 p1 p2 p3 p4
            owner.dogs.remove(at: 1)                            // x p1 p2 p3 p4
            owner.dogs.replace(index: 0, object: pets[4])       // p4 p1 p2 p3 p4
            owner.dogs.move(from: 0, to: 3)                     // p1 p2 p3 p4 p4
            owner.dogs.swapAt(0, 2)                             // p3 p2 p1 p4 p4
            owner.dogs[1] = pets[0]                             // p3 p0 p1 p4 p4
            owner.dogs.removeFirst()                            // p0 p1 p4 p4
            owner.dogs.removeLast(2)                            // p0 p1
            owner.dogs.insert(contentsOf: [pets[2], pets[3]], at: 1) // p0 p2 p3 p1
            owner.dogs.replaceSubrange(1..<3, with: [pets[4]])  // p0 p4 p1
            owner.dogs.removeSubrange(0..<1)                    // p4 p1
        }
        #expect(names(owner.dogs) == ["p4", "p1"])
        #expect(realm.objects(Pet.self).count == 6)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func moveFromOffsetsFollowsSwiftUISemantics() throws {
        let list = List<Int>()
        list.append(objectsIn: [1, 2, 3])
        list.move(fromOffsets: IndexSet([1]), toOffset: 0)
        #expect(Array(list) == [2, 1, 3])
        list.removeAll()
        list.append(objectsIn: [1, 2, 3])
        list.move(fromOffsets: IndexSet([0]), toOffset: 3)
        #expect(Array(list) == [2, 3, 1])
        list.removeAll()
        list.append(objectsIn: [1, 2, 3])
        list.move(fromOffsets: IndexSet([0, 2]), toOffset: 1)
        #expect(Array(list) == [1, 3, 2])
    }

    @Test func removeAtOffsetsRemovesEachOffset() throws {
        let realm = try open()
        let owner = Owner("o")
        try realm.write {
            realm.add(owner)
            owner.tags.append(objectsIn: ["a", "b", "a"])
            owner.tags.remove(atOffsets: IndexSet([0, 2]))
        }
        #expect(Array(owner.tags) == ["b"])
    }

    @Test func removingElementsKeepsTheObjects() throws {
        let realm = try open()
        let owner = Owner("o")
        try realm.write {
            realm.add(owner)
            owner.dogs.append(objectsIn: [Pet("a"), Pet("b")])
        }
        try realm.write { owner.dogs.removeAll() }
        try realm.write { owner.dogs.removeAll() }
        #expect(owner.dogs.isEmpty)
        #expect(realm.objects(Pet.self).count == 2)
    }

    @Test func deletingAnElementObjectRemovesEveryOccurrence() throws {
        let realm = try open()
        let owner = Owner("o")
        let a = Pet("a"), b = Pet("b")
        try realm.write {
            realm.add(owner)
            owner.dogs.append(objectsIn: [a, b, a, b, a, b])
        }
        try realm.write { realm.delete(a) }
        #expect(names(owner.dogs) == ["b", "b", "b"])
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func indexOfFindsTheFirstOccurrenceOfTheRow() throws {
        let realm = try open()
        let owner = Owner("o")
        let a = Pet("a"), b = Pet("b")
        try realm.write {
            realm.add(owner)
            owner.dogs.append(objectsIn: [a, b, a])
        }
        #expect(owner.dogs.index(of: b) == 1)
        #expect(owner.dogs.index(of: realm.objects(Pet.self).first { $0.name == "a" }!) == 0)
        #expect(owner.dogs.index(of: Pet("unmanaged")) == nil)
        #expect(owner.dogs.index(matching: { $0.name == "b" }) == 1)
    }

    @Test func iterationIsASnapshotOfTheListWhenItBegan() throws {
        let realm = try open()
        let owner = Owner("o")
        try realm.write {
            realm.add(owner)
            owner.tags.append(objectsIn: ["a", "b"])
            var seen = [String]()
            for tag in owner.tags {
                seen.append(tag)
                owner.tags.append(tag + "!")
            }
            #expect(seen == ["a", "b"])
        }
        #expect(Array(owner.tags) == ["a", "b", "a!", "b!"])
    }

    @Test func changesAreVisibleThroughEveryAccessorAndPersist() throws {
        do {
            let realm = try open()
            let owner = Owner("o")
            try realm.write { realm.add(owner) }
            let other = try #require(realm.objects(Owner.self).first)
            try realm.write { owner.dogs.append(Pet("rex")) }
            #expect(other.dogs.first?.name == "rex")
        }
        let folder = self.folder
        let name: String? = try onOtherThread {
            let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
            return realm.objects(Owner.self).first?.dogs.first?.name
        }
        #expect(name == "rex")
    }

    @Test func listsOfEveryScalarTypeRoundTrip() throws {
        let realm = try open()
        let owner = Owner("o")
        try realm.write {
            realm.add(owner)
            owner.tags.append(objectsIn: ["x", "", "ünïcödé"])
            owner.scores.insert(objectsIn: [3, 1, 3])
            owner.nicknames["a"] = "alpha"
        }
        #expect(Array(owner.tags) == ["x", "", "ünïcödé"])
        #expect(owner.scores.count == 2)
        #expect(owner.nicknames["a"] == "alpha")
    }

    @Test func aListOfOneHundredThousandElementsAppendsAndIndexes() throws {
        let realm = try open()
        let owner = Owner("o")
        try realm.write {
            realm.add(owner)
            for i in 0..<100_000 { owner.tags.append("t\(i)") }
        }
        #expect(owner.tags.count == 100_000)
        #expect(owner.tags[0] == "t0")
        #expect(owner.tags[54_321] == "t54321")
        #expect(owner.tags[99_999] == "t99999")
        try realm.write {
            owner.tags.insert("mid", at: 50_000)
            owner.tags.remove(at: 0)
        }
        #expect(owner.tags[49_999] == "mid")
        #expect(owner.tags.count == 100_000)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func unmanagedListsBehaveLikeArraysAndCompareElementWise() {
        let a = List<Int>(), b = List<Int>()
        a.append(objectsIn: [1, 2])
        b.append(objectsIn: [1, 2])
        #expect(a == b)
        b.append(3)
        #expect(a != b)
        #expect(a.realm == nil)
    }

    @Test func assigningAListCopiesItsElements() throws {
        let realm = try open()
        let first = Owner("a"), second = Owner("b")
        try realm.write {
            realm.add([first, second])
            second.dogs.append(objectsIn: [Pet("x"), Pet("y")])
            first.dogs = second.dogs
            second.dogs = second.dogs
        }
        try realm.write { second.dogs.removeAll() }
        #expect(names(first.dogs) == ["x", "y"])
    }

    @Test func addingAnObjectReusesItsListInstance() throws {
        let realm = try open()
        let owner = Owner("o")
        let list = owner.dogs
        list.append(Pet("a"))
        try realm.write { realm.add(owner) }
        #expect(list.realm != nil)
        #expect(list === owner.dogs)
        #expect(realm.objects(Pet.self).count == 1)
    }

    @Test func aListOutlivesItsParentAccessorAndIsInvalidatedWithIt() throws {
        let realm = try open()
        var list: List<Pet>?
        try realm.write {
            list = realm.create(Owner.self, value: ["name": "o"]).dogs
        }
        let dogs = try #require(list)
        try realm.write { dogs.append(Pet("a")) }
        #expect(realm.objects(Owner.self).first?.dogs.count == 1)
        try realm.write { realm.delete(realm.objects(Owner.self)) }
        #expect(dogs.isInvalidated)
    }

    @Test func createFromNestedArraysBuildsListElements() throws {
        let realm = try open()
        try realm.write {
            realm.create(Owner.self, value: ["name": "o", "dogs": [["name": "a"], ["name": "b"]], "tags": ["t"]])
        }
        let owner = try #require(realm.objects(Owner.self).first)
        #expect(names(owner.dogs) == ["a", "b"])
        #expect(Array(owner.tags) == ["t"])
    }
}

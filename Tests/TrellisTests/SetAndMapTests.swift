import Foundation
import Testing
@testable import Trellis

/// `MutableSet` (unique by row) and `Map` (string keys, nil values kept for deleted targets).
@Suite struct SetAndMapTests {
    let folder = TemporaryFolder()

    func open() throws -> Realm {
        try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
    }

    @Test func setMembersAreUniqueByRow() throws {
        let realm = try open()
        let owner = Owner("o")
        let a = Pet("a"), b = Pet("b")
        try realm.write {
            realm.add(owner)
            owner.dogSet.insert(a)
            owner.dogSet.insert(b)
            owner.dogSet.insert(a)
            owner.dogSet.insert(objectsIn: [a, b, a])
        }
        #expect(owner.dogSet.count == 2)
        #expect(owner.dogSet.contains(a))
        #expect(owner.dogSet.contains(realm.objects(Pet.self).first { $0.name == "b" }!))
        #expect(!owner.dogSet.contains(Pet("a")))
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func removingSetMembersKeepsTheObjects() throws {
        let realm = try open()
        let owner = Owner("o")
        let a = Pet("a"), b = Pet("b")
        try realm.write {
            realm.add(owner)
            owner.dogSet.insert(objectsIn: [a, b])
            owner.dogSet.remove(a)
        }
        #expect(!owner.dogSet.contains(a))
        #expect(owner.dogSet.count == 1)
        try realm.write { owner.dogSet.removeAll(); owner.dogSet.removeAll() }
        #expect(owner.dogSet.isEmpty)
        #expect(realm.objects(Pet.self).count == 2)
    }

    @Test func setAlgebraFollowsRealm() throws {
        let realm = try open()
        let first = Owner("1"), second = Owner("2")
        let a = Pet("a"), b = Pet("b"), c = Pet("c")
        try realm.write {
            realm.add([first, second])
            first.dogSet.insert(objectsIn: [a, b])
            second.dogSet.insert(objectsIn: [b, c])
        }
        #expect(first.dogSet.intersects(second.dogSet))
        #expect(second.dogSet.intersects(first.dogSet))
        #expect(!first.dogSet.isSubset(of: second.dogSet))
        try realm.write { first.dogSet.formIntersection(second.dogSet) }
        #expect(first.dogSet.count == 1)
        #expect(first.dogSet.isSubset(of: second.dogSet))
        try realm.write { first.dogSet.formUnion(second.dogSet) }
        #expect(first.dogSet.count == 2)
        try realm.write { second.dogSet.subtract(first.dogSet) }
        #expect(second.dogSet.isEmpty)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func deletingASetMemberRemovesIt() throws {
        let realm = try open()
        let owner = Owner("o")
        let a = Pet("a")
        try realm.write {
            realm.add(owner)
            owner.dogSet.insert(a)
        }
        try realm.write { realm.delete(a) }
        #expect(owner.dogSet.isEmpty)
        #expect(!owner.dogSet.isInvalidated)
        #expect(a.isInvalidated)
    }

    @Test func unmanagedSetsCompareByMembers() {
        let a = MutableSet<Int>(), b = MutableSet<Int>()
        a.insert(objectsIn: [1, 2, 3])
        b.insert(objectsIn: [3, 2, 1, 1])
        #expect(a == b)
        #expect(Set(a) == Set(b))
    }

    @Test func mapSetGetCountAndMissingKey() throws {
        let realm = try open()
        let owner = Owner("o")
        try realm.write {
            realm.add(owner)
            owner.dogMap["key1"] = Pet("a")
            owner.dogMap["key2"] = Pet("b")
        }
        #expect(owner.dogMap.count == 2)
        #expect(owner.dogMap["key1"]??.name == "a")
        #expect(owner.dogMap["missing"] == nil)
        #expect(owner.dogMap.keys == ["key1", "key2"])
        #expect(owner.dogMap.values.map { $0?.name } == ["a", "b"])
        #expect(realm.objects(Pet.self).count == 2)
    }

    @Test func settingNilOrRemovingAKeyKeepsTheObject() throws {
        let realm = try open()
        let owner = Owner("o")
        try realm.write {
            realm.add(owner)
            owner.dogMap["a"] = Pet("a")
            owner.dogMap["b"] = Pet("b")
        }
        try realm.write { owner.dogMap["a"] = nil }
        #expect(owner.dogMap.count == 1)
        try realm.write { owner.dogMap.removeObject(for: "b") }
        #expect(owner.dogMap.isEmpty)
        #expect(realm.objects(Pet.self).count == 2)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func replacingAValueKeepsTheCount() throws {
        let realm = try open()
        let owner = Owner("o")
        try realm.write {
            realm.add(owner)
            owner.dogMap["a"] = Pet("a")
            owner.dogMap.updateValue(Pet("b"), forKey: "a")
        }
        #expect(owner.dogMap.count == 1)
        #expect(owner.dogMap["a"]??.name == "b")
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func deletingATargetKeepsTheKeyWithANilValue() throws {
        let realm = try open()
        let owner = Owner("o")
        let pet = Pet("a")
        try realm.write {
            realm.add(owner)
            owner.dogMap["key"] = pet
        }
        try realm.write { realm.delete(pet) }
        #expect(owner.dogMap.count == 1)
        let value = owner.dogMap["key"]
        #expect(value != nil)
        #expect((value ?? nil) == nil)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func mergeUsesTheCombineClosureOnlyForDuplicateKeys() throws {
        let realm = try open()
        let owner = Owner("o")
        try realm.write {
            realm.add(owner)
            owner.nicknames["a"] = "old"
            owner.nicknames.merge([(key: "a", value: "new"), (key: "b", value: "b")]) { old, _ in old }
        }
        #expect(owner.nicknames["a"] == "old")
        #expect(owner.nicknames["b"] == "b")
        try realm.write { owner.nicknames.merge([(key: "a", value: "new")]) { _, new in new } }
        #expect(owner.nicknames["a"] == "new")
    }

    @Test func mapIterationIsInKeyOrder() throws {
        let realm = try open()
        let owner = Owner("o")
        try realm.write {
            realm.add(owner)
            for key in ["c", "a", "b"] { owner.nicknames[key] = key.uppercased() }
        }
        #expect(owner.nicknames.map(\.key) == ["a", "b", "c"])
        #expect(owner.nicknames.map(\.value) == ["A", "B", "C"])
    }
}

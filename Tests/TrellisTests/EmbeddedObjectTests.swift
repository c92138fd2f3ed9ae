import Foundation
import Testing
@testable import Trellis

/// Embedded objects: exactly one parent, deleted with it, when overwritten, set to nil or
/// removed from their list or map.
@Suite struct EmbeddedObjectTests {
    let folder = TemporaryFolder()

    func open() throws -> Realm {
        try Realm(configuration: folder.configuration([Parent.self, Child.self, Grandchild.self, Pet.self,
                                                       Owner.self]))
    }

    @Test func creatingFromNestedDictionariesBuildsTheTree() throws {
        let realm = try open()
        let parent = try realm.write {
            realm.create(Parent.self, value: [
                "pk": 1,
                "child": ["value": 5, "grandchild": ["value": 6], "grandchildren": [[7], [8]]],
                "children": [[9], [10]],
            ])
        }
        let child = try #require(parent.child)
        #expect(child.value == 5)
        #expect(child.grandchild?.value == 6)
        #expect(child.grandchildren.map(\.value) == [7, 8])
        #expect(parent.children.map(\.value) == [9, 10])
        #expect(child.viaLink.first?.pk == 1)
        #expect(parent.children[1].viaList.first?.pk == 1)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func addingAParentManagesItsWholeEmbeddedTree() throws {
        let realm = try open()
        let parent = Parent()
        parent.child = Child(1)
        parent.child?.grandchildren.append(Grandchild(value: ["value": 2]))
        parent.children.append(objectsIn: [Child(3), Child(4)])
        parent.childMap["x"] = Child(5)
        try realm.write { realm.add(parent) }
        #expect(parent.child?.realm != nil)
        #expect(parent.child?.grandchildren.first?.realm != nil)
        #expect(parent.children.map(\.value) == [3, 4])
        #expect(parent.childMap["x"]??.value == 5)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func overwritingAnEmbeddedLinkDeletesTheOldObject() throws {
        let realm = try open()
        let parent = Parent()
        try realm.write { realm.add(parent) }
        let first = Child(1), second = Child(2)
        try realm.write { parent.child = first }
        #expect(first.realm != nil)
        try realm.write { parent.child = first }
        #expect(!first.isInvalidated)
        try realm.write { parent.child = second }
        #expect(first.isInvalidated)
        try realm.write { parent.child = nil }
        #expect(second.isInvalidated)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func removingOrReplacingListElementsDeletesThem() throws {
        let realm = try open()
        let parent = Parent()
        parent.children.append(objectsIn: [Child(1), Child(2), Child(3)])
        try realm.write { realm.add(parent) }
        let first = parent.children[0], second = parent.children[1], third = parent.children[2]
        try realm.write { parent.children[0] = Child(10) }
        #expect(first.isInvalidated)
        try realm.write { parent.children.remove(at: 1) }
        #expect(second.isInvalidated)
        try realm.write { parent.children.move(from: 1, to: 0) }
        #expect(!third.isInvalidated)
        #expect(parent.children.map(\.value) == [3, 10])
        try realm.write { parent.children.removeAll() }
        #expect(third.isInvalidated)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func overwritingAMapValueDeletesTheOldObject() throws {
        let realm = try open()
        let parent = Parent()
        parent.childMap["a"] = Child(1)
        try realm.write { realm.add(parent) }
        let old = try #require(parent.childMap["a"] ?? nil)
        try realm.write { parent.childMap["a"] = Child(2) }
        #expect(old.isInvalidated)
        #expect(parent.childMap["a"]??.value == 2)
    }

    @Test func deletingTheParentDeletesEmbeddedChildrenRecursively() throws {
        let realm = try open()
        let parent = Parent()
        parent.child = Child(1)
        parent.child?.grandchild = Grandchild(value: [2])
        parent.children.append(Child(3))
        try realm.write { realm.add(parent) }
        let child = try #require(parent.child)
        let grandchild = try #require(child.grandchild)
        let listed = parent.children[0]
        try realm.write { realm.delete(parent) }
        #expect(child.isInvalidated)
        #expect(grandchild.isInvalidated)
        #expect(listed.isInvalidated)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func embeddedObjectsMayLinkToTopLevelObjects() throws {
        let realm = try open()
        let parent = Parent()
        parent.child = Child(1)
        parent.child?.favorite = Pet("rex")
        try realm.write { realm.add(parent) }
        #expect(parent.child?.favorite?.name == "rex")
        #expect(realm.objects(Pet.self).count == 1)
        try realm.write { realm.delete(parent) }
        #expect(realm.objects(Pet.self).count == 1)
    }

    @Test func addUpdateAllReplacesEmbeddedObjects() throws {
        let realm = try open()
        let original = Parent()
        original.pk = 7
        original.child = Child(1)
        original.children.append(objectsIn: (0..<6).map(Child.init))
        try realm.write { realm.add(original) }
        let oldChildren = Array(original.children)
        let replacement = Parent()
        replacement.pk = 7
        replacement.child = Child(2)
        replacement.children.append(objectsIn: (6..<12).map(Child.init))
        try realm.write { realm.add(replacement, update: .all) }
        let allInvalidated = oldChildren.allSatisfy { $0.isInvalidated }
        #expect(allInvalidated)
        #expect(original.children.map(\.value) == Array(6..<12))
        #expect(original.child?.value == 2)
        #expect(original.isSameObject(as: replacement))
        #expect(realm.objects(Parent.self).count == 1)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func schemaListsEmbeddedTypesAsEmbedded() throws {
        let realm = try open()
        #expect(realm.schema["Child"]?.isEmbedded == true)
    }
}

extension EmbeddedObjectTests {
    @Test func addUpdateModifiedUpdatesAnEmbeddedObjectInPlace() throws {
        let realm = try open()
        let original = Parent()
        original.pk = 8
        original.child = Child(1)
        original.child?.grandchild = Grandchild(value: [1])
        try realm.write { realm.add(original) }
        let oldChild = try #require(original.child)
        let replacement = Parent()
        replacement.pk = 8
        replacement.child = Child(2)
        replacement.child?.grandchild = Grandchild(value: [3])
        try realm.write { realm.add(replacement, update: .modified) }
        #expect(!oldChild.isInvalidated)
        #expect(oldChild.value == 2)
        #expect(oldChild.grandchild?.value == 3)
        #expect(realm._consistencyProblems().isEmpty)
    }
}

extension EmbeddedObjectTests {
    @Test func addUpdateModifiedUpdatesEmbeddedListElementsInPlaceAndAppendsExtras() throws {
        let realm = try open()
        let original = Parent()
        original.pk = 9
        original.children.append(objectsIn: (0..<6).map(Child.init))
        try realm.write { realm.add(original) }
        let oldChildren = Array(original.children)
        let replacement = Parent()
        replacement.pk = 9
        replacement.children.append(objectsIn: (6..<13).map(Child.init))
        try realm.write { realm.add(replacement, update: .modified) }
        let noneInvalidated = oldChildren.allSatisfy { !$0.isInvalidated }
        #expect(noneInvalidated)
        #expect(oldChildren.map(\.value) == Array(6..<12))
        #expect(original.children.map(\.value) == Array(6..<13))
        #expect(realm._consistencyProblems().isEmpty)
    }
}

import Foundation
import Testing
import Trellis

final class CopiedTag: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var weight = 0
    @Persisted var parent: CopiedTag?
}

final class CopiedPost: Object {
    @Persisted(primaryKey: true) var title = ""
    @Persisted var mainTag: CopiedTag?
    @Persisted var tags: List<CopiedTag>
}

/// `Realm.create(_:value:update:)` "is recursively called" on the objects its value holds
/// (Realm's documentation): an unmanaged object given, or nested in the value, is copied into
/// the Realm and stays unmanaged itself (Realm's ObjectCreationTests.testCreateWithNestedObjects:
/// "standalone object should be copied into the realm, not added directly"). Before, Trellis
/// added the nested object itself, so it came back managed.
@Suite struct CreateCopiesNestedObjectsTests {
    private func realm() throws -> Realm {
        try Realm(configuration: .init(inMemoryIdentifier: "create-copies-\(UUID().uuidString)",
                                       objectTypes: [CopiedTag.self, CopiedPost.self]))
    }

    @Test func nestedUnmanagedObjectsAreCopiedAndStayUnmanaged() throws {
        let realm = try realm()
        let grandparent = CopiedTag(value: ["name": "root", "weight": 1])
        let standalone = CopiedTag(value: ["name": "swift", "weight": 3, "parent": grandparent])
        let post = try realm.write {
            realm.create(CopiedPost.self, value: ["first", ["name": "news", "weight": 2], [standalone]])
        }
        #expect(standalone.realm == nil)
        #expect(grandparent.realm == nil)
        #expect(realm.objects(CopiedTag.self).count == 3)
        let copy = try #require(post.tags.first)
        #expect(copy.realm != nil)
        #expect(copy.name == "swift" && copy.weight == 3)
        #expect(copy.parent?.name == "root" && copy.parent?.realm != nil)
        #expect(post.mainTag?.name == "news")
        // The source keeps living on its own: changing it changes no stored object.
        standalone.weight = 9
        #expect(copy.weight == 3)
    }

    @Test func anUnmanagedObjectGivenAsTheValueIsCopied() throws {
        let realm = try realm()
        let nested = CopiedTag(value: ["name": "inner"])
        let source = CopiedPost(value: ["title": "second", "mainTag": nested])
        let created = try realm.write { realm.create(CopiedPost.self, value: source) }
        #expect(source.realm == nil)
        #expect(nested.realm == nil)
        #expect(created.realm != nil)
        #expect(created.mainTag?.name == "inner" && created.mainTag?.realm != nil)
    }

    @Test func managedObjectsOfTheSameRealmAreLinkedNotCopied() throws {
        let realm = try realm()
        let stored = try realm.write { realm.create(CopiedTag.self, value: ["name": "stored"]) }
        let post = try realm.write { realm.create(CopiedPost.self, value: ["fourth", stored, [stored]]) }
        #expect(realm.objects(CopiedTag.self).count == 1)
        #expect(post.mainTag?.isSameObject(as: stored) == true)
    }
}

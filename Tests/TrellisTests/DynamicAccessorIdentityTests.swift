import Foundation
import Testing
import Trellis

final class IdentityItem: Object {
    @Persisted var name = ""
}

final class IdentityShelf: Object {
    @Persisted var items: List<IdentityItem>
    @Persisted var itemSet: MutableSet<IdentityItem>
}

/// `isSameObject(as:)` is true for two accessors of the same row of the same Realm, whatever
/// class the accessors are: a `DynamicObject` read through `dynamicList`/`dynamicMutableSet` is
/// the same object as the model-class accessor (Realm's ObjectTests.testDynamicList and
/// testDynamicMutableSet). Before, Trellis also required the same class description, which a
/// dynamic accessor does not share.
@Suite struct DynamicAccessorIdentityTests {
    @Test func aDynamicAccessorIsTheSameObjectAsTheModelAccessor() throws {
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "identity-\(UUID().uuidString)",
                                                   objectTypes: [IdentityItem.self, IdentityShelf.self]))
        let first = IdentityItem(value: ["name": "a"])
        let second = IdentityItem(value: ["name": "b"])
        let shelf = IdentityShelf()
        shelf.items.append(objectsIn: [first, second])
        shelf.itemSet.insert(objectsIn: [first, second])
        try realm.write { realm.add(shelf) }
        let dynamicItems = shelf.dynamicList("items")
        #expect(dynamicItems[0].isSameObject(as: first))
        #expect(dynamicItems[1].isSameObject(as: second))
        #expect(!dynamicItems[0].isSameObject(as: second))
        #expect(first.isSameObject(as: dynamicItems[0]))
        let dynamicSet = shelf.dynamicMutableSet("itemSet")
        #expect(dynamicSet.contains { $0.isSameObject(as: first) })
        #expect(dynamicSet.contains { $0.isSameObject(as: second) })
        let other = try Realm(configuration: .init(inMemoryIdentifier: "identity-other-\(UUID().uuidString)",
                                                   objectTypes: [IdentityItem.self, IdentityShelf.self]))
        let copy = try other.write { other.create(IdentityItem.self, value: ["name": "a"]) }
        #expect(!copy.isSameObject(as: first))
    }
}

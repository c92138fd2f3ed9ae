import Foundation
import Testing
import Trellis

/// A map of objects aggregates a property its typed key path names (`map.sum(of: \.age)`),
/// as Realm's `RealmKeyedCollection` extension does, managed and unmanaged; `nil` values are
/// skipped. Before, only the string forms (`sum(ofProperty: "age")`) compiled on a `Map`.
@Suite struct MapKeyPathAggregateTests {
    @Test func aMapOfObjectsAggregatesAPropertyByKeyPath() throws {
        let owner = Owner("Ann")
        owner.dogMap["a"] = Pet("Rex", age: 3)
        owner.dogMap["b"] = Pet("Kit", age: 9)
        owner.dogMap["c"] = .some(nil)
        #expect(owner.dogMap.min(of: \.age) == 3)
        #expect(owner.dogMap.max(of: \.age) == 9)
        #expect(owner.dogMap.sum(of: \.age) == 12)
        #expect(owner.dogMap.average(of: \.age) == 6)

        let realm = try Realm(configuration: .init(inMemoryIdentifier: "map-key-path-\(UUID().uuidString)",
                                                   objectTypes: [Owner.self, Pet.self]))
        try realm.write { realm.add(owner) }
        try realm.write { owner.dogMap["d"] = Pet("Max", age: 6) }
        #expect(owner.dogMap.min(of: \.age) == 3)
        #expect(owner.dogMap.max(of: \.age) == 9)
        #expect(owner.dogMap.sum(of: \.age) == 18)
        #expect(owner.dogMap.average(of: \.age) == 6)
    }

    /// Realm's `sorted(by:ascending:)` on a map of objects: the values ordered by the property a
    /// key path names, as the string form orders them.
    @Test func aManagedMapOfObjectsSortsByKeyPath() throws {
        let owner = Owner("Ann")
        owner.dogMap["a"] = Pet("Rex", age: 3)
        owner.dogMap["b"] = Pet("Kit", age: 9)
        owner.dogMap["c"] = Pet("Max", age: 6)
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "map-key-path-sort-\(UUID().uuidString)",
                                                   objectTypes: [Owner.self, Pet.self]))
        try realm.write { realm.add(owner) }
        #expect(owner.dogMap.sorted(by: \.age, ascending: true).map { $0?.name } == ["Rex", "Max", "Kit"])
        #expect(owner.dogMap.sorted(by: \.name, ascending: false).map { $0?.name } == ["Rex", "Max", "Kit"])
        #expect(owner.dogMap.sorted(by: \.age, ascending: false).map { $0?.age }
            == owner.dogMap.sorted(byKeyPath: "age", ascending: false).map { $0?.age })
    }
}

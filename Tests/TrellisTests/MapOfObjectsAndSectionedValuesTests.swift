import Foundation
import Testing
@testable import Trellis

/// A `Map` of objects is filtered and sorted on the objects' properties, and collections of
/// values are sectioned by a block, as in Realm.
@Suite struct MapOfObjectsAndSectionedValuesTests {
    let folder = TemporaryFolder()

    func owner() throws -> (Realm, Owner) {
        let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
        let owner = Owner()
        owner.dogMap["a"] = Pet("Rex", age: 5)
        owner.dogMap["b"] = Pet("Fido", age: 2)
        owner.dogMap["c"] = Pet("Max", age: 9)
        owner.tags.append(objectsIn: ["apple", "avocado", "banana", "cherry", "blueberry"])
        try realm.write { realm.add(owner) }
        return (realm, owner)
    }

    @Test func aMapOfObjectsFiltersAndSortsOnTheObjectsProperties() throws {
        let (realm, owner) = try owner()
        #expect(owner.dogMap.filter("age > 3").compactMap { $0?.name }.sorted() == ["Max", "Rex"])
        #expect(owner.dogMap.where { $0.age < 3 }.compactMap { $0?.name } == ["Fido"])
        #expect(owner.dogMap.sorted(byKeyPath: "age", ascending: false).compactMap { $0?.name } == ["Max", "Rex", "Fido"])
        let old = owner.dogMap.filter("age >= 5")
        #expect(old.count == 2)
        try realm.write { owner.dogMap["b"]??.age = 7 }
        #expect(old.count == 3)  // live
        let minimum: Int? = owner.dogMap.min(ofProperty: "age")
        #expect(minimum == 5)
        // A key whose object was deleted keeps its nil value and matches nothing.
        try realm.write { realm.delete(realm.objects(Pet.self).filter("name == 'Max'")) }
        #expect(owner.dogMap.count == 3)
        #expect(owner.dogMap.filter("age > 0").count == 2)
    }

    @Test func collectionsOfValuesAreSectionedByABlock() throws {
        let (realm, owner) = try owner()
        let sections = owner.tags.sectioned(by: { String($0.prefix(1)) })
        #expect(sections.allKeys == ["a", "b", "c"])
        #expect(Array(sections[1]) == ["banana", "blueberry"])
        let descending = owner.tags.sectioned(by: { String($0.prefix(1)) }, ascending: false)
        #expect(descending.allKeys == ["c", "b", "a"])
        try realm.write { owner.tags.append("cranberry") }
        #expect(sections[2].count == 2)  // live
        let byAge = realm.objects(Pet.self).sectioned(by: { $0.age > 4 }, sortDescriptors: [SortDescriptor(keyPath: "age")])
        #expect(byAge.allKeys == [false, true])
    }
}

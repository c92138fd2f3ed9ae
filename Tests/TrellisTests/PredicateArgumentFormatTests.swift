import Foundation
import Testing
@testable import Trellis

/// NSPredicate-style arguments Realm accepts: number specifiers (`%d`, `%ld`, `%f`…) as values
/// (realm-swift RealmCollectionTypeTests `filter("int8Col = %d", Int8(1))`), and a Realm
/// collection after `IN` (`filter("ANY array IN %@", realm.objects(SwiftObject.self))`).
@Suite struct PredicateArgumentFormatTests {
    let folder = TemporaryFolder()

    func realm() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([AllTypes.self, Owner.self, Pet.self]))
        try realm.write {
            for value in 0..<4 {
                realm.create(AllTypes.self, value: ["int8": Int8(value), "int": value, "double": Double(value) + 0.5])
            }
        }
        return realm
    }

    @Test func numberSpecifiersTakeTheirArgumentAsAValue() throws {
        let realm = try realm()
        let all = realm.objects(AllTypes.self)
        #expect(all.filter("int8 = %d", Int8(1)).count == 1)
        #expect(all.filter("int >= %ld AND int < %lld", 1, 3).count == 2)
        #expect(all.filter("int == %i OR int == %u", 0, 3).count == 2)
        #expect(all.filter("double > %f", 1.0).count == 3)
        #expect(all.filter("double < %lf AND int8 != %hd", 2.0, Int16(0)).count == 1)
        // %K and %@ keep their meaning beside them.
        #expect(all.filter("%K = %d", "int", 2).count == 1)
        #expect((try? all.filter(validating: "int = %z", 1)) == nil)
    }

    @Test func inTakesAResultsListOrLinkingObjectsArgument() throws {
        let realm = try realm()
        let owner = Owner("tim")
        try realm.write {
            realm.add(owner)
            owner.dogs.append(objectsIn: [Pet("a", age: 1), Pet("b", age: 2)])
            realm.add(Pet("c", age: 3))
        }
        let young = realm.objects(Pet.self).filter("age < 2")
        #expect(realm.objects(Owner.self).filter("ANY dogs IN %@", young).count == 1)
        #expect(realm.objects(Owner.self).filter("ANY dogs IN %@", realm.objects(Pet.self).filter("age == 3")).count == 0)
        #expect(realm.objects(Owner.self).where { $0.dogs.containsAny(in: young) }.count == 1)
    }
}

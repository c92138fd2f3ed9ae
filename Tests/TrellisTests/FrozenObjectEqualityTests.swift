import Foundation
import Testing
@testable import Trellis

/// Realm's ObjectTests.testEqualityForFrozenObjectTypeWithoutPrimaryKey: two frozen accessors of
/// one row at one version are equal (`==`, one hash) even without a primary key; live accessors
/// without a primary key stay equal only to themselves, as in Realm.
@Suite struct FrozenObjectEqualityTests {
    let folder = TemporaryFolder()

    @Test func frozenAccessorsOfOneRowAtOneVersionAreEqual() throws {
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        let dog = try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        let frozen = dog.freeze()
        let again = try #require(realm.objects(Dog.self).first).freeze()
        #expect(frozen == again)
        #expect(Set([frozen, again]).count == 1)
        // Live accessors of a class without a primary key: only the same accessor.
        #expect(dog != realm.objects(Dog.self).first)
        // Another row, or the row at another version: not equal.
        let other = try realm.write { realm.create(Dog.self, value: ["name": "Tom"]) }
        #expect(other.freeze() != frozen)
        #expect(dog.freeze() != frozen)
    }
}

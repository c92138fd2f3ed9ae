import Foundation
import Testing
import Trellis

final class LegacyTally: Object {
    @Persisted var name = ""
    let count = RealmProperty<Int?>()
}

/// A legacy `RealmProperty` kept after its object's accessor is released still reads and
/// writes the object's row, as in Realm (RealmSwift/Tests ObjectAccessorTests
/// `testPropertiesOutlivingParentObject`). Before, its weak reference to the accessor was gone
/// and reading trapped "Object has been deleted or invalidated.".
@Suite struct RealmPropertyOutlivesItsObjectTests {
    static func realm() throws -> Realm {
        try Realm(configuration: .init(inMemoryIdentifier: "outlive-\(UUID().uuidString)", objectTypes: [LegacyTally.self]))
    }

    /// The property of a new object of `realm`, whose accessor is released on return.
    static func detachedProperty(_ realm: Realm) throws -> (RealmProperty<Int?>, released: Bool) {
        weak var released: LegacyTally?
        var property: RealmProperty<Int?>?
        try realm.write {
            let tally = realm.create(LegacyTally.self, value: ["name": "t", "count": 1])
            property = tally.count
            released = tally
        }
        guard let property else { throw CancellationError() }
        return (property, released == nil)
    }

    @Test func aRealmPropertyReadsAndWritesItsRowAfterItsObjectIsReleased() throws {
        let realm = try Self.realm()
        let (property, released) = try Self.detachedProperty(realm)
        #expect(released)
        #expect(property.value == 1)
        try realm.write { property.value = 2 }
        #expect(property.value == 2)
        #expect(realm.objects(LegacyTally.self).first?.count.value == 2)
        try realm.write { property.value = nil }
        #expect(realm.objects(LegacyTally.self).first?.count.value == nil)
    }

    @Test func itTrapsOnceTheRowIsDeleted() async {
        await #expect(processExitsWith: .failure) {
            guard let realm = try? RealmPropertyOutlivesItsObjectTests.realm(),
                  let (property, _) = try? RealmPropertyOutlivesItsObjectTests.detachedProperty(realm)
            else { return }
            try? realm.write { realm.deleteAll() }
            _ = property.value
        }
    }
}

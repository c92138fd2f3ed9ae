import Foundation
import Testing
@testable import Trellis

/// In Realm's key-value coding the key `"self"` is the object itself (NSObject's KVC): Realm's
/// RealmCollectionTypeTests compare `results.value(forKey: "self") as! [Object]` with the
/// results' objects. Before, Trellis looked up a property named "self" and trapped.
@Suite struct KeyValueCodingSelfKeyTests {
    final class SelfKeyItem: Object {
        @Persisted var name = ""
    }

    @Test func selfAsAKeyGivesTheObjectAndACollectionsObjects() throws {
        let folder = TemporaryFolder()
        let realm = try Realm(configuration: folder.configuration([SelfKeyItem.self]))
        try realm.write {
            realm.add(SelfKeyItem(value: ["name": "a"]))
            realm.add(SelfKeyItem(value: ["name": "b"]))
        }
        let items = realm.objects(SelfKeyItem.self).sorted(byKeyPath: "name")
        let selves = try #require(items.value(forKey: "self") as? [SelfKeyItem])
        #expect(selves.map(\.name) == ["a", "b"])
        #expect(selves[0].isSameObject(as: items[0]))
        let first = try #require(items.first)
        #expect((first.value(forKey: "self") as? SelfKeyItem) == first)
        #expect((first.value(forKeyPath: "self.name") as? String) == "a")
        let unmanaged = SelfKeyItem(value: ["name": "c"])
        #expect((unmanaged.value(forKey: "self") as? SelfKeyItem) === unmanaged)
    }
}

import Foundation
import Testing
@testable import Trellis

/// Realm fills an object from a dictionary property by property (RLMInitializeWithValue reads
/// each persisted property's key), so keys that name no persisted property are ignored, in
/// `init(value:)` and `create(_:value:)` alike. Realm's ThreadSafeReferenceTests build
/// `SwiftDogObject(value: ["dogName": "Cookie", "age": 10])` for a class without `age`.
/// Before, Trellis trapped "Invalid property name 'age' for class …".
@Suite struct InitializerUnknownKeyTests {
    final class KeyedPup: Object {
        @Persisted var dogName = ""
        @Persisted(originProperty: "pup") var owners: LinkingObjects<PupOwner>
    }

    final class PupOwner: Object {
        @Persisted var name = ""
        @Persisted var pup: KeyedPup?
    }

    @Test func keysThatNameNoPersistedPropertyAreIgnored() throws {
        let pup = KeyedPup(value: ["dogName": "Cookie", "age": 10, "owners": []])
        #expect(pup.dogName == "Cookie")

        let folder = TemporaryFolder()
        let realm = try Realm(configuration: folder.configuration([KeyedPup.self, PupOwner.self]))
        try realm.write {
            realm.add(PupOwner(value: ["name": "Andrea", "pup": pup, "nickname": "A"]))
            realm.create(KeyedPup.self, value: ["dogName": "Rex", "color": "brown"])
        }
        #expect(pup.owners.first?.name == "Andrea")
        #expect(realm.objects(KeyedPup.self).filter("dogName == 'Rex'").count == 1)
    }
}

import Foundation
import Testing
import Trellis

final class KeyedPet: Object {
    @Persisted var name = ""
}

final class PetRegistry: Object {
    @Persisted var number = 0
    @Persisted var pets: Map<String, KeyedPet?>
}

/// `@allKeys` and `@allValues` follow a Map of objects in string queries as they follow a Map
/// of values (Realm's MapTests.testAllKeysQuery/testAllValuesQuery on `Map<String,
/// SwiftStringObject?>`: `ANY object.@allKeys = 'aKey'`). Before, Trellis refused: "Invalid
/// keypath 'pets.@allKeys': @allKeys can only follow a Map property".
@Suite struct MapOfObjectsKeysQueryTests {
    @Test func allKeysAndAllValuesOfAMapOfObjects() throws {
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "map-keys-\(UUID().uuidString)",
                                                   objectTypes: [PetRegistry.self, KeyedPet.self]))
        try realm.write {
            for (number, keys) in [(1, ["aKey"]), (2, ["aKey2"]), (3, ["aKey", "aKey4"])] {
                let registry = PetRegistry(value: ["number": number])
                for key in keys { registry.pets[key] = KeyedPet(value: ["name": "\(number)\(key)"]) }
                realm.add(registry)
            }
        }
        let registries = realm.objects(PetRegistry.self).sorted(byKeyPath: "number")
        #expect(registries.filter("ANY pets.@allKeys = 'aKey'").map(\.number) == [1, 3])
        #expect(registries.filter("ANY pets.@allKeys != 'aKey'").map(\.number) == [2, 3])
        #expect(registries.filter("ANY pets.@allKeys =[c] 'AKEY2'").map(\.number) == [2])
        let pet = try #require(realm.objects(KeyedPet.self).filter("name == '3aKey4'").first)
        #expect(registries.filter("ANY pets.@allValues = %@", pet).map(\.number) == [3])
    }
}

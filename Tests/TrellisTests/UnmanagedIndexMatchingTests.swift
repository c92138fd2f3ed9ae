import Foundation
import Testing
import Trellis

final class MatchedToy: Object {
    @Persisted var name = ""
    @Persisted var size: Int8 = 0
}

final class MatchedPet: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var favourite: MatchedToy?
    @Persisted var toys: List<MatchedToy>
}

final class MatchedOwner: Object {
    @Persisted var pets: List<MatchedPet>
    @Persisted var ages: List<Int>
}

/// `index(matching:)` on a `List` no Realm manages evaluates the predicate on each element in
/// memory (Realm's RLMArray `indexOfObjectWithPredicate:`; its
/// ListUnmanagedRealmCollectionTests run testIndexOfQuery and testIndexOfFormat), with the
/// text's and the typed query's operators. Before, Trellis trapped "This method may only be
/// called on RLMArray instances retrieved from an RLMRealm".
@Suite struct UnmanagedIndexMatchingTests {
    private func owner() -> MatchedOwner {
        let owner = MatchedOwner()
        let ball = MatchedToy(value: ["name": "ball", "size": 3])
        let rope = MatchedToy(value: ["name": "Rope", "size": 8])
        owner.pets.append(objectsIn: [
            MatchedPet(value: ["name": "Rex", "age": 3]),
            MatchedPet(value: ["name": "Fido", "age": 5, "favourite": ball, "toys": [ball]]),
            MatchedPet(value: ["name": "Bella", "age": 7, "favourite": rope, "toys": [ball, rope]]),
        ])
        owner.ages.append(objectsIn: [4, 9, 2])
        return owner
    }

    @Test func theTextIsEvaluatedOnEachElement() {
        let pets = owner().pets
        #expect(pets.index(matching: "name = 'Fido'") == 1)
        #expect(pets.index(matching: "name = %@", "Bella") == 2)
        #expect(pets.index(matching: "name = %@", "Nobody") == nil)
        #expect(pets.index(matching: "age > 3 AND name BEGINSWITH[c] 'b'") == 2)
        #expect(pets.index(matching: "age IN {3, 7}") == 0)
        #expect(pets.index(matching: "age BETWEEN {4, 6}") == 1)
        #expect(pets.index(matching: "NOT age < 6") == 2)
        #expect(pets.index(matching: "favourite.name = 'Rope'") == 2)
        #expect(pets.index(matching: "favourite = nil") == 0)
        #expect(pets.index(matching: "ANY toys.name ==[c] 'rope'") == 2)
        #expect(pets.index(matching: "toys.@count == 1") == 1)
        #expect(pets.index(matching: "toys.@max.size > 5") == 2)
        #expect(pets.index(matching: "ALL toys.size < 5 AND toys.@count > 0") == 1)
        #expect(owner().ages.index(matching: "self > 5") == 1)
        #expect(AnyRealmCollection(pets).index(matching: "name = 'Bella'") == 2)
        #expect(AnyRealmCollection(pets).index(matching: { $0.age == 5 }) == 1)
    }

    @Test func theTypedQueryIsEvaluatedOnEachElement() {
        let pets = owner().pets
        #expect(pets.index(matching: { $0.name == "Rex" }) == 0)
        #expect(pets.index(matching: { $0.age >= 5 && $0.favourite.name == "ball" }) == 1)
        #expect(pets.index(matching: { $0.name == "Nobody" }) == nil)
    }

    @Test func anUnknownPropertyTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let owner = MatchedOwner()
            owner.pets.append(MatchedPet())
            _ = owner.pets.index(matching: "height > 2")
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Invalid property name 'height' for class 'MatchedPet'."))
    }
}

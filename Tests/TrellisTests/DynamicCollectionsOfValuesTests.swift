import Foundation
import Testing
import Trellis

final class ValueCollectionsHolder: Object {
    @Persisted var ints: List<Int>
    @Persisted var names: MutableSet<String>
    @Persisted var scores: Map<String, Int>
}

/// `dynamicList`/`dynamicMutableSet`/`dynamicMap` take a collection of values too, as Realm's do
/// (RealmSwift/Tests CustomColumnNameTests `testCustomColumnObjectDynamicListing` counts a
/// `List<Int>` through `dynamicList`); before, they trapped "is not a List of objects". Its
/// elements are no objects: reading or adding one traps, instead of reading a number as a link.
@Suite struct DynamicCollectionsOfValuesTests {
    static func managedHolder() -> (Realm, ValueCollectionsHolder) {
        do {
            let realm = try Realm(configuration: .init(inMemoryIdentifier: "dynamic-values-\(UUID().uuidString)",
                                                       objectTypes: [ValueCollectionsHolder.self]))
            let holder = ValueCollectionsHolder()
            holder.ints.append(objectsIn: [3, 1, 2])
            holder.names.insert(objectsIn: ["a", "b"])
            holder.scores["x"] = 1
            try realm.write { realm.add(holder) }
            return (realm, holder)
        } catch {
            fatalError("could not open an in-memory Realm: \(error)")
        }
    }

    @Test func collectionsOfValuesCountThroughTheDynamicAccessors() {
        let (_, holder) = Self.managedHolder()
        #expect(holder.dynamicList("ints").count == 3)
        #expect(holder.dynamicMutableSet("names").count == 2)
        let scores: Map<String, DynamicObject?> = holder.dynamicMap("scores")
        #expect(scores.count == 1)
    }

    @Test func readingAnElementOfAListOfValuesAsAnObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, holder) = DynamicCollectionsOfValuesTests.managedHolder()
            _ = holder.dynamicList("ints")[0]
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Property 'ints' (List<Int>) holds values, not objects"))
    }

    @Test func addingAnObjectToASetOfValuesTraps() async {
        await #expect(processExitsWith: .failure) {
            let (realm, holder) = DynamicCollectionsOfValuesTests.managedHolder()
            let other = realm.dynamicObjects("ValueCollectionsHolder")[0]
            realm.beginWrite()
            holder.dynamicMutableSet("names").insert(other)
        }
    }

    @Test func aPropertyThatIsNoCollectionStillTraps() async {
        await #expect(processExitsWith: .failure) {
            let (_, holder) = DynamicCollectionsOfValuesTests.managedHolder()
            _ = holder.dynamicList("names")
        }
    }
}

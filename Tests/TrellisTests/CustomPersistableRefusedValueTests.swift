import Foundation
import Testing
@testable import Trellis

/// Realm's IntFailableWrapper: an `Int` stored, any value but 1 made.
struct OneRefusingInt: FailableCustomPersistable, Hashable {
    typealias PersistedType = Int
    let persistableValue: Int
    init?(persistedValue: Int) {
        if persistedValue == 1 { return nil }
        persistableValue = persistedValue
    }
}

final class RefusingIntHolder: Object {
    @Persisted var int: OneRefusingInt
    @Persisted var optInt: OneRefusingInt?
    @Persisted var ints: List<OneRefusingInt>
    @Persisted var optInts: List<OneRefusingInt?>
    @Persisted var optIntSet: MutableSet<OneRefusingInt?>
    @Persisted var optIntMap: Map<String, OneRefusingInt?>
}

/// Values of a custom type's persisted type that its failable init refuses, and null for a
/// custom type stored as an object, as Realm takes them (RealmSwift/Tests
/// CustomObjectCreationTests `testInitFailable`, `testNullValueForNonOptionalPropertyBackedByOptional`).
@Suite struct CustomPersistableRefusedValueTests {
    static func realm() -> Realm {
        do {
            return try Realm(configuration: .init(inMemoryIdentifier: "refused-\(UUID().uuidString)",
                                                  objectTypes: [CounterHolder.self, WrappedCounter.self]))
        } catch {
            fatalError("could not open an in-memory Realm: \(error)")
        }
    }

    @Test func aRefusedValueForANonOptionalPropertyTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RefusingIntHolder(value: ["int": 1])
        }
        #expect(exitTestStandardError(result).contains("Could not convert value '1' to type 'OneRefusingInt'."))
    }

    @Test func aRefusedListElementTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RefusingIntHolder(value: ["ints": [2, 1]])
        }
        #expect(exitTestStandardError(result).contains("Could not convert value '1' to type 'OneRefusingInt'."))
    }

    @Test func anOptionalPropertyOrElementTakesARefusedValueAsNil() {
        let holder = RefusingIntHolder(value: ["int": 2, "optInt": 1, "optInts": [1, 3], "optIntSet": [1],
                                               "optIntMap": ["a": 1]] as [String: Any])
        #expect(holder.int.persistableValue == 2)
        #expect(holder.optInt == nil)
        #expect(Array(holder.optInts) == [nil, OneRefusingInt(persistedValue: 3)])
        #expect(Array(holder.optIntSet) == [nil])
        #expect(holder.optIntMap["a"] == .some(nil))
    }

    @Test func aNullInAListOfACustomTypeStoredAsAnObjectIsRefused() async {
        // A property and a map of them read null as the default value; a list holds a link per
        // element, so Realm refuses null there.
        #expect(CounterHolder(value: ["counterMap": ["a": NSNull()]]).counterMap["a"] == Counter(value: 0))
        await #expect(processExitsWith: .failure) {
            _ = CounterHolder(value: ["counters": [NSNull()]])
        }
        await #expect(processExitsWith: .failure) {
            let realm = CustomPersistableRefusedValueTests.realm()
            realm.beginWrite()
            realm.create(CounterHolder.self, value: ["counters": [NSNull()]])
        }
    }
}

import Foundation
import Testing
@testable import Trellis

/// An embedded object stored behind a custom type (Realm's `EmbeddedObjectWrapper` pattern).
class WrappedCounter: EmbeddedObject {
    @Persisted var value = 0
}

/// A counter stored as an embedded object: `Int` in Swift, a `WrappedCounter` in the file.
struct Counter: CustomPersistable, Hashable {
    typealias PersistedType = WrappedCounter
    var value: Int
    init(value: Int = 0) { self.value = value }
    init(persistedValue: WrappedCounter) { value = persistedValue.value }
    var persistableValue: WrappedCounter { WrappedCounter(value: ["value": value]) }
}

/// Non-optional custom properties whose persisted type is an object: valid in Realm (links are
/// always nullable underneath), read as the custom type's default when the link is null.
class CounterHolder: Object {
    @Persisted var counter: Counter
    @Persisted var optCounter: Counter?
    @Persisted var counters: List<Counter>
    @Persisted var counterMap: Map<String, Counter>
    @Persisted var optCounterMap: Map<String, Counter?>
}

/// Realm's rules (RealmSwift/Tests CustomObjectCreationTests, ObjectSchemaInitializationTests
/// `testCustomPropertyPopulation`) for a `CustomPersistable` whose persisted type is an
/// embedded object.
@Suite struct CustomPersistableObjectTests {
    let folder = TemporaryFolder()

    func realm() throws -> Realm {
        try Realm(configuration: folder.configuration([CounterHolder.self, WrappedCounter.self]))
    }

    @Test func aNonOptionalCustomTypeStoredAsAnObjectIsAValidOptionalLinkInTheSchema() throws {
        let schema = try #require(try realm().schema["CounterHolder"])
        let counter = try #require(schema["counter"])
        #expect(counter.type == .object)
        #expect(counter.isOptional)
        #expect(counter.objectClassName == "WrappedCounter")
        let optCounter = try #require(schema["optCounter"])
        #expect(optCounter.type == .object && optCounter.isOptional)
        let list = try #require(schema["counters"])
        #expect(list.type == .object && list.isArray && !list.isOptional)
        let map = try #require(schema["counterMap"])
        #expect(map.type == .object && map.isMap && map.isOptional)
        #expect(map.objectClassName == "WrappedCounter")
        let optMap = try #require(schema["optCounterMap"])
        #expect(optMap.type == .object && optMap.isMap && optMap.isOptional)
    }

    @Test func aNullLinkReadsAsTheCustomTypesDefaultValue() throws {
        let unmanaged = CounterHolder()
        #expect(unmanaged.counter == Counter(value: 0))
        #expect(CounterHolder(value: ["counter": NSNull()]).counter == Counter(value: 0))
        #expect(CounterHolder(value: ["counterMap": ["a": NSNull()]]).counterMap["a"] == Counter(value: 0))

        let realm = try realm()
        try realm.write {
            let created = realm.create(CounterHolder.self)
            #expect(created.counter == Counter(value: 0))
            #expect(created.optCounter == nil)
            let fromNull = realm.create(CounterHolder.self, value: ["counter": NSNull(),
                                                                    "counterMap": ["a": NSNull()],
                                                                    "optCounterMap": ["b": NSNull()]])
            #expect(fromNull.counter == Counter(value: 0))
            #expect(fromNull.counterMap["a"] == Counter(value: 0))
            #expect(fromNull.counterMap.count == 1)
            #expect(fromNull.optCounterMap["b"] == .some(nil))
        }
    }

    @Test func valuesRoundTripThroughTheEmbeddedObject() throws {
        let realm = try realm()
        let holder = CounterHolder()
        holder.counter = Counter(value: 5)
        holder.optCounter = Counter(value: 6)
        holder.counters.append(objectsIn: [Counter(value: 1), Counter(value: 2)])
        holder.counterMap["x"] = Counter(value: 7)
        try realm.write { realm.add(holder) }
        #expect(holder.counter == Counter(value: 5))
        #expect(holder.optCounter == Counter(value: 6))
        #expect(Array(holder.counters) == [Counter(value: 1), Counter(value: 2)])
        #expect(holder.counterMap["x"] == Counter(value: 7))

        try realm.write { holder.counter = Counter(value: 8) }
        #expect(holder.counter == Counter(value: 8))
        #expect(realm.objects(CounterHolder.self).first?.counter == Counter(value: 8))

        try realm.write {
            holder.counterMap["y"] = Counter(value: 9)
            realm.create(CounterHolder.self, value: ["counter": Counter(value: 3),
                                                     "counterMap": ["k": Counter(value: 4)]])
        }
        #expect(holder.counterMap["y"] == Counter(value: 9))
        let byValue = realm.objects(CounterHolder.self).filter("counter.value == 3")
        #expect(byValue.count == 1)
        #expect(byValue.first?.counterMap["k"] == Counter(value: 4))
    }

    /// Realm's PrimitiveListTests<ManagedObjectFactory, EmbeddedObjectWrapper>: `append(objectsIn:)`
    /// of several values to a managed list, each value's `persistableValue` a new embedded object.
    /// Each temporary object was freed once stored, the next one could be made at its address,
    /// and the add took it for the one already added ("Cannot add an existing managed embedded
    /// object to a List").
    @Test func appendingManyToAManagedListStoresEachTemporaryObject() throws {
        let realm = try realm()
        let values = (1...40).map { Counter(value: $0) }
        let holder = try realm.write { realm.create(CounterHolder.self) }
        try realm.write {
            holder.counters.append(objectsIn: values)
            holder.counters.append(objectsIn: values)
            for (index, value) in values.enumerated() { holder.counterMap["\(index)"] = value }
        }
        #expect(Array(holder.counters) == values + values)
        #expect(holder.counterMap.count == values.count)
        try realm.write { holder.counters.replaceSubrange(0..<40, with: values.reversed()) }
        #expect(Array(holder.counters.prefix(40)) == values.reversed())
    }
}

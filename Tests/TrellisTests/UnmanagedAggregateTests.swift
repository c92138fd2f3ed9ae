import Foundation
import Testing
@testable import Trellis

/// Realm's unmanaged `List`, `MutableSet` and `Map` aggregate their elements in memory
/// (realm-swift PrimitiveListTests / PrimitiveMutableSetTests / PrimitiveMapTests run `min`,
/// `max`, `sum` and `average` on unmanaged collections; RLMArray's `aggregateProperty:`):
/// nil skipped, the sum of nothing zero, the others nil.
@Suite struct UnmanagedAggregateTests {
    @Test func anUnmanagedListOfValuesIsAggregatedInMemory() {
        let ints = List<Int>()
        #expect(ints.min() == nil)
        #expect(ints.max() == nil)
        #expect(ints.sum() == 0)
        #expect((ints.average() as Double?) == nil)
        ints.append(objectsIn: [3, 1, 2, 6])
        #expect(ints.min() == 1)
        #expect(ints.max() == 6)
        #expect(ints.sum() == 12)
        #expect((ints.average() as Double?) == 3)

        let optionals = List<Double?>()
        optionals.append(objectsIn: [nil, 1.5, nil, 2.5])
        #expect(optionals.min() == 1.5)
        #expect(optionals.max() == 2.5)
        #expect(optionals.sum() == 4)
        #expect((optionals.average(ofProperty: "self") as Double?) == 2)

        let decimals = List<Decimal128>()
        decimals.append(objectsIn: [Decimal128(1), Decimal128(2)])
        #expect(decimals.sum() == Decimal128(3))
        #expect((decimals.average() as Decimal128?) == Decimal128(value: 1.5))

        let dates = List<Date>()
        dates.append(objectsIn: [Date(timeIntervalSince1970: 5), Date(timeIntervalSince1970: 1)])
        #expect(dates.min() == Date(timeIntervalSince1970: 1))
        #expect(dates.max() == Date(timeIntervalSince1970: 5))

        let int8s = List<Int8>()
        int8s.append(objectsIn: [1, 2])
        #expect(int8s.sum() == 3)
        #expect(int8s.max() == 2)
    }

    @Test func anUnmanagedSetAndMapAreAggregatedInMemory() {
        let set = MutableSet<Float>()
        set.insert(objectsIn: [1, 4, 2.5])
        #expect(set.min() == 1)
        #expect(set.max() == 4)
        #expect(set.sum() == 7.5)
        #expect((set.average() as Double?) == 2.5)

        let map = Map<String, Int?>()
        #expect(map.sum() == 0)
        #expect(map.min() == nil)
        map["a"] = 10
        map["b"] = nil
        map["c"] = 20
        #expect(map.min() == 10)
        #expect(map.max() == 20)
        #expect(map.sum() == 30)
        #expect((map.average() as Double?) == 15)
    }

    @Test func anUnmanagedListOfObjectsIsAggregatedByProperty() {
        let dogs = List<Dog>()
        #expect((dogs.sum(ofProperty: "age") as Int) == 0)
        #expect((dogs.max(ofProperty: "age") as Int?) == nil)
        for age in [4, 2, 9] { dogs.append(Dog(value: ["name": "d\(age)", "age": age])) }
        #expect((dogs.min(ofProperty: "age") as Int?) == 2)
        #expect((dogs.max(ofProperty: "age") as Int?) == 9)
        #expect((dogs.sum(ofProperty: "age") as Int) == 15)
        #expect((dogs.average(ofProperty: "age") as Double?) == 5)
        #expect(dogs.max(of: \.age) == 9)
    }
}

import Foundation
import Testing
@testable import Trellis

class Measurements: Object {
    @Persisted var ints: List<Int>
    @Persisted var optionalInts: List<Int?>
    @Persisted var doubles: MutableSet<Double>
    @Persisted var names: List<String>
    @Persisted var optionalNames: MutableSet<String?>
    @Persisted var dates: Map<String, Date>
    @Persisted var weights: Map<String, Double>
    @Persisted var decimals: List<Decimal128>
}

/// Lists, sets and maps of values: filtered on `self`, sorted, made distinct and aggregated,
/// live, with Realm's generic constraints.
@Suite struct ValueCollectionTests {
    let folder = TemporaryFolder()

    func measurements() throws -> (Realm, Measurements) {
        let realm = try Realm(configuration: folder.configuration([Measurements.self]))
        let m = Measurements()
        m.ints.append(objectsIn: [5, 3, 9, 3, 1])
        m.optionalInts.append(objectsIn: [4, nil, 2])
        m.doubles.insert(objectsIn: [2.5, 0.5, 1.0])
        m.names.append(objectsIn: ["bob", "Alice", "carol", "alice"])
        m.optionalNames.insert(objectsIn: ["x", nil])
        m.dates["a"] = Date(timeIntervalSince1970: 100)
        m.dates["b"] = Date(timeIntervalSince1970: 50)
        m.weights["a"] = 1.5
        m.weights["b"] = 2.5
        m.decimals.append(objectsIn: [Decimal128(1), Decimal128(2)])
        try realm.write { realm.add(m) }
        return (realm, m)
    }

    @Test func aListOfIntegersFiltersOnSelfSortsAndAggregates() throws {
        let (realm, m) = try measurements()
        #expect(Array(m.ints.filter("self > 2")) == [5, 3, 9, 3])
        #expect(Array(m.ints.filter("self IN %@", [1, 9])) == [9, 1])
        #expect(Array(m.ints.where { $0 > 4 }) == [5, 9])
        #expect(Array(m.ints.sorted()) == [1, 3, 3, 5, 9])
        #expect(Array(m.ints.sorted(ascending: false)) == [9, 5, 3, 3, 1])
        #expect(Array(m.ints.distinct()) == [5, 3, 9, 1])
        #expect(m.ints.min() == 1)
        #expect(m.ints.max() == 9)
        #expect(m.ints.sum() == 21)
        #expect(m.ints.average() == 4.2)
        #expect(m.ints.index(matching: "self == 9") == 2)
        // Live: a later append shows in the same Results.
        let big = m.ints.filter("self >= 5")
        #expect(big.count == 2)
        try realm.write { m.ints.append(100) }
        #expect(Array(big) == [5, 9, 100])
        // Realm's format: the stored type's name, an address, the elements.
        #expect(big.description.hasPrefix("Results<int> <0x"))
        #expect(big.description.hasSuffix("> (\n\t[0] 5,\n\t[1] 9,\n\t[2] 100\n)"))
    }

    @Test func optionalValuesSkipNilInAggregatesAndSortNilFirst() throws {
        let (_, m) = try measurements()
        #expect(m.optionalInts.min() == 2)
        #expect(m.optionalInts.max() == 4)
        #expect(m.optionalInts.sum() == 6)
        #expect(Array(m.optionalInts.sorted()) == [nil, 2, 4])
        #expect(Array(m.optionalInts.filter("self == nil")).count == 1)
        #expect(Array(m.optionalNames.filter("self != nil")) == ["x"])
    }

    @Test func setsOfDoublesAndListsOfStrings() throws {
        let (_, m) = try measurements()
        #expect(m.doubles.sum() == 4.0)
        #expect(Array(m.doubles.sorted()) == [0.5, 1.0, 2.5])
        #expect(Array(m.names.filter("self BEGINSWITH[c] 'a'")) == ["Alice", "alice"])
        #expect(Array(m.names.sorted()) == ["Alice", "alice", "bob", "carol"])
        #expect(m.decimals.sum() == Decimal128(3))
    }

    @Test func mapValuesSortFilterAndAggregate() throws {
        let (_, m) = try measurements()
        #expect(m.dates.min() == Date(timeIntervalSince1970: 50))
        #expect(m.dates.max() == Date(timeIntervalSince1970: 100))
        #expect(Array(m.weights.sorted(ascending: false)) == [2.5, 1.5])
        #expect(m.weights.sum() == 4.0)
        #expect(Array(m.weights.where { $0 > 2 }) == [2.5])
    }

    @Test func aPropertyNameInAValuePredicateIsATypedError() throws {
        let (_, m) = try measurements()
        #expect(throws: Realm.Error.self) { try m.ints._scopedResults.filter(validating: "age > 3") }
    }

    @Test func genericCodeOverAddableAndMinMaxTypesCompiles() throws {
        let (_, m) = try measurements()
        func total<C: RealmCollection>(_ values: C) -> C.Element where C.Element: AddableType,
            C.Element.PersistedType: AddableType
        {
            values.sum()
        }
        func range<C: RealmCollection>(_ values: C) -> (C.Element?, C.Element?) where C.Element: MinMaxType,
            C.Element.PersistedType: MinMaxType
        {
            (values.min(), values.max())
        }
        #expect(total(m.ints) == 21)
        #expect(range(m.ints) == (1, 9))
        #expect(total(AnyRealmCollection(m.doubles)) == 4.0)
    }
}

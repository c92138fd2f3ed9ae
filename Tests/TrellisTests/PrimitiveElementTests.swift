import Foundation
import Testing
@testable import Trellis

/// An object with a list, a set and a map of one element type (one class per type: Realm
/// has no generic model classes).
protocol ValueHolding: Object {
    associatedtype Value: ValueSamples
    var list: List<Value> { get }
    var set: MutableSet<Value> { get }
    var map: Map<String, Value> { get }
}

final class BoolHolder: Object, ValueHolding {
    @Persisted var list: List<Bool>
    @Persisted var set: MutableSet<Bool>
    @Persisted var map: Map<String, Bool>
}
final class OptionalBoolHolder: Object, ValueHolding {
    @Persisted var list: List<Bool?>
    @Persisted var set: MutableSet<Bool?>
    @Persisted var map: Map<String, Bool?>
}
final class IntHolder: Object, ValueHolding {
    @Persisted var list: List<Int>
    @Persisted var set: MutableSet<Int>
    @Persisted var map: Map<String, Int>
}
final class OptionalIntHolder: Object, ValueHolding {
    @Persisted var list: List<Int?>
    @Persisted var set: MutableSet<Int?>
    @Persisted var map: Map<String, Int?>
}
final class Int8Holder: Object, ValueHolding {
    @Persisted var list: List<Int8>
    @Persisted var set: MutableSet<Int8>
    @Persisted var map: Map<String, Int8>
}
final class OptionalInt8Holder: Object, ValueHolding {
    @Persisted var list: List<Int8?>
    @Persisted var set: MutableSet<Int8?>
    @Persisted var map: Map<String, Int8?>
}
final class Int16Holder: Object, ValueHolding {
    @Persisted var list: List<Int16>
    @Persisted var set: MutableSet<Int16>
    @Persisted var map: Map<String, Int16>
}
final class OptionalInt16Holder: Object, ValueHolding {
    @Persisted var list: List<Int16?>
    @Persisted var set: MutableSet<Int16?>
    @Persisted var map: Map<String, Int16?>
}
final class Int32Holder: Object, ValueHolding {
    @Persisted var list: List<Int32>
    @Persisted var set: MutableSet<Int32>
    @Persisted var map: Map<String, Int32>
}
final class OptionalInt32Holder: Object, ValueHolding {
    @Persisted var list: List<Int32?>
    @Persisted var set: MutableSet<Int32?>
    @Persisted var map: Map<String, Int32?>
}
final class Int64Holder: Object, ValueHolding {
    @Persisted var list: List<Int64>
    @Persisted var set: MutableSet<Int64>
    @Persisted var map: Map<String, Int64>
}
final class OptionalInt64Holder: Object, ValueHolding {
    @Persisted var list: List<Int64?>
    @Persisted var set: MutableSet<Int64?>
    @Persisted var map: Map<String, Int64?>
}
final class FloatHolder: Object, ValueHolding {
    @Persisted var list: List<Float>
    @Persisted var set: MutableSet<Float>
    @Persisted var map: Map<String, Float>
}
final class OptionalFloatHolder: Object, ValueHolding {
    @Persisted var list: List<Float?>
    @Persisted var set: MutableSet<Float?>
    @Persisted var map: Map<String, Float?>
}
final class DoubleHolder: Object, ValueHolding {
    @Persisted var list: List<Double>
    @Persisted var set: MutableSet<Double>
    @Persisted var map: Map<String, Double>
}
final class OptionalDoubleHolder: Object, ValueHolding {
    @Persisted var list: List<Double?>
    @Persisted var set: MutableSet<Double?>
    @Persisted var map: Map<String, Double?>
}
final class StringHolder: Object, ValueHolding {
    @Persisted var list: List<String>
    @Persisted var set: MutableSet<String>
    @Persisted var map: Map<String, String>
}
final class OptionalStringHolder: Object, ValueHolding {
    @Persisted var list: List<String?>
    @Persisted var set: MutableSet<String?>
    @Persisted var map: Map<String, String?>
}
final class DataHolder: Object, ValueHolding {
    @Persisted var list: List<Data>
    @Persisted var set: MutableSet<Data>
    @Persisted var map: Map<String, Data>
}
final class OptionalDataHolder: Object, ValueHolding {
    @Persisted var list: List<Data?>
    @Persisted var set: MutableSet<Data?>
    @Persisted var map: Map<String, Data?>
}
final class DateHolder: Object, ValueHolding {
    @Persisted var list: List<Date>
    @Persisted var set: MutableSet<Date>
    @Persisted var map: Map<String, Date>
}
final class OptionalDateHolder: Object, ValueHolding {
    @Persisted var list: List<Date?>
    @Persisted var set: MutableSet<Date?>
    @Persisted var map: Map<String, Date?>
}
final class Decimal128Holder: Object, ValueHolding {
    @Persisted var list: List<Decimal128>
    @Persisted var set: MutableSet<Decimal128>
    @Persisted var map: Map<String, Decimal128>
}
final class OptionalDecimal128Holder: Object, ValueHolding {
    @Persisted var list: List<Decimal128?>
    @Persisted var set: MutableSet<Decimal128?>
    @Persisted var map: Map<String, Decimal128?>
}
final class ObjectIdHolder: Object, ValueHolding {
    @Persisted var list: List<ObjectId>
    @Persisted var set: MutableSet<ObjectId>
    @Persisted var map: Map<String, ObjectId>
}
final class OptionalObjectIdHolder: Object, ValueHolding {
    @Persisted var list: List<ObjectId?>
    @Persisted var set: MutableSet<ObjectId?>
    @Persisted var map: Map<String, ObjectId?>
}
final class UUIDHolder: Object, ValueHolding {
    @Persisted var list: List<UUID>
    @Persisted var set: MutableSet<UUID>
    @Persisted var map: Map<String, UUID>
}
final class OptionalUUIDHolder: Object, ValueHolding {
    @Persisted var list: List<UUID?>
    @Persisted var set: MutableSet<UUID?>
    @Persisted var map: Map<String, UUID?>
}
final class AnyRealmValueHolder: Object, ValueHolding {
    @Persisted var list: List<AnyRealmValue>
    @Persisted var set: MutableSet<AnyRealmValue>
    @Persisted var map: Map<String, AnyRealmValue>
}
final class MoneyHolder: Object, ValueHolding {
    @Persisted var list: List<Money>
    @Persisted var set: MutableSet<Money>
    @Persisted var map: Map<String, Money>
}
final class OptionalMoneyHolder: Object, ValueHolding {
    @Persisted var list: List<Money?>
    @Persisted var set: MutableSet<Money?>
    @Persisted var map: Map<String, Money?>
}

/// Three distinct values of a type, in ascending order where the type is ordered (nil first).
protocol ValueSamples: RealmCollectionValue {
    static var samples: [Self] { get }
}

extension Bool: ValueSamples { static var samples: [Bool] { [false, true, true] } }
extension Int: ValueSamples { static var samples: [Int] { [-5, 2, 40] } }
extension Int8: ValueSamples { static var samples: [Int8] { [-5, 2, 40] } }
extension Int16: ValueSamples { static var samples: [Int16] { [-5, 2, 40] } }
extension Int32: ValueSamples { static var samples: [Int32] { [-5, 2, 40] } }
extension Int64: ValueSamples { static var samples: [Int64] { [-5, 2, 40] } }
extension Float: ValueSamples { static var samples: [Float] { [-1.5, 0.25, 8] } }
extension Double: ValueSamples { static var samples: [Double] { [-1.5, 0.25, 8] } }
extension String: ValueSamples { static var samples: [String] { ["a", "b", "c"] } }
extension Data: ValueSamples { static var samples: [Data] { [Data(), Data([1, 9]), Data([2])] } }
extension Date: ValueSamples {
    static var samples: [Date] { [Date(timeIntervalSince1970: -10), Date(timeIntervalSince1970: 1.5), Date(timeIntervalSince1970: 1e9)] }
}
extension Decimal128: ValueSamples { static var samples: [Decimal128] { [Decimal128(-5), Decimal128(2), Decimal128(40)] } }
extension ObjectId: ValueSamples {
    static var samples: [ObjectId] {
        ["000000000000000000000001", "000000000000000000000002", "0000000000000000000000ff"].compactMap { try? ObjectId(string: $0) }
    }
}
extension UUID: ValueSamples {
    static var samples: [UUID] {
        ["00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002",
         "F0000000-0000-0000-0000-000000000000"].compactMap(UUID.init(uuidString:))
    }
}
extension AnyRealmValue: ValueSamples { static var samples: [AnyRealmValue] { [.int(-5), .double(2.5), .decimal128(Decimal128(40))] } }
extension Money: ValueSamples { static var samples: [Money] { [Money(Decimal128(-5)), Money(Decimal128(2)), Money(Decimal128(40))] } }
extension Optional: ValueSamples where Wrapped: ValueSamples & _PersistableInsideOptional {
    static var samples: [Wrapped?] { [nil, Wrapped.samples[0], Wrapped.samples[2]] }
}

/// Every element type Realm allows in collections, plain and optional.
enum ElementType: String, CaseIterable, Sendable {
    case bool, int, int8, int16, int32, int64, float, double, string, data, date, decimal128, objectId, uuid
    case anyRealmValue, money
    case optionalBool, optionalInt, optionalInt8, optionalInt16, optionalInt32, optionalInt64, optionalFloat
    case optionalDouble, optionalString, optionalData, optionalDate, optionalDecimal128, optionalObjectId
    case optionalUUID, optionalMoney
}

/// The collection a generic body runs over.
enum ValueCollectionKind: String, CaseIterable, Sendable {
    case list, mutableSet, map, results, anyRealmCollection
}

/// One generic body per capability, run over every element type and every kind of collection
/// of values: what it checks holds for `List`, `MutableSet`, `Map`, `Results` of values and
/// `AnyRealmCollection` alike.
@Suite struct PrimitiveElementTests {
    let folder = TemporaryFolder()

    @Test(arguments: ElementType.allCases, ValueCollectionKind.allCases)
    func everyElementTypeStoresReadsQueriesAndAggregates(type: ElementType, kind: ValueCollectionKind) throws {
        switch type {
        case .bool: try check(BoolHolder.self, kind, sortable: true)
        case .int: try checkNumeric(IntHolder.self, kind)
        case .int8: try checkNumeric(Int8Holder.self, kind)
        case .int16: try checkNumeric(Int16Holder.self, kind)
        case .int32: try checkNumeric(Int32Holder.self, kind)
        case .int64: try checkNumeric(Int64Holder.self, kind)
        case .float: try checkNumeric(FloatHolder.self, kind)
        case .double: try checkNumeric(DoubleHolder.self, kind)
        case .string: try check(StringHolder.self, kind, sortable: true)
        case .data: try check(DataHolder.self, kind, sortable: true)
        case .date:
            try check(DateHolder.self, kind, sortable: true)
            try checkMinMax(DateHolder.self, kind)
        case .decimal128: try checkNumeric(Decimal128Holder.self, kind)
        case .objectId: try check(ObjectIdHolder.self, kind, sortable: true)
        case .uuid: try check(UUIDHolder.self, kind, sortable: true)
        case .anyRealmValue:
            try check(AnyRealmValueHolder.self, kind, sortable: true)
            try checkMinMax(AnyRealmValueHolder.self, kind)
        case .money: try checkNumeric(MoneyHolder.self, kind)
        case .optionalBool: try check(OptionalBoolHolder.self, kind, sortable: true)
        case .optionalInt: try checkNumeric(OptionalIntHolder.self, kind)
        case .optionalInt8: try checkNumeric(OptionalInt8Holder.self, kind)
        case .optionalInt16: try checkNumeric(OptionalInt16Holder.self, kind)
        case .optionalInt32: try checkNumeric(OptionalInt32Holder.self, kind)
        case .optionalInt64: try checkNumeric(OptionalInt64Holder.self, kind)
        case .optionalFloat: try checkNumeric(OptionalFloatHolder.self, kind)
        case .optionalDouble: try checkNumeric(OptionalDoubleHolder.self, kind)
        case .optionalString: try check(OptionalStringHolder.self, kind, sortable: true)
        case .optionalData: try check(OptionalDataHolder.self, kind, sortable: true)
        case .optionalDate:
            try check(OptionalDateHolder.self, kind, sortable: true)
            try checkMinMax(OptionalDateHolder.self, kind)
        case .optionalDecimal128: try checkNumeric(OptionalDecimal128Holder.self, kind)
        case .optionalObjectId: try check(OptionalObjectIdHolder.self, kind, sortable: true)
        case .optionalUUID: try check(OptionalUUIDHolder.self, kind, sortable: true)
        case .optionalMoney: try checkNumeric(OptionalMoneyHolder.self, kind)
        }
    }

    /// Realm's marker protocols have no requirements, `Optional` is `AddableType` when its
    /// wrapped type is, and `Data` is `SortableType`: code relying on that compiles.
    @Test func valueTypeProtocolsAcceptWhatRealmAccepts() throws {
        struct Points: AddableType, MinMaxType, SortableType {}
        func total<T: AddableType>(_: T.Type) -> String { "\(T.self)" }
        #expect(total(Int?.self) == "Optional<Int>")
        #expect(total(Points.self) == "Points")
        let (_, data) = try holder(DataHolder.self)
        #expect(data.list.sorted().first == Data())
        #expect(data.list.distinct().count == 3)
        let (_, optionals) = try holder(OptionalIntHolder.self)
        let sum: Int = optionals.list.sum()
        #expect(sum == -5 + 40 - 5)  // [-5, nil, 40, -5]
    }

    // MARK: - Fixtures

    /// A managed holder whose list holds the samples (the middle one twice), whose set holds
    /// them once each and whose map holds them under "a", "b", "c".
    func holder<H: ValueHolding>(_: H.Type) throws -> (Realm, H) {
        let realm = try Realm(configuration: folder.configuration([H.self]))
        let holder = H()
        let samples = H.Value.samples
        holder.list.append(objectsIn: [samples[1], samples[0], samples[2], samples[1]])
        holder.set.insert(objectsIn: samples)
        for (key, value) in zip(["a", "b", "c"], samples) { holder.map[key] = value }
        #expect(holder.list.count == 4 && holder.map.count == 3, "unmanaged \(H.Value.self)")
        try realm.write { realm.add(holder) }
        return (realm, holder)
    }

    /// The values the collection of `kind` holds, in its order, made by `body`.
    func withCollection<H: ValueHolding>(_ holder: H, _ kind: ValueCollectionKind,
                                         _ body: (any ValueCollectionUnderTest<H.Value>) throws -> Void) throws
    {
        switch kind {
        case .list: try body(holder.list)
        case .mutableSet: try body(holder.set)
        case .map: try body(MapUnderTest(map: holder.map))
        case .results: try body(holder.list.filter("TRUEPREDICATE"))
        case .anyRealmCollection: try body(AnyRealmCollection(holder.list))
        }
    }

    // MARK: - Generic bodies

    func check<H: ValueHolding>(_ type: H.Type, _ kind: ValueCollectionKind, sortable: Bool) throws {
        typealias T = H.Value
        let (realm, holder) = try holder(type)
        let samples = T.samples
        let distinct = Array(Set(samples))
        try withCollection(holder, kind) { collection in
            let values = collection.values
            let expectedCount = kind == .mutableSet ? distinct.count : kind == .map ? 3 : 4
            #expect(values.count == expectedCount, "\(T.self) \(kind)")
            #expect(collection.realm == realm)
            #expect(!collection.isInvalidated)
            for sample in samples { #expect(values.contains(sample), "\(T.self) \(kind) holds \(sample)") }
            // A query on `self` with an argument of the element type.
            let matching = collection.filtered("self == %@", samples[0])
            #expect(!matching.isEmpty && matching.allSatisfy { $0 == samples[0] }, "\(T.self) \(kind) filter")
            let others = collection.filtered("self != %@", samples[0])
            #expect(others.count == values.count - matching.count, "\(T.self) \(kind) != filter")
            if sortable {
                let ascending = collection.sortedValues(ascending: true)
                #expect(ascending.count == values.count)
                #expect(ascending.first == samples[0], "\(T.self) \(kind) sorted first")
                #expect(collection.sortedValues(ascending: false).first == samples[2], "\(T.self) \(kind) sorted last")
            }
            #expect(Set(collection.distinctValues) == Set(values), "\(T.self) \(kind) distinct")
            #expect(collection.distinctValues.count == Set(values).count)
            // Frozen copies read the same values.
            #expect(collection.frozenValues == values, "\(T.self) \(kind) frozen")
        }
        // Live: what the holder gains shows in every kind of collection.
        try withCollection(holder, kind) { collection in
            let before = collection.values.count
            try realm.write {
                holder.list.append(samples[2])
                holder.map["d"] = samples[2]
                holder.set.remove(samples[0])
            }
            let after = collection.values.count
            switch kind {
            case .mutableSet: #expect(after == before - (samples[0] == samples[1] || samples[0] == samples[2] ? 0 : 1))
            default: #expect(after == before + 1, "\(T.self) \(kind) is live")
            }
        }
        try checkCopy(holder)
    }

    func checkCopy<H: ValueHolding>(_ holder: H) throws {
        // An unmanaged copy made through key-value coding (collections are copied, not shared).
        let copy = H()
        for name in ["list", "set", "map"] { copy.setValue(holder.value(forKey: name), forKey: name) }
        #expect(copy.realm == nil)
        #expect(Array(copy.list) == Array(holder.list))
        #expect(Set(copy.set) == Set(holder.set))
        #expect(copy.map.keys == holder.map.keys)
    }

    func checkMinMax<H: ValueHolding>(_ type: H.Type, _ kind: ValueCollectionKind) throws
    where H.Value.PersistedType: MinMaxType {
        typealias T = H.Value
        let (_, holder) = try holder(type)
        let samples = T.samples
        let smallest = samples.first { !isNil($0) }
        try withCollection(holder, kind) { collection in
            let minimum: T? = collection.minimum()
            let maximum: T? = collection.maximum()
            #expect(minimum == smallest, "\(T.self) \(kind) min")
            #expect(maximum == samples[2], "\(T.self) \(kind) max")
        }
    }

    func checkNumeric<H: ValueHolding>(_ type: H.Type, _ kind: ValueCollectionKind) throws
    where H.Value.PersistedType: MinMaxType & AddableType {
        typealias T = H.Value
        try check(type, kind, sortable: T.self != Money.self && T.self != Money?.self)
        try checkMinMax(type, kind)
        let (_, holder) = try holder(type)
        try withCollection(holder, kind) { collection in
            let values = collection.values.filter { !isNil($0) }
            let total: T = collection.total()
            let mean: Double? = collection.mean()
            let expected = values.map(Self.number).reduce(0, +)
            #expect(abs(Self.number(total) - expected) < 1e-6, "\(T.self) \(kind) sum")
            #expect(abs((mean ?? .nan) - expected / Double(values.count)) < 1e-6, "\(T.self) \(kind) average")
        }
    }

    /// A numeric sample as a Double (through its description, so every numeric type works).
    static func number<T>(_ value: T) -> Double {
        if let money = value as? Money { return money.amount.doubleValue }
        if let money = value as? Money?, let money { return money.amount.doubleValue }
        let text = "\(value)".replacingOccurrences(of: "Optional(", with: "").replacingOccurrences(of: ")", with: "")
        return Double(text) ?? Decimal(string: text).map { Decimal128($0).doubleValue } ?? .nan
    }
}

private func isNil<T>(_ value: T) -> Bool {
    Mirror(reflecting: value).displayStyle == .optional && Mirror(reflecting: value).children.isEmpty
}


/// What the generic bodies ask of a collection of values: written once against Realm's
/// protocols (`RealmCollection` for lists, sets, results and the type-erased collection; the
/// map's own API for `Map`).
protocol ValueCollectionUnderTest<Element> {
    associatedtype Element: ValueSamples
    var realm: Realm? { get }
    var isInvalidated: Bool { get }
    var values: [Element] { get }
    func filtered(_ format: String, _ argument: Element) -> [Element]
    func sortedValues(ascending: Bool) -> [Element]
    var distinctValues: [Element] { get }
    var frozenValues: [Element] { get }
    func minimum<T: _HasPersistedType>() -> T? where T.PersistedType: MinMaxType
    func maximum<T: _HasPersistedType>() -> T? where T.PersistedType: MinMaxType
    func total<T: _HasPersistedType>() -> T where T.PersistedType: AddableType
    func mean() -> Double?
}

extension ValueCollectionUnderTest where Self: RealmCollection {
    var values: [Element] { Array(self) }
    func filtered(_ format: String, _ argument: Element) -> [Element] { Array(filter(format, argument)) }
    func sortedValues(ascending: Bool) -> [Element] { Array(sorted(byKeyPath: "self", ascending: ascending)) }
    var distinctValues: [Element] { Array(distinct(by: ["self"])) }
    var frozenValues: [Element] { Array(freeze()) }
    func minimum<T: _HasPersistedType>() -> T? where T.PersistedType: MinMaxType { min(ofProperty: "self") }
    func maximum<T: _HasPersistedType>() -> T? where T.PersistedType: MinMaxType { max(ofProperty: "self") }
    func total<T: _HasPersistedType>() -> T where T.PersistedType: AddableType { sum(ofProperty: "self") }
    func mean() -> Double? {
        let value: Decimal128? = average(ofProperty: "self")
        return value?.doubleValue
    }
}

extension List: ValueCollectionUnderTest where Element: ValueSamples {}
extension MutableSet: ValueCollectionUnderTest where Element: ValueSamples {}
extension Results: ValueCollectionUnderTest where Element: ValueSamples {}
extension AnyRealmCollection: ValueCollectionUnderTest where Element: ValueSamples {}

/// A `Map` seen through the same questions: its values, in key order.
struct MapUnderTest<Element: ValueSamples>: ValueCollectionUnderTest {
    let map: Map<String, Element>
    var realm: Realm? { map.realm }
    var isInvalidated: Bool { map.isInvalidated }
    var values: [Element] { map.values }
    func filtered(_ format: String, _ argument: Element) -> [Element] { Array(map.filter(format, argument)) }
    func sortedValues(ascending: Bool) -> [Element] { Array(map.sorted(byKeyPath: "self", ascending: ascending)) }
    var distinctValues: [Element] { Array(map.filter("TRUEPREDICATE").distinct(by: ["self"])) }
    var frozenValues: [Element] { map.freeze().values }
    func minimum<T: _HasPersistedType>() -> T? where T.PersistedType: MinMaxType { map.min(ofProperty: "self") }
    func maximum<T: _HasPersistedType>() -> T? where T.PersistedType: MinMaxType { map.max(ofProperty: "self") }
    func total<T: _HasPersistedType>() -> T where T.PersistedType: AddableType { map.sum(ofProperty: "self") }
    func mean() -> Double? {
        let value: Decimal128? = map.average(ofProperty: "self")
        return value?.doubleValue
    }
}

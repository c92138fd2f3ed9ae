import Foundation
import Testing
import Trellis

/// `sum()` of a collection of `AnyRealmValue` is Realm's: realm-core adds mixed numbers as
/// `Decimal128`, so a sum of integers is `.decimal128`, and an empty collection answers
/// `.decimal128(0)` when it is a managed List or MutableSet, `.int(0)` when it is a Map or an
/// unmanaged List/MutableSet (Realm's AddableAnyRealmValue{List,MutableSet,Map}Tests.testSum:
/// `sum().intValue` is nil on a managed list, 0 unmanaged and on maps; `doubleValue(sum())`
/// accepts only `.double` and `.decimal128`).
@Suite struct AnyRealmValueSumTests {
    let ints: [AnyRealmValue] = [.int(1), .int(2), .int(4)]
    let mixed: [AnyRealmValue] = [.int(1), .float(2.5), .double(0.25), .decimal128(Decimal128(10)), .string("x"), .none]

    private func fill(_ holder: MixedAggregateHolder, _ values: [AnyRealmValue]) {
        holder.list.append(objectsIn: values)
        holder.set.insert(objectsIn: values)
        for (index, value) in values.enumerated() { holder.map["k\(index)"] = value }
    }

    private func managedHolder() throws -> (Realm, MixedAggregateHolder) {
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "mixed-sum-\(UUID().uuidString)",
                                                   objectTypes: [MixedAggregateHolder.self]))
        let holder = MixedAggregateHolder()
        try realm.write { realm.add(holder) }
        return (realm, holder)
    }

    @Test func emptyManagedListAndSetSumToDecimalZeroAndMapsToIntZero() throws {
        let (realm, holder) = try managedHolder()
        #expect(holder.list.sum() == .decimal128(Decimal128(0)))
        #expect(holder.list.sum().intValue == nil)
        #expect(holder.set.sum() == .decimal128(Decimal128(0)))
        #expect(holder.map.sum() == .int(0))
        _ = realm
    }

    @Test func emptyUnmanagedCollectionsSumToIntZero() {
        let holder = MixedAggregateHolder()
        #expect(holder.list.sum() == .int(0))
        #expect(holder.set.sum() == .int(0))
        #expect(holder.map.sum() == .int(0))
    }

    @Test func sumsOfIntegersAreDecimal128() throws {
        let unmanaged = MixedAggregateHolder()
        fill(unmanaged, ints)
        let (realm, managed) = try managedHolder()
        try realm.write { fill(managed, ints) }
        for holder in [unmanaged, managed] {
            #expect(holder.list.sum() == .decimal128(Decimal128(7)))
            #expect(holder.set.sum() == .decimal128(Decimal128(7)))
            #expect(holder.map.sum() == .decimal128(Decimal128(7)))
        }
    }

    @Test func numbersOfEveryTypeAreAddedAndOtherValuesSkipped() throws {
        let unmanaged = MixedAggregateHolder()
        fill(unmanaged, mixed)
        let (realm, managed) = try managedHolder()
        try realm.write { fill(managed, mixed) }
        for holder in [unmanaged, managed] {
            for sum in [holder.list.sum(), holder.set.sum(), holder.map.sum()] {
                guard case .decimal128(let total) = sum else {
                    Issue.record("sum \(sum) is not a decimal128")
                    continue
                }
                #expect(abs(total.doubleValue - 13.75) < 1e-9)
            }
        }
    }
}

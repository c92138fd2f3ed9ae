import Foundation
import Testing
import Trellis

final class MixedAggregateHolder: Object {
    @Persisted var list: List<AnyRealmValue>
    @Persisted var set: MutableSet<AnyRealmValue>
    @Persisted var map: Map<String, AnyRealmValue>
}

/// `min()`/`max()` of a collection of `AnyRealmValue` answer with the smallest/largest element
/// as stored: a `.float` stays a `.float` (Realm's MinMaxAnyRealmValue{List,MutableSet,Map}Tests
/// <…, Float>: `XCTAssertEqual(list.min(), values.first)` with `.float(1.1)`), on managed and
/// unmanaged collections alike; numbers of different types are still compared by value.
@Suite struct AnyRealmValueMinMaxTypeTests {
    let floats: [AnyRealmValue] = [.float(2.2), .float(1.1), .float(3.3)]
    let mixed: [AnyRealmValue] = [.int(3), .float(1.5), .double(2.5), .none]

    private func fill(_ holder: MixedAggregateHolder, _ values: [AnyRealmValue]) {
        holder.list.append(objectsIn: values)
        holder.set.insert(objectsIn: values)
        for (index, value) in values.enumerated() { holder.map["k\(index)"] = value }
    }

    private func check(_ holder: MixedAggregateHolder, min: AnyRealmValue, max: AnyRealmValue) {
        #expect(holder.list.min() == min)
        #expect(holder.list.max() == max)
        #expect(holder.set.min() == min)
        #expect(holder.set.max() == max)
        #expect(holder.map.min() == min)
        #expect(holder.map.max() == max)
    }

    @Test func unmanagedFloatsStayFloats() {
        let holder = MixedAggregateHolder()
        fill(holder, floats)
        check(holder, min: .float(1.1), max: .float(3.3))
    }

    @Test func managedFloatsStayFloats() throws {
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "mixed-min-max-\(UUID().uuidString)",
                                                   objectTypes: [MixedAggregateHolder.self]))
        let holder = MixedAggregateHolder()
        try realm.write {
            realm.add(holder)
            fill(holder, floats)
        }
        check(holder, min: .float(1.1), max: .float(3.3))
        #expect(realm.objects(MixedAggregateHolder.self).first?.list.min() == .float(1.1))
    }

    @Test func mixedNumbersCompareByValueAndKeepTheirType() throws {
        let unmanaged = MixedAggregateHolder()
        fill(unmanaged, mixed)
        check(unmanaged, min: .float(1.5), max: .int(3))
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "mixed-min-max-\(UUID().uuidString)",
                                                   objectTypes: [MixedAggregateHolder.self]))
        let holder = MixedAggregateHolder()
        try realm.write {
            realm.add(holder)
            fill(holder, mixed)
        }
        check(holder, min: .float(1.5), max: .int(3))
    }
}

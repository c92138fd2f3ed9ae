import Foundation
import Testing
import Trellis

final class OptionalNumberLists: Object {
    @Persisted var decimals: List<Decimal128?>
    @Persisted var bytes: List<Int8?>
}

/// Realm's `min()`/`max()`/`average()` on collections of optional values, through the generic
/// `min() -> Element?` Realm's PrimitiveListTests call (`XCTAssertNil(array.min())`, then
/// `XCTAssertEqual(array.min(), V.min())`): no values is nil, not `.some(nil)`, and a sized
/// integer (`Int8?`) is found. Before, a managed empty list's `min()` was `.some(nil)` and an
/// unmanaged `List<Int8?>`'s was nil.
@Suite struct OptionalValueAggregateTests {
    let folder = TemporaryFolder()

    @Test func noValuesIsNilNotSomeNil() throws {
        let realm = try Realm(configuration: folder.configuration([OptionalNumberLists.self]))
        let holder = try realm.write { realm.create(OptionalNumberLists.self) }
        let minimum: Decimal128?? = holder.decimals.min()
        let maximum: Decimal128?? = holder.decimals.max()
        #expect(minimum == nil)
        #expect(maximum == nil)
        try realm.write { holder.decimals.append(objectsIn: [nil, 2, 1]) }
        let found: Decimal128?? = holder.decimals.min()
        #expect(found == .some(.some(1)))
    }

    @Test func sizedOptionalIntegersAggregateUnmanaged() {
        let holder = OptionalNumberLists()
        holder.bytes.append(objectsIn: [3, nil, 1, 2])
        let minimum: Int8?? = holder.bytes.min()
        let maximum: Int8?? = holder.bytes.max()
        #expect(minimum == .some(.some(1)))
        #expect(maximum == .some(.some(3)))
    }
}

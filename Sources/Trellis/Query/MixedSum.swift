import Foundation

/// Realm's `sum()` of a collection of `AnyRealmValue`.
///
/// realm-core adds mixed values into a `Decimal128` (`Sum<Mixed>`: every number, whatever its
/// type, is converted and added; strings, dates and other values are skipped), so the sum of
/// `[.int(1), .int(2)]` is `.decimal128(3)`, not `.int(3)`. What an empty collection answers
/// depends on the collection, as in Realm Swift 10.54:
/// - a managed `List` or `MutableSet`: `.decimal128(0)` (core's sum of no mixed values);
/// - a `Map` (managed: core's `Dictionary::sum` of an empty dictionary is `Mixed{0}`) and an
///   unmanaged `List`/`MutableSet` (Realm answers `@0` when there is nothing to add): `.int(0)`.
extension QueryAggregate {
    /// The `Decimal128` sum of the numbers among `values` (zero when there are none).
    static func mixedSum(_ values: [QueryValue]) -> QueryValue {
        var total = Decimal128(Decimal(0))
        for value in values where !isNaN(value) {
            switch value {
            case .int(let i): total += Decimal128(Decimal(i))
            case .double(let d): total += Decimal128(Decimal(d))
            case .decimal(let d): total += d
            default: break
            }
        }
        return .decimal(total)
    }
}

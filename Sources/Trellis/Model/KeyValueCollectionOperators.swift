import Foundation

/// Realm's key-value coding collection operators on `Results`, `List`, `MutableSet`,
/// `LinkingObjects` and `AnyRealmCollection` (RLMResults/RLMArray `valueForKeyPath:`):
/// - `@count`: the number of elements, an `NSNumber`;
/// - `@min.p`, `@max.p`, `@avg.p`: the aggregate of property `p` (nil when there are no values),
///   `@sum.p`: its sum (0 when there are none); numbers as `NSNumber`, dates as `Date`,
///   decimals as `Decimal128`;
/// - `@unionOfObjects.p`: `p` of every element, in order, as `value(forKey: p)` gives it;
///   `@distinctUnionOfObjects.p`: the same without repeats;
/// - `@unionOfArrays.p`, `@distinctUnionOfArrays.p`: the elements of the collection property
///   `p` of every element, flattened.
/// Only one property may follow an operator, as in Realm ("Nested key paths are not supported
/// yet for KVC collection operators.").
enum KeyValueCollectionOperators {
    /// The operators, by the name that follows `@`: the one list the key path is checked against.
    private enum Operator: String {
        case count, min, max, sum, avg
        case unionOfObjects, distinctUnionOfObjects, unionOfArrays, distinctUnionOfArrays
    }

    /// The value of the operator key path `path` (its first component starts with `@`).
    static func value(of collection: any _KeyValueCollection, path: [String]) -> Any? {
        let keyPath = path.joined(separator: ".")
        guard let first = path.first else { return nil }
        let operatorName = String(first.dropFirst())
        guard let op = Operator(rawValue: operatorName) else {
            throwRealmException("Unsupported KVC collection operator found in key path '\(keyPath)'")
        }
        if op == .count {
            // `@count` takes no property (`@count.age` is not an operator Realm knows).
            guard path.count == 1 else {
                throwRealmException("Unsupported KVC collection operator found in key path '\(keyPath)'")
            }
            return NSNumber(value: collection._elementsForKeyValueCoding.count)
        }
        guard path.count > 1, !path[1].isEmpty else {
            throwRealmException("Missing key path for KVC collection operator \(operatorName) in key path '\(keyPath)'")
        }
        guard path.count == 2 else {
            throwRealmException("Nested key paths are not supported yet for KVC collection operators.")
        }
        let property = path[1]
        let values = collection._elementsForKeyValueCoding.map { KeyValueCoding.value(of: $0, path: [property]) }
        switch op {
        case .count: return nil  // answered above
        case .min: return aggregate(.min, values, operatorName, property)
        case .max: return aggregate(.max, values, operatorName, property)
        case .sum: return aggregate(.sum, values, operatorName, property) ?? NSNumber(value: 0)
        case .avg: return aggregate(.avg, values, operatorName, property)
        case .unionOfObjects: return values.map { $0 as Any }
        case .distinctUnionOfObjects: return distinct(values)
        case .unionOfArrays, .distinctUnionOfArrays:
            if property == "self" {
                throwRealmException("self is not a valid key-path for a KVC array collection operator as '\(operatorName)'.")
            }
            let flat = values.flatMap { value -> [Any] in
                guard let inner = value as? any _KeyValueCollection else { return [] }
                return inner._elementsForKeyValueCoding
            }
            return op == .unionOfArrays ? flat : distinct(flat.map { Optional($0) })
        }
    }

    private static func aggregate(_ op: QueryCollectionOperation, _ values: [Any?], _ name: String,
                                  _ property: String) -> Any?
    {
        let queryValues = values.map { QueryArguments.value($0) }
        for value in queryValues {
            switch value {
            case .null, .int, .double, .decimal: continue
            case .date where op == .min || op == .max: continue
            default:
                throwRealmException("@\(name) is not supported for property '\(property)' of value \(value): only numbers"
                    + (op == .min || op == .max ? " and dates" : "") + " can be aggregated.")
            }
        }
        switch QueryAggregate.apply(op, queryValues) {
        case .int(let i): return NSNumber(value: i)
        case .double(let d): return NSNumber(value: d)
        case .decimal(let d): return d
        case .date(let d): return d
        default: return nil
        }
    }

    /// `values` without repeats (first occurrence kept), compared as query values.
    private static func distinct(_ values: [Any?]) -> [Any] {
        var seen: [QueryValue] = []
        var kept: [Any] = []
        for value in values {
            let key = QueryArguments.value(value)
            if seen.contains(where: { QueryValueComparison.equal($0, key) }) { continue }
            seen.append(key)
            kept.append(value as Any)
        }
        return kept
    }
}

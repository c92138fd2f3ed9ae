import Foundation

// Typed queries over a `Map` property, as Realm's `Query where T: RealmKeyedCollection`:
// membership of a value, ranges and aggregates over the values.

extension Query where T: _QueryMap {
    /// The map holds `value` among its values (`%@ IN map`).
    public func contains(_ value: T._QueryValue) -> Query<Bool> {
        let comparison = QueryComparison(quantifier: .single, lhs: Self.argument(value), op: .in, options: [],
                                         rhs: .keyPath(path))
        return Query<Bool>(.predicate(.comparison(comparison), subquery: nil))
    }

    /// At least one of the map's values is one of `values` (`ANY map IN %@`).
    public func containsAny<S: Sequence>(in values: S) -> Query<Bool> where S.Element == T._QueryValue {
        compare(.in, .argument(.list(values.map { QueryArguments.value($0) })), quantifier: .any)
    }

    /// `map.@min`, `map.@max`, `map.@sum` or `map.@avg`: an aggregate over the values.
    func valueAggregate<V>(_ op: QueryCollectionOperation) -> Query<V> {
        var path = self.path
        let outerPrefix = collectionPrefix.flatMap { $0 < path.components.count ? $0 : nil }
        path.components.append(.operation(op))
        return Query<V>(.path(path, collectionPrefix: outerPrefix))
    }
}

extension Query where T: _QueryMap, T._QueryValue: _QueryNumeric & Comparable {
    /// The smallest value (`@min`).
    public var min: Query<T._QueryValue> { valueAggregate(.min) }
    /// The largest value (`@max`).
    public var max: Query<T._QueryValue> { valueAggregate(.max) }
    /// The sum of the values (`@sum`).
    public var sum: Query<T._QueryValue> { valueAggregate(.sum) }
    /// The average of the values (`@avg`).
    public var avg: Query<T._QueryValue> { valueAggregate(.avg) }

    /// Every value lies within the closed range (`@min >= low && @max <= high`).
    public func contains(_ range: ClosedRange<T._QueryValue>) -> Query<Bool> {
        min.compare(.greaterOrEqual, Self.argument(range.lowerBound))
            && max.compare(.lessOrEqual, Self.argument(range.upperBound))
    }

    /// Every value lies within the half-open range (`@min >= low && @max < high`).
    public func contains(_ range: Range<T._QueryValue>) -> Query<Bool> {
        min.compare(.greaterOrEqual, Self.argument(range.lowerBound))
            && max.compare(.less, Self.argument(range.upperBound))
    }
}

extension Query where T: _QueryCollection, T._QueryElement: _QueryNumeric & Comparable {
    /// Every element lies within the half-open range (`@min >= low && @max < high`).
    public func contains(_ range: Range<T._QueryElement>) -> Query<Bool> {
        min.compare(.greaterOrEqual, Self.argument(range.lowerBound))
            && max.compare(.less, Self.argument(range.upperBound))
    }
}

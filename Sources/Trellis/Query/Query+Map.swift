import Foundation

// Typed queries over a `Map` property, as Realm's `Query where T: RealmKeyedCollection`:
// membership of a value, the value under a key, keys, values, ranges and aggregates over the
// values.

extension Query where T: RealmKeyedCollection {
    /// The map holds `value` among its values (`%@ IN map`).
    public func contains(_ value: T.Value) -> Query<Bool> {
        let comparison = QueryComparison(quantifier: .single, lhs: Self.argument(value), op: .in, options: [],
                                         rhs: .keyPath(path))
        return Query<Bool>(.predicate(.comparison(comparison), subquery: nil))
    }

    /// At least one of the map's values is one of `values` (`ANY map IN %@`).
    public func containsAny<S: Sequence>(in values: S) -> Query<Bool> where S.Element == T.Value {
        compare(.in, .argument(.list(values.map { QueryArguments.value($0) })), quantifier: .any)
    }

    /// The number of entries (`@count`).
    public var count: Query<Int> { appendingCollectionOperation(.count) }

    /// The value stored under `member` (`map[%@]`).
    public subscript(member: T.Key) -> Query<T.Value> {
        appending(.mapKey(.argument(QueryArguments.value(member))), prefix: nil)
    }

    /// The map's values: comparisons match when ANY value matches (`map.@allValues`).
    public var values: Query<T.Value> {
        appending(.operation(.allValues), prefix: path.components.count + 1)
    }

    /// `map.@min`, `map.@max`, `map.@sum` or `map.@avg`: an aggregate over the values.
    func valueAggregate(_ op: QueryCollectionOperation) -> Query<T.Value> { appendingCollectionOperation(op) }
}

extension Query where T: RealmKeyedCollection, T.Key == String {
    /// The map's keys: comparisons match when ANY key matches (`map.@allKeys`).
    public var keys: Query<String> {
        appending(.operation(.allKeys), prefix: path.components.count + 1)
    }
}

extension Query where T: RealmKeyedCollection, T.Value.PersistedType: _QueryNumeric {
    /// The smallest value (`@min`).
    public var min: Query<T.Value> { valueAggregate(.min) }
    /// The largest value (`@max`).
    public var max: Query<T.Value> { valueAggregate(.max) }
    /// The sum of the values (`@sum`).
    public var sum: Query<T.Value> { valueAggregate(.sum) }
    /// The average of the values (`@avg`).
    public var avg: Query<T.Value> { valueAggregate(.avg) }
}

extension Query where T: RealmKeyedCollection, T.Value: Comparable {
    /// Every value lies within the closed range (`@min >= low && @max <= high`).
    public func contains(_ range: ClosedRange<T.Value>) -> Query<Bool> {
        aggregatesWithin(range.lowerBound, range.upperBound, closed: true)
    }

    /// Every value lies within the half-open range (`@min >= low && @max < high`).
    public func contains(_ range: Range<T.Value>) -> Query<Bool> {
        aggregatesWithin(range.lowerBound, range.upperBound, closed: false)
    }
}

extension Query where T: RealmKeyedCollection, T.Value: OptionalProtocol, T.Value.Wrapped: Comparable {
    /// Every non-nil value lies within the closed range (`@min >= low && @max <= high`).
    public func contains(_ range: ClosedRange<T.Value.Wrapped>) -> Query<Bool> {
        aggregatesWithin(range.lowerBound, range.upperBound, closed: true)
    }

    /// Every non-nil value lies within the half-open range (`@min >= low && @max < high`).
    public func contains(_ range: Range<T.Value.Wrapped>) -> Query<Bool> {
        aggregatesWithin(range.lowerBound, range.upperBound, closed: false)
    }
}

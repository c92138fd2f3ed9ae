import Foundation

/// `[c]` and `[d]` for typed string comparisons.
public struct StringOptions: OptionSet, Sendable {
    /// The raw bits.
    public let rawValue: Int
    /// Creates options from their raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Letters compare without regard to case (`[c]`).
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// Letters compare without regard to accents (`[d]`).
    public static let diacriticInsensitive = StringOptions(rawValue: 2)

    var queryOptions: QueryStringOptions { QueryStringOptions(rawValue: rawValue) }
}

/// Types whose values a typed query can order with `<`, `>`, ranges and `BETWEEN`: Realm's
/// numeric, string and binary types, and (beyond Realm) `ObjectId` and `UUID`. As in Realm, the
/// comparisons are stated on a property's persisted type (`where T.PersistedType:
/// _QueryNumeric`), so custom persistable types, enums and generic code compare too.
public protocol _QueryComparable {}
/// Numeric types (and `Date`, `AnyRealmValue`, as in Realm), for `<`, `>` and `@min`, `@max`,
/// `@sum`, `@avg`.
public protocol _QueryNumeric: _QueryComparable {}
/// Binary and string types, for `CONTAINS`, `BEGINSWITH`, `ENDSWITH`, `==`/`!=` with options
/// and (as in Realm) `<`, `>`.
public protocol _QueryBinary: _QueryComparable {}
/// String types: binary ones that also match `LIKE` patterns and honour `[c]`/`[d]`.
public protocol _QueryString: _QueryBinary {}

extension Int: _QueryNumeric {}
extension Int8: _QueryNumeric {}
extension Int16: _QueryNumeric {}
extension Int32: _QueryNumeric {}
extension Int64: _QueryNumeric {}
extension Float: _QueryNumeric {}
extension Double: _QueryNumeric {}
extension Decimal128: _QueryNumeric {}
extension Date: _QueryNumeric {}
extension String: _QueryString {}
extension Data: _QueryBinary {}
extension ObjectId: _QueryComparable {}
extension UUID: _QueryComparable {}
extension Optional: _QueryComparable where Wrapped: _HasPersistedType, Wrapped.PersistedType: _QueryComparable {}
extension Optional: _QueryNumeric where Wrapped: _HasPersistedType, Wrapped.PersistedType: _QueryNumeric {}
extension Optional: _QueryBinary where Wrapped: _HasPersistedType, Wrapped.PersistedType: _QueryBinary {}
extension Optional: _QueryString where Wrapped: _HasPersistedType, Wrapped.PersistedType: _QueryString {}

// MARK: - Building comparisons

extension Query {
    /// `self <op> value`, with ANY when the key path crosses a collection.
    func compare(_ op: QueryOperator, _ value: QueryExpression, options: QueryStringOptions = [],
                 quantifier: QueryQuantifier? = nil) -> Query<Bool>
    {
        switch node {
        case .expression(let expression):
            // An inner `(…).count` or the like: in a SUBQUERY, it is the element's.
            let comparison = QueryComparison(quantifier: .single, lhs: expression, op: op, options: options, rhs: value)
            return Query<Bool>(.predicate(.comparison(comparison),
                                          subquery: QuerySubqueryParts(collection: nil, element: .comparison(comparison))))
        case .predicate:
            throwRealmException("Cannot compare a condition ('\(self)') with a value; compare its .count instead.")
        case .path(let path, let prefix):
            let comparison = QueryComparison(quantifier: quantifier ?? (prefix == nil ? .single : .any),
                                             lhs: .keyPath(path), op: op, options: options, rhs: value)
            var parts = QuerySubqueryParts(collection: nil, element: .comparison(comparison))
            if let prefix {
                let collection = QueryKeyPath(Array(path.components[..<prefix]))
                let element = QueryKeyPath(variable: "col1", Array(path.components[prefix...]))
                parts = QuerySubqueryParts(collection: collection, element: .comparison(QueryComparison(
                    quantifier: .single, lhs: .keyPath(element), op: op, options: options, rhs: value)))
            }
            return Query<Bool>(.predicate(.comparison(comparison), subquery: parts))
        }
    }

    static func argument(_ value: Any?) -> QueryExpression { .argument(QueryArguments.value(value)) }
}

extension Query {
    /// Equal (objects: the same object).
    public static func == (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.equal, argument(rhs)) }
    /// Not equal.
    public static func != (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.notEqual, argument(rhs)) }

    /// Whether the value is one of `values` (`IN`).
    public func `in`<S: Sequence>(_ values: S) -> Query<Bool> where S.Element == T {
        compare(.in, .argument(.list(values.map { QueryArguments.value($0) })))
    }
}

extension Query where T: _HasPersistedType, T.PersistedType: _QueryComparable {
    /// Greater than.
    public static func > (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.greater, argument(rhs)) }
    /// Greater than or equal.
    public static func >= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.greaterOrEqual, argument(rhs)) }
    /// Less than.
    public static func < (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.less, argument(rhs)) }
    /// Less than or equal.
    public static func <= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.lessOrEqual, argument(rhs)) }
}

extension Query where T: Comparable {
    /// Within the closed range (`BETWEEN {low, high}`).
    public func contains(_ range: ClosedRange<T>) -> Query<Bool> {
        compare(.between, .list([Self.argument(range.lowerBound), Self.argument(range.upperBound)]))
    }

    /// Within the half-open range (`>= low && < high`).
    public func contains(_ range: Range<T>) -> Query<Bool> {
        compare(.greaterOrEqual, Self.argument(range.lowerBound)) && compare(.less, Self.argument(range.upperBound))
    }
}

extension Query where T: OptionalProtocol, T.Wrapped: Comparable {
    /// Within the closed range (`BETWEEN {low, high}`); nil is in no range.
    public func contains(_ range: ClosedRange<T.Wrapped>) -> Query<Bool> {
        compare(.between, .list([Self.argument(range.lowerBound), Self.argument(range.upperBound)]))
    }

    /// Within the half-open range (`>= low && < high`); nil is in no range.
    public func contains(_ range: Range<T.Wrapped>) -> Query<Bool> {
        compare(.greaterOrEqual, Self.argument(range.lowerBound)) && compare(.less, Self.argument(range.upperBound))
    }
}

// MARK: - Collections

extension Query where T: RealmCollection {
    /// The collection holds `element` (`%@ IN collection`).
    public func contains(_ element: T.Element) -> Query<Bool> {
        let comparison = QueryComparison(quantifier: .single, lhs: Self.argument(element), op: .in, options: [],
                                         rhs: .keyPath(path))
        return Query<Bool>(.predicate(.comparison(comparison), subquery: nil))
    }

    /// The collection holds at least one of `elements` (`ANY collection IN %@`).
    public func containsAny<S: Sequence>(in elements: S) -> Query<Bool> where S.Element == T.Element {
        compare(.in, .argument(.list(elements.map { QueryArguments.value($0) })), quantifier: .any)
    }

    /// ANY element equals `element`.
    public static func == (lhs: Query, rhs: T.Element) -> Query<Bool> {
        lhs.compare(.equal, argument(rhs), quantifier: .any)
    }

    /// ANY element differs from `element`.
    public static func != (lhs: Query, rhs: T.Element) -> Query<Bool> {
        lhs.compare(.notEqual, argument(rhs), quantifier: .any)
    }

    /// The elements' aggregate `op`, a value of the element type.
    fileprivate func elementAggregate(_ op: QueryCollectionOperation) -> Query<T.Element> {
        appendingCollectionOperation(op)
    }
}

extension Query where T: RealmCollection, T.Element.PersistedType: _QueryComparable {
    /// ANY element is greater than `element` (`$0.tasks.ratings > 3`).
    public static func > (lhs: Query, rhs: T.Element) -> Query<Bool> {
        lhs.compare(.greater, argument(rhs), quantifier: .any)
    }
    /// ANY element is greater than or equal to `element`.
    public static func >= (lhs: Query, rhs: T.Element) -> Query<Bool> {
        lhs.compare(.greaterOrEqual, argument(rhs), quantifier: .any)
    }
    /// ANY element is less than `element`.
    public static func < (lhs: Query, rhs: T.Element) -> Query<Bool> {
        lhs.compare(.less, argument(rhs), quantifier: .any)
    }
    /// ANY element is less than or equal to `element`.
    public static func <= (lhs: Query, rhs: T.Element) -> Query<Bool> {
        lhs.compare(.lessOrEqual, argument(rhs), quantifier: .any)
    }
}

extension Query where T: RealmCollection, T.Element.PersistedType: _QueryNumeric {
    /// The smallest element (`@min`).
    public var min: Query<T.Element> { elementAggregate(.min) }
    /// The largest element (`@max`).
    public var max: Query<T.Element> { elementAggregate(.max) }
    /// The sum of the elements (`@sum`).
    public var sum: Query<T.Element> { elementAggregate(.sum) }
    /// The average of the elements (`@avg`).
    public var avg: Query<T.Element> { elementAggregate(.avg) }
}

extension Query where T: RealmCollection, T.Element: Comparable {
    /// Every element lies within the range (`@min >= low && @max <= high`).
    public func contains(_ range: ClosedRange<T.Element>) -> Query<Bool> {
        aggregatesWithin(range.lowerBound, range.upperBound, closed: true)
    }

    /// Every element lies within the half-open range (`@min >= low && @max < high`).
    public func contains(_ range: Range<T.Element>) -> Query<Bool> {
        aggregatesWithin(range.lowerBound, range.upperBound, closed: false)
    }
}

extension Query where T: RealmCollection, T.Element: OptionalProtocol, T.Element.Wrapped: Comparable {
    /// Every non-nil element lies within the range (`@min >= low && @max <= high`).
    public func contains(_ range: ClosedRange<T.Element.Wrapped>) -> Query<Bool> {
        aggregatesWithin(range.lowerBound, range.upperBound, closed: true)
    }

    /// Every non-nil element lies within the half-open range (`@min >= low && @max < high`).
    public func contains(_ range: Range<T.Element.Wrapped>) -> Query<Bool> {
        aggregatesWithin(range.lowerBound, range.upperBound, closed: false)
    }
}

extension Query where T: _HasPersistedType, T.PersistedType: _QueryNumeric {
    /// The smallest value of this property over the collection it is reached through (`list.@min.age`).
    public var min: Query<T> { aggregate(.min) }
    /// The largest value over the collection (`list.@max.age`).
    public var max: Query<T> { aggregate(.max) }
    /// The sum over the collection (`list.@sum.age`).
    public var sum: Query<T> { aggregate(.sum) }
    /// The average over the collection (`list.@avg.age`).
    public var avg: Query<T> { aggregate(.avg) }

    /// `list.@op.property`. On a property not reached through a collection the operation ends
    /// the key path (`age.@avg`), and running the query traps as Realm's does, naming the class
    /// ("Property 'Person.age' is not a link or collection and can only appear at the end of a
    /// keypath.").
    private func aggregate(_ op: QueryCollectionOperation) -> Query<T> {
        var path = self.path
        path.components.insert(.operation(op), at: collectionPrefix ?? path.components.count)
        return Query<T>(.path(path, collectionPrefix: nil))
    }
}

// MARK: - Strings and binary data

extension Query where T: _HasPersistedType, T.PersistedType: _QueryBinary {
    /// Contains `value` (`CONTAINS`).
    public func contains(_ value: T, options: StringOptions = []) -> Query<Bool> {
        compare(.contains, Self.argument(value), options: options.queryOptions)
    }

    /// Starts with `value` (`BEGINSWITH`).
    public func starts(with value: T, options: StringOptions = []) -> Query<Bool> {
        compare(.beginsWith, Self.argument(value), options: options.queryOptions)
    }

    /// Ends with `value` (`ENDSWITH`).
    public func ends(with value: T, options: StringOptions = []) -> Query<Bool> {
        compare(.endsWith, Self.argument(value), options: options.queryOptions)
    }

    /// Equals `value` with the options (`==[c]`).
    public func equals(_ value: T, options: StringOptions = []) -> Query<Bool> {
        compare(.equal, Self.argument(value), options: options.queryOptions)
    }

    /// Differs from `value` with the options (`!=[c]`).
    public func notEquals(_ value: T, options: StringOptions = []) -> Query<Bool> {
        compare(.notEqual, Self.argument(value), options: options.queryOptions)
    }
}

extension Query where T: _HasPersistedType, T.PersistedType: _QueryString {
    /// Matches a pattern with `*` and `?` wildcards (`LIKE`).
    public func like(_ value: T, caseInsensitive: Bool = false) -> Query<Bool> {
        compare(.like, Self.argument(value), options: caseInsensitive ? .caseInsensitive : [])
    }
}

// MARK: - Logic

extension Query where T == Bool {
    /// The predicate this query stands for (a Bool property alone means `== true`).
    var predicate: QueryPredicate {
        switch node {
        case .predicate(let predicate, _): return predicate
        case .path(let path, let prefix):
            return .comparison(QueryComparison(quantifier: prefix == nil ? .single : .any, lhs: .keyPath(path),
                                               op: .equal, options: [], rhs: .constant(.bool(true))))
        case .expression(let expression):
            return .comparison(QueryComparison(quantifier: .single, lhs: expression, op: .equal, options: [],
                                               rhs: .constant(.bool(true))))
        }
    }

    private var subqueryParts: QuerySubqueryParts? {
        if case .predicate(_, let parts) = node { return parts }
        return nil
    }

    /// Both conditions hold.
    public static func && (lhs: Query, rhs: Query) -> Query {
        let parts = QuerySubqueryParts.combining(lhs.subqueryParts, rhs.subqueryParts) {
            .conjunction($0, $1, keepingRightGroup: true)
        }
        return Query(.predicate(.conjunction(lhs.predicate, rhs.predicate, keepingRightGroup: true), subquery: parts))
    }

    /// Either condition holds.
    public static func || (lhs: Query, rhs: Query) -> Query {
        let parts = QuerySubqueryParts.combining(lhs.subqueryParts, rhs.subqueryParts) {
            .disjunction($0, $1, keepingRightGroup: true)
        }
        return Query(.predicate(.disjunction(lhs.predicate, rhs.predicate, keepingRightGroup: true), subquery: parts))
    }

    /// The condition does not hold.
    public static prefix func ! (query: Query) -> Query {
        let parts = query.subqueryParts.map { QuerySubqueryParts(collection: $0.collection, element: .not($0.element)) }
        return Query(.predicate(.not(query.predicate), subquery: parts))
    }

    /// How many elements of the collection satisfy this condition (a `SUBQUERY`):
    /// `($0.dogs.age > 5).count > 1`. Inside it, the parts that name no collection are the
    /// element's, as in Realm: `($0.dogs.age > 1 && ($0.dogs.age > 5).count > 0).count` counts
    /// the dogs older than 1 with a dog of their own older than 5.
    public var count: Query<Int> {
        guard let parts = subqueryParts, let collection = parts.collection else {
            throwRealmException("Subqueries must contain a keypath starting with a collection.")
        }
        return Query<Int>(.expression(.subqueryCount(collection: collection, variable: "col1",
                                                     predicate: parts.element)))
    }
}

extension Query where T: PersistableEnum {
    /// The enum's raw value, for comparing with raw values (`$0.status.rawValue == 2`).
    public var rawValue: Query<T.RawValue> { Query<T.RawValue>(node) }
}

// MARK: - Raw and persisted values

extension Query where T: RealmCollection, T.Element: PersistableEnum, T.Element.RawValue: RealmCollectionValue {
    /// The raw values of a collection of enums, for comparing with raw values
    /// (`$0.statuses.rawValue.contains(2)`).
    public var rawValue: Query<AnyRealmCollection<T.Element.RawValue>> { Query<AnyRealmCollection<T.Element.RawValue>>(node) }
}

extension Query where T: RealmKeyedCollection, T.Value: PersistableEnum, T.Value.RawValue: RealmCollectionValue {
    /// The raw values of a map of enums, for comparing with raw values (`$0.statusMap.rawValue["a"] == 2`).
    public var rawValue: Query<Map<T.Key, T.Value.RawValue>> { Query<Map<T.Key, T.Value.RawValue>>(node) }
}

extension Query where T: RealmCollection, T.Element: OptionalProtocol, T.Element.Wrapped: PersistableEnum,
    T.Element.Wrapped.RawValue: _RealmCollectionValueInsideOptional
{
    /// The raw values of a collection of optional enums (nil stays nil).
    public var rawValue: Query<AnyRealmCollection<T.Element.Wrapped.RawValue?>> {
        Query<AnyRealmCollection<T.Element.Wrapped.RawValue?>>(node)
    }
}

extension Query where T: RealmKeyedCollection, T.Value: OptionalProtocol, T.Value.Wrapped: PersistableEnum,
    T.Value.Wrapped.RawValue: _RealmCollectionValueInsideOptional
{
    /// The raw values of a map of optional enums (nil stays nil).
    public var rawValue: Query<Map<T.Key, T.Value.Wrapped.RawValue?>> { Query<Map<T.Key, T.Value.Wrapped.RawValue?>>(node) }
}

extension Query where T: _HasPersistedType {
    /// The property as its persisted type (a custom persistable type's or an enum's stored
    /// form), for the comparisons that type offers (`$0.price.persistableValue > 10`).
    public var persistableValue: Query<T.PersistedType> { Query<T.PersistedType>(node) }
}

extension Query where T: RealmCollection, T.Element.PersistedType: RealmCollectionValue {
    /// The elements as their persisted type.
    public var persistableValue: Query<AnyRealmCollection<T.Element.PersistedType>> {
        Query<AnyRealmCollection<T.Element.PersistedType>>(node)
    }
}

extension Query where T: RealmKeyedCollection, T.Value.PersistedType: RealmCollectionValue {
    /// The values as their persisted type.
    public var persistableValue: Query<Map<T.Key, T.Value.PersistedType>> { Query<Map<T.Key, T.Value.PersistedType>>(node) }
}

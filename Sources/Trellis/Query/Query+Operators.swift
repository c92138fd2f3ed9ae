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

/// Types whose values a typed query can order with `<`, `>`, ranges and `BETWEEN`.
public protocol _QueryComparable {}
/// Numeric types, for `@min`, `@max`, `@sum`, `@avg`.
public protocol _QueryNumeric: _QueryComparable {}
/// Binary and string types, for `CONTAINS`, `BEGINSWITH`, `ENDSWITH` and `==`/`!=` with
/// options (Realm's tag protocol for `Data` queries).
public protocol _QueryBinary {}
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
extension Date: _QueryComparable {}
extension String: _QueryComparable, _QueryString {}
extension ObjectId: _QueryComparable {}
extension UUID: _QueryComparable {}
extension Optional: _QueryComparable where Wrapped: _QueryComparable {}
extension Optional: _QueryNumeric where Wrapped: _QueryNumeric {}
extension Optional: _QueryString where Wrapped: _QueryString {}
extension Data: _QueryBinary {}
extension Optional: _QueryBinary where Wrapped: _QueryBinary {}

// MARK: - Building comparisons

extension Query {
    /// `self <op> value`, with ANY when the key path crosses a collection.
    func compare(_ op: QueryOperator, _ value: QueryExpression, options: QueryStringOptions = [],
                 quantifier: QueryQuantifier? = nil) -> Query<Bool>
    {
        switch node {
        case .expression(let expression):
            let comparison = QueryComparison(quantifier: .single, lhs: expression, op: op, options: options, rhs: value)
            return Query<Bool>(.predicate(.comparison(comparison), subquery: nil))
        case .predicate:
            throwRealmException("Cannot compare a condition ('\(self)') with a value; compare its .count instead.")
        case .path(let path, let prefix):
            let comparison = QueryComparison(quantifier: quantifier ?? (prefix == nil ? .single : .any),
                                             lhs: .keyPath(path), op: op, options: options, rhs: value)
            var parts: QuerySubqueryParts?
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

extension Query where T: _QueryComparable {
    /// Greater than.
    public static func > (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.greater, argument(rhs)) }
    /// Greater than or equal.
    public static func >= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.greaterOrEqual, argument(rhs)) }
    /// Less than.
    public static func < (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.less, argument(rhs)) }
    /// Less than or equal.
    public static func <= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.lessOrEqual, argument(rhs)) }

    /// Within the closed range (`BETWEEN {low, high}`).
    public func contains(_ range: ClosedRange<T>) -> Query<Bool> where T: Comparable {
        compare(.between, .list([Self.argument(range.lowerBound), Self.argument(range.upperBound)]))
    }

    /// Within the half-open range (`>= low && < high`).
    public func contains(_ range: Range<T>) -> Query<Bool> where T: Comparable {
        (self >= range.lowerBound) && (self < range.upperBound)
    }
}

// MARK: - Collections

extension Query where T: _QueryCollection {
    /// The collection holds `element` (`%@ IN collection`).
    public func contains(_ element: T._QueryElement) -> Query<Bool> {
        let comparison = QueryComparison(quantifier: .single, lhs: Self.argument(element), op: .in, options: [],
                                         rhs: .keyPath(path))
        return Query<Bool>(.predicate(.comparison(comparison), subquery: nil))
    }

    /// The collection holds at least one of `elements` (`ANY collection IN %@`).
    public func containsAny<S: Sequence>(in elements: S) -> Query<Bool> where S.Element == T._QueryElement {
        compare(.in, .argument(.list(elements.map { QueryArguments.value($0) })), quantifier: .any)
    }

    /// ANY element equals `element`.
    public static func == (lhs: Query, rhs: T._QueryElement) -> Query<Bool> {
        lhs.compare(.equal, argument(rhs), quantifier: .any)
    }

    /// ANY element differs from `element`.
    public static func != (lhs: Query, rhs: T._QueryElement) -> Query<Bool> {
        lhs.compare(.notEqual, argument(rhs), quantifier: .any)
    }
}

extension Query where T: _QueryCollection, T._QueryElement: _QueryComparable {
    /// ANY element is greater than `element` (`$0.tasks.ratings > 3`).
    public static func > (lhs: Query, rhs: T._QueryElement) -> Query<Bool> {
        lhs.compare(.greater, argument(rhs), quantifier: .any)
    }
    /// ANY element is greater than or equal to `element`.
    public static func >= (lhs: Query, rhs: T._QueryElement) -> Query<Bool> {
        lhs.compare(.greaterOrEqual, argument(rhs), quantifier: .any)
    }
    /// ANY element is less than `element`.
    public static func < (lhs: Query, rhs: T._QueryElement) -> Query<Bool> {
        lhs.compare(.less, argument(rhs), quantifier: .any)
    }
    /// ANY element is less than or equal to `element`.
    public static func <= (lhs: Query, rhs: T._QueryElement) -> Query<Bool> {
        lhs.compare(.lessOrEqual, argument(rhs), quantifier: .any)
    }
}

extension Query where T: _QueryCollection, T._QueryElement: _QueryNumeric & Comparable {
    /// Every element lies within the range (`@min >= low && @max <= high`).
    public func contains(_ range: ClosedRange<T._QueryElement>) -> Query<Bool> {
        let low: Query<T._QueryElement> = appending(.operation(.min), prefix: nil)
        let high: Query<T._QueryElement> = appending(.operation(.max), prefix: nil)
        return low.compare(.greaterOrEqual, Self.argument(range.lowerBound))
            && high.compare(.lessOrEqual, Self.argument(range.upperBound))
    }

    /// The smallest element (`@min`).
    public var min: Query<T._QueryElement> { appending(.operation(.min), prefix: nil) }
    /// The largest element (`@max`).
    public var max: Query<T._QueryElement> { appending(.operation(.max), prefix: nil) }
    /// The sum of the elements (`@sum`).
    public var sum: Query<T._QueryElement> { appending(.operation(.sum), prefix: nil) }
    /// The average of the elements (`@avg`).
    public var avg: Query<T._QueryElement> { appending(.operation(.avg), prefix: nil) }
}

extension Query where T: _QueryNumeric {
    /// The smallest value of this property over the collection it is reached through (`list.@min.age`).
    public var min: Query<T> { aggregate(.min) }
    /// The largest value over the collection (`list.@max.age`).
    public var max: Query<T> { aggregate(.max) }
    /// The sum over the collection (`list.@sum.age`).
    public var sum: Query<T> { aggregate(.sum) }
    /// The average over the collection (`list.@avg.age`).
    public var avg: Query<T> { aggregate(.avg) }

    private func aggregate(_ op: QueryCollectionOperation) -> Query<T> {
        guard let prefix = collectionPrefix else {
            throwRealmException("Invalid keypath '\(self).\(op.rawValue)': Property '\(self)' is not a link or "
                + "collection and can only appear at the end of a keypath.")
        }
        var path = self.path
        path.components.insert(.operation(op), at: prefix)
        return Query<T>(.path(path, collectionPrefix: nil))
    }
}

// MARK: - Strings and binary data

extension Query where T: _QueryBinary {
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

extension Query where T: _QueryString {
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
        var parts: QuerySubqueryParts?
        if let a = lhs.subqueryParts, let b = rhs.subqueryParts, a.collection.description == b.collection.description {
            parts = QuerySubqueryParts(collection: a.collection, element: .conjunction(a.element, b.element))
        }
        return Query(.predicate(.conjunction(lhs.predicate, rhs.predicate), subquery: parts))
    }

    /// Either condition holds.
    public static func || (lhs: Query, rhs: Query) -> Query {
        var parts: QuerySubqueryParts?
        if let a = lhs.subqueryParts, let b = rhs.subqueryParts, a.collection.description == b.collection.description {
            parts = QuerySubqueryParts(collection: a.collection, element: .disjunction(a.element, b.element))
        }
        return Query(.predicate(.disjunction(lhs.predicate, rhs.predicate), subquery: parts))
    }

    /// The condition does not hold.
    public static prefix func ! (query: Query) -> Query {
        Query(.predicate(.not(query.predicate), subquery: nil))
    }

    /// How many elements of the collection satisfy this condition (a `SUBQUERY`):
    /// `($0.dogs.age > 5).count > 1`.
    public var count: Query<Int> {
        guard let parts = subqueryParts else {
            throwRealmException("Subqueries must contain a keypath starting with a collection.")
        }
        return Query<Int>(.expression(.subqueryCount(collection: parts.collection, variable: "col1",
                                                     predicate: parts.element)))
    }
}

extension Query where T: PersistableEnum {
    /// The enum's raw value, for comparing with raw values (`$0.status.rawValue == 2`).
    public var rawValue: Query<T.RawValue> { Query<T.RawValue>(node) }
}

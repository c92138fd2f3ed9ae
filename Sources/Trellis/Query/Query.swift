import Foundation

/// Realm's type-safe query builder: `realm.objects(Person.self).where { $0.dogs.age > 5 }`.
///
/// `$0` is a `Query` of the class; property names come from the model's key paths, so a
/// renamed property is a compile error rather than a runtime one. Comparisons give
/// `Query<Bool>`, combined with `&&`, `||` and `!`. A key path that crosses a collection
/// compares with `ANY`; `.count` on such a comparison is a `SUBQUERY`. The query builds the
/// same tree as the predicate text, and ``description`` renders that text as Realm does
/// (`(ANY dogs.age > %@)`).
@dynamicMemberLookup
public struct Query<T>: CustomStringConvertible {
    let node: QueryNode

    init(_ node: QueryNode) { self.node = node }

    /// The query of a whole object (`$0`).
    init() { node = .path(QueryKeyPath([]), collectionPrefix: nil) }

    /// The predicate text Realm would generate for this query, with `%@` for each value
    /// (``_constructPredicate()``'s text; a key path alone is its path, `dog.age`).
    public var description: String {
        switch node {
        case .path(let path, _): path.description
        default: _constructPredicate().0
        }
    }
}

/// What a ``Query`` holds: a key path, another value expression, or a predicate.
enum QueryNode {
    /// A key path. `collectionPrefix`: how many leading components reach the first collection
    /// (comparisons then use ANY, and `.count` turns them into a SUBQUERY over that prefix).
    case path(QueryKeyPath, collectionPrefix: Int?)
    case expression(QueryExpression)
    /// A predicate; `subquery` is the same condition on one element of a collection, for `.count`
    /// (nil: the condition cannot be part of a SUBQUERY).
    case predicate(QueryPredicate, subquery: QuerySubqueryParts?)
}

/// A condition over the elements of one collection: what `SUBQUERY(collection, $col1, element)`
/// is made of. As in Realm, a key path that reaches no collection (`$0.intCol`, or an inner
/// `(…).count`) stays as it is in `element`, where it is the element's: `collection` is nil
/// when no part of the condition names one, and such a condition is no SUBQUERY on its own.
struct QuerySubqueryParts {
    let collection: QueryKeyPath?
    let element: QueryPredicate

    /// Both conditions' parts joined by `combine`, when they name the same collection or only
    /// one of them names one (Realm allows one collection per SUBQUERY).
    static func combining(_ a: QuerySubqueryParts?, _ b: QuerySubqueryParts?,
                          _ combine: (QueryPredicate, QueryPredicate) -> QueryPredicate) -> QuerySubqueryParts?
    {
        guard let a, let b else { return nil }
        if let first = a.collection, let second = b.collection, first.description != second.description { return nil }
        return QuerySubqueryParts(collection: a.collection ?? b.collection, element: combine(a.element, b.element))
    }
}

// MARK: - Key paths

/// List, MutableSet and LinkingObjects, as seen by the query builder.
public protocol _QueryCollection {
    /// The element type.
    associatedtype _QueryElement
}

extension List: _QueryCollection { public typealias _QueryElement = Element }
extension MutableSet: _QueryCollection { public typealias _QueryElement = Element }
extension LinkingObjects: _QueryCollection { public typealias _QueryElement = Element }

/// Map, as seen by the query builder.
public protocol _QueryMap {
    /// The value type.
    associatedtype _QueryValue
}

extension Map: _QueryMap { public typealias _QueryValue = Value }

/// An optional model object (`Dog?`), whose properties a query can follow.
public protocol _QueryOptionalObject {
    /// The object type.
    associatedtype _QueryWrapped: ObjectBase
}

extension Optional: _QueryOptionalObject where Wrapped: ObjectBase { public typealias _QueryWrapped = Wrapped }

extension Query {
    var path: QueryKeyPath {
        guard case .path(let path, _) = node else {
            throwRealmException("Cannot apply key path to '\(self)': it is not a property.")
        }
        return path
    }

    var collectionPrefix: Int? {
        if case .path(_, let prefix) = node { return prefix }
        return nil
    }

    func appending<Root: ObjectBase, V>(_ keyPath: KeyPath<Root, V>, crossing collection: Bool = false) -> Query<V> {
        appending(propertyPath: QueryKeyPathNames.name(of: keyPath))
    }

    /// The query of a dotted property path from here (`"address.city"`).
    func appending<V>(propertyPath: String) -> Query<V> {
        var path = self.path
        for name in propertyPath.split(separator: ".") {
            path.components.append(.property(String(name)))
        }
        var prefix = collectionPrefix
        if prefix == nil, V.self is any _QueryCollection.Type || V.self is any _QueryMap.Type {
            prefix = path.components.count
        }
        return Query<V>(.path(path, collectionPrefix: prefix))
    }

    /// Every element (a map: every value) of the collection this path ends with lies between
    /// `low` and `high`: `@min >= low && @max <= high`, `@max < high` when `closed` is false.
    /// What `contains(_:)` of a range on a collection or a map builds.
    func aggregatesWithin(_ low: Any?, _ high: Any?, closed: Bool) -> Query<Bool> {
        let min: Query<T> = appendingCollectionOperation(.min), max: Query<T> = appendingCollectionOperation(.max)
        return min.compare(.greaterOrEqual, Self.argument(low))
            && max.compare(closed ? .lessOrEqual : .less, Self.argument(high))
    }

    /// `collection.@count`, `.@min`, …: an operation on the collection this path ends with. A
    /// collection reached through another one keeps the outer one's prefix, so the comparison
    /// still matches ANY outer element and `.count` of it is a SUBQUERY over the outer
    /// collection (`($0.dogs.toys.count > 1).count`).
    func appendingCollectionOperation<V>(_ op: QueryCollectionOperation) -> Query<V> {
        var path = self.path
        let outerPrefix = collectionPrefix.flatMap { $0 < path.components.count ? $0 : nil }
        path.components.append(.operation(op))
        return Query<V>(.path(path, collectionPrefix: outerPrefix))
    }

    func appending<V>(_ component: QueryKeyPathComponent, prefix: Int?) -> Query<V> {
        var path = self.path
        if case .mapKey = component, collectionPrefix == path.components.count {
            path.components.append(component)
            return Query<V>(.path(path, collectionPrefix: nil))
        }
        path.components.append(component)
        return Query<V>(.path(path, collectionPrefix: prefix))
    }
}

extension Query where T: ObjectBase {
    /// A property of the object.
    public subscript<V>(dynamicMember keyPath: KeyPath<T, V>) -> Query<V> {
        appending(keyPath)
    }
}

extension Query where T: _QueryOptionalObject {
    /// A property of the linked object.
    public subscript<V>(dynamicMember keyPath: KeyPath<T._QueryWrapped, V>) -> Query<V> {
        appending(keyPath)
    }
}

extension Query where T: RealmCollection {
    /// A property of the collection's objects: comparisons on it match when ANY object matches.
    public subscript<V>(dynamicMember keyPath: KeyPath<T.Element, V>) -> Query<V> where T.Element: ObjectBase {
        appending(keyPath)
    }

    /// The number of elements (`@count`).
    public var count: Query<Int> { appendingCollectionOperation(.count) }
}

// Map's keys, values, subscripts and aggregates: Query+Map.swift.

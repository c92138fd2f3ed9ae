import Foundation

/// A List, MutableSet or LinkingObjects: filtering, sorting and aggregating it gives live
/// ``Results`` scoped to the collection (`person.dogs.filter("age > 5")`,
/// `scores.filter("self > 3")`).
public protocol _ObjectCollectionQueries {
    /// The element type.
    associatedtype _ObjectElement: RealmCollectionValue
    /// The collection's elements as Results. Not API.
    var _scopedResults: Results<_ObjectElement> { get }
}

extension _ObjectCollectionQueries {
    /// The collection's objects matching the predicate text, as live Results.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<_ObjectElement> {
        _scopedResults.filter(trapping: predicateFormat, arguments: args)
    }

    /// Like ``filter(_:_:)``, throwing on text that does not parse or fit the class.
    public func filter(validating predicateFormat: String, _ args: Any...) throws(Realm.Error)
        -> Results<_ObjectElement>
    {
        try _scopedResults.filter(validating: predicateFormat, arguments: args)
    }

    /// The collection's objects for which the typed query is true.
    public func `where`(_ isIncluded: (Query<_ObjectElement>) -> Query<Bool>) -> Results<_ObjectElement> {
        _scopedResults.where(isIncluded)
    }

    /// The position of the first object matching the predicate text, or nil.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        _scopedResults.index(matching: predicateFormat, arguments: args)
    }

    /// The position of the first object for which the typed query is true, or nil.
    public func index(matching isIncluded: (Query<_ObjectElement>) -> Query<Bool>) -> Int? {
        _scopedResults.index(matching: isIncluded)
    }

    /// The collection's objects sorted on a key path.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<_ObjectElement> {
        _scopedResults.sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The collection's objects sorted by several key paths.
    public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<_ObjectElement>
        where S.Element == SortDescriptor
    {
        _scopedResults.sorted(by: sortDescriptors)
    }

    /// The first object of each distinct combination of values of `keyPaths`.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<_ObjectElement> where S.Element == String {
        _scopedResults.distinct(by: keyPaths)
    }

    /// The smallest value of a property among the objects, or nil.
    public func min<V: _Persistable>(ofProperty property: String) -> V? { _scopedResults.min(ofProperty: property) }
    /// The largest value of a property among the objects, or nil.
    public func max<V: _Persistable>(ofProperty property: String) -> V? { _scopedResults.max(ofProperty: property) }
    /// The sum of a numeric property over the objects.
    public func sum<V: _Persistable>(ofProperty property: String) -> V { _scopedResults.sum(ofProperty: property) }
    /// The average of a numeric property over the objects, or nil.
    public func average<V: _Persistable>(ofProperty property: String) -> V? {
        _scopedResults.average(ofProperty: property)
    }
}

/// Realm's message for a query on an unmanaged collection (`kind`: Realm's class name for it).
private func unmanagedQueryTrap(_ kind: String) -> Never {
    throwRealmException("This method may only be called on \(kind) instances retrieved from an RLMRealm")
}

/// Results over a managed collection: its objects, or its values.
private func scopedResults<Element: RealmCollectionValue>(_ binding: CollectionBinding) -> Results<Element> {
    binding.verifyReadable()
    let isObjects = Element.self is ObjectBase.Type
    return Results(core: binding.core, source: isObjects ? .collection(binding.location) : .values(binding.location))
}

extension List: _ObjectCollectionQueries {
    /// Not API.
    public var _scopedResults: Results<Element> {
        guard let binding else { unmanagedQueryTrap("RLMArray") }
        return scopedResults(binding)
    }
}

extension MutableSet: _ObjectCollectionQueries {
    /// Not API.
    public var _scopedResults: Results<Element> {
        guard let binding else { unmanagedQueryTrap("RLMSet") }
        return scopedResults(binding)
    }
}

extension LinkingObjects: _ObjectCollectionQueries {
    /// Not API.
    public var _scopedResults: Results<Element> {
        guard let results else { unmanagedQueryTrap("RLMLinkingObjects") }
        return results
    }
}

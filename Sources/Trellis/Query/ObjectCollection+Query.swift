import Foundation

/// A List, MutableSet or LinkingObjects: filtering, sorting and aggregating it gives live
/// ``Results`` scoped to the collection (`person.dogs.filter("age > 5")`,
/// `scores.filter("self > 3")`).
public protocol _ObjectCollectionQueries {
    /// The element type.
    associatedtype _ObjectElement: RealmCollectionValue
    /// The collection's elements as Results. Not API.
    var _scopedResults: Results<_ObjectElement> { get }
    /// The elements of an unmanaged collection (aggregated in memory); nil once managed. Not API.
    var _unmanagedElements: [_ObjectElement]? { get }
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

    /// The position of the first object matching the predicate text, or nil. On an unmanaged
    /// collection the predicate is evaluated on each element in memory, as in Realm.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        if let elements = _unmanagedElements {
            return UnmanagedPredicate.firstIndex(in: elements, matching: UnmanagedPredicate.parse(predicateFormat, args))
        }
        return _scopedResults.index(matching: predicateFormat, arguments: args)
    }

    /// The position of the first object for which the typed query is true, or nil (evaluated in
    /// memory on an unmanaged collection).
    public func index(matching isIncluded: (Query<_ObjectElement>) -> Query<Bool>) -> Int? {
        if let elements = _unmanagedElements {
            return UnmanagedPredicate.firstIndex(in: elements, matching: isIncluded(Query<_ObjectElement>()).predicate)
        }
        return _scopedResults.index(matching: isIncluded)
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

    /// The smallest value of a property among the objects (`"self"` for values), or nil.
    public func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        if let elements = _unmanagedElements { return UnmanagedAggregate.compute(.min, property, of: elements) }
        return _scopedResults.min(ofProperty: property)
    }
    /// The largest value of a property among the objects (`"self"` for values), or nil.
    public func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        if let elements = _unmanagedElements { return UnmanagedAggregate.compute(.max, property, of: elements) }
        return _scopedResults.max(ofProperty: property)
    }
    /// The sum of a numeric property over the objects (`"self"` for values).
    public func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType {
        if let elements = _unmanagedElements {
            if let sum: T = UnmanagedAggregate.compute(.sum, property, of: elements) { return sum }
            throwRealmException("Cannot sum '\(property)' as \(T.self).")
        }
        return _scopedResults.sum(ofProperty: property)
    }
    /// The average of a numeric property over the objects (`"self"` for values), or nil.
    public func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType {
        if let elements = _unmanagedElements { return UnmanagedAggregate.compute(.avg, property, of: elements) }
        return _scopedResults.average(ofProperty: property)
    }

    /// The elements at `indexes`, in order; traps with Realm's message for an index out of
    /// bounds. An unmanaged collection answers from its elements, as in Realm.
    public func objects(at indexes: IndexSet) -> [_ObjectElement] {
        guard let elements = _unmanagedElements else { return _scopedResults.objects(at: indexes) }
        if let last = indexes.last, last >= elements.count {
            throwRealmException("Indexes for collection are out of bounds.")
        }
        return indexes.map { elements[$0] }
    }
}

/// Realm's message for a query, a freeze or another managed-only call on an unmanaged collection
/// (`kind`: Realm's class name for it: RLMArray, RLMSet, RLMDictionary).
func unmanagedCollectionTrap(_ kind: String) -> Never {
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
    public var _unmanagedElements: [Element]? {
        if case .unmanaged(let elements) = storage { return elements }
        return nil
    }

    /// Not API.
    public var _scopedResults: Results<Element> {
        if case .nested(let nested) = storage { return nestedResults(nested, "List") }
        guard let binding else { unmanagedCollectionTrap("RLMArray") }
        return scopedResults(binding)
    }
}

/// Results over the values of a collection nested in an `AnyRealmValue`.
private func nestedResults<Element: RealmCollectionValue>(_ nested: NestedCollectionBinding, _ kind: String)
    -> Results<Element>
{
    nested.verifyReadable(kind)
    return Results(core: nested.core, source: .nestedValues(nested))
}

extension MutableSet: _ObjectCollectionQueries {
    /// Not API.
    public var _unmanagedElements: [Element]? {
        if case .unmanaged(let elements) = storage { return elements }
        return nil
    }

    /// Not API.
    public var _scopedResults: Results<Element> {
        guard let binding else { unmanagedCollectionTrap("RLMSet") }
        return scopedResults(binding)
    }
}

extension LinkingObjects: _ObjectCollectionQueries {
    /// Not API: a LinkingObjects is never aggregated in memory.
    public var _unmanagedElements: [Element]? { nil }

    /// Not API.
    public var _scopedResults: Results<Element> {
        guard let results else { unmanagedCollectionTrap("RLMLinkingObjects") }
        return results
    }
}

extension Map {
    /// The values of an unmanaged map (aggregated in memory); nil once managed.
    var unmanagedValues: [Value]? {
        if case .unmanaged(let entries) = storage { return Array(entries.values) }
        return nil
    }

    /// The map's values as live Results (in key order).
    var valueResults: Results<Value> {
        if case .nested(let nested) = storage { return nestedResults(nested, "Dictionary") }
        guard let binding else { unmanagedCollectionTrap("RLMDictionary") }
        binding.verifyReadable()
        // A map of objects filters and sorts on the objects' properties, as Realm's does.
        if binding.location.field.isLink { return Results(core: binding.core, source: .collection(binding.location)) }
        return Results(core: binding.core, source: .values(binding.location))
    }

    /// The values for which the typed query is true, as live Results: `map.where { $0 > 3 }`.
    public func `where`(_ isIncluded: (Query<Value>) -> Query<Bool>) -> Results<Value> {
        valueResults.where(isIncluded)
    }

    /// The values matching Realm's predicate text on `self`, as live Results.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Value> {
        valueResults.filter(trapping: predicateFormat, arguments: args)
    }

    /// The values sorted.
    public func sorted(ascending: Bool = true) -> Results<Value> { valueResults.sorted(ascending: ascending) }

    /// The values sorted on a key path (`"self"` for values).
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Value> {
        valueResults.sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The smallest value of a property of the values (`"self"`), or nil.
    public func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        if let values = unmanagedValues { return UnmanagedAggregate.compute(.min, property, of: values) }
        return valueResults.min(ofProperty: property)
    }
    /// The largest value of a property of the values (`"self"`), or nil.
    public func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        if let values = unmanagedValues { return UnmanagedAggregate.compute(.max, property, of: values) }
        return valueResults.max(ofProperty: property)
    }
    /// The sum of a property of the values (`"self"`).
    public func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType {
        if let values = unmanagedValues {
            if let sum: T = UnmanagedAggregate.compute(.sum, property, of: values) { return sum }
            throwRealmException("Cannot sum '\(property)' as \(T.self).")
        }
        // realm-core's sum of an empty dictionary is the integer 0, whatever the value type
        // (a `Map<String, AnyRealmValue>` answers `.int(0)`, a List of them `.decimal128(0)`).
        if property == "self", isEmpty, let zero: T = UnmanagedAggregate.convert(.int(0), to: T.self) { return zero }
        return valueResults.sum(ofProperty: property)
    }
    /// The average of a property of the values (`"self"`), or nil.
    public func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType {
        if let values = unmanagedValues { return UnmanagedAggregate.compute(.avg, property, of: values) }
        return valueResults.average(ofProperty: property)
    }
}

// Constrained on the stored type only, as Realm's `RealmKeyedCollection` extensions are: generic
// code that knows `V.PersistedType: MinMaxType` (a custom persistable, an enum) calls them too.
extension Map where Value.PersistedType: MinMaxType {
    /// The smallest value, or nil when empty.
    public func min() -> Value? { min(ofProperty: "self") }
    /// The largest value, or nil when empty.
    public func max() -> Value? { max(ofProperty: "self") }
}

extension Map where Value.PersistedType: AddableType {
    /// The sum of the values.
    public func sum() -> Value { sum(ofProperty: "self") }
    /// The average of the values, or nil when empty.
    public func average<T: _HasPersistedType>() -> T? where T.PersistedType: AddableType {
        average(ofProperty: "self")
    }
}

/// Aggregates of a map of objects on a property its typed key path names, as Realm's
/// `RealmKeyedCollection` extension offers (`map.sum(of: \.price)`); `nil` values are skipped.
extension Map where Value: OptionalProtocol, Value.Wrapped: ObjectBase {
    /// The smallest value of the property a key path names, or nil.
    public func min<T: _HasPersistedType>(of keyPath: KeyPath<Value.Wrapped, T>) -> T?
        where T.PersistedType: MinMaxType
    {
        min(ofProperty: QueryKeyPathNames.name(of: keyPath))
    }

    /// The largest value of the property a key path names, or nil.
    public func max<T: _HasPersistedType>(of keyPath: KeyPath<Value.Wrapped, T>) -> T?
        where T.PersistedType: MinMaxType
    {
        max(ofProperty: QueryKeyPathNames.name(of: keyPath))
    }

    /// The sum of the property a key path names.
    public func sum<T: _HasPersistedType>(of keyPath: KeyPath<Value.Wrapped, T>) -> T
        where T.PersistedType: AddableType
    {
        sum(ofProperty: QueryKeyPathNames.name(of: keyPath))
    }

    /// The average of the property a key path names, or nil.
    public func average<T: _HasPersistedType>(of keyPath: KeyPath<Value.Wrapped, T>) -> T?
        where T.PersistedType: AddableType
    {
        average(ofProperty: QueryKeyPathNames.name(of: keyPath))
    }

    /// The values sorted on the property a key path names (Realm's `sorted(by:ascending:)`).
    public func sorted<T: _HasPersistedType>(by keyPath: KeyPath<Value.Wrapped, T>, ascending: Bool) -> Results<Value>
        where T.PersistedType: SortableType
    {
        sorted(byKeyPath: QueryKeyPathNames.name(of: keyPath), ascending: ascending)
    }
}

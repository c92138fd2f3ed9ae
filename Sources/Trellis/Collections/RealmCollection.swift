import Dispatch
import Foundation

/// What every Realm collection is: a random-access, lazily evaluated collection of
/// ``RealmCollectionValue``s that belongs to one Realm. Not API on its own: see
/// ``RealmCollection``.
public protocol RealmCollectionBase: RandomAccessCollection, LazyCollectionProtocol, CustomStringConvertible,
    ThreadConfined where Element: RealmCollectionValue
{
    /// The element type (Realm's older name for `Element`).
    typealias ElementType = Element
}

/// The collection API shared by ``Results``, ``List``, ``MutableSet``, ``LinkingObjects`` and
/// ``AnyRealmCollection``: code generic over it works with all five.
///
/// ```swift
/// func oldest<C: RealmCollection>(_ dogs: C) -> Dog? where C.Element == Dog {
///     dogs.sorted(byKeyPath: "age", ascending: false).first
/// }
/// ```
public protocol RealmCollection: RealmCollectionBase, Equatable {
    // MARK: Properties

    /// The Realm that manages the collection, or nil for an unmanaged one.
    var realm: Realm? { get }
    /// Whether the collection can no longer be read (its Realm was invalidated, or its owner deleted).
    var isInvalidated: Bool { get }
    /// The number of elements.
    var count: Int { get }
    /// A readable description of the collection.
    var description: String { get }
    /// The first element, or nil when empty.
    var first: Element? { get }
    /// The last element, or nil when empty.
    var last: Element? { get }

    // MARK: Index retrieval

    /// The position of `object`, or nil.
    func index(of object: Element) -> Int?
    /// The position of the first element matching the predicate text, or nil.
    func index(matching predicateFormat: String, _ args: Any...) -> Int?
    /// The position of the first element for which the typed query is true, or nil.
    func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int?
    /// The elements at `indexes`.
    func objects(at indexes: IndexSet) -> [Element]

    // MARK: Filtering, sorting, distinct

    /// The elements matching Realm's predicate text, as live ``Results``.
    func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element>
    /// The elements for which the typed query is true, as live ``Results``.
    func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element>
    /// The elements sorted on a key path (`"self"` for values).
    func sorted(byKeyPath keyPath: String, ascending: Bool) -> Results<Element>
    /// The elements sorted by several key paths, the first deciding first.
    func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Iterator.Element == SortDescriptor
    /// The first element of each distinct combination of values of `keyPaths`.
    func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Iterator.Element == String

    // MARK: Aggregates

    /// The smallest value of a property, or nil when the collection is empty.
    func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType
    /// The largest value of a property, or nil when the collection is empty.
    func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType
    /// The sum of a numeric property (zero for an empty collection).
    func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType
    /// The average of a numeric property, or nil when the collection is empty.
    func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType

    // MARK: Key-value coding

    /// One value per element for the property named `key`.
    func value(forKey key: String) -> Any?
    /// One value per element for a dotted key path.
    func value(forKeyPath keyPath: String) -> Any?
    /// Sets the property named `key` on every element (inside a write transaction).
    func setValue(_ value: Any?, forKey key: String)

    // MARK: Notifications

    /// Calls `block` with the initial contents, then after every commit that changed them.
    func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                 _ block: @escaping (RealmCollectionChange<Self>) -> Void) -> NotificationToken

    // MARK: Frozen collections

    /// Whether the collection belongs to a frozen Realm.
    var isFrozen: Bool { get }
    /// The collection frozen at its Realm's current version.
    func freeze() -> Self
    /// The live collection in a Realm on the calling thread, or nil if it no longer exists.
    func thaw() -> Self?
}

// MARK: - Defaults and conveniences

extension RealmCollection {
    /// The elements sorted on a key path, ascending.
    public func sorted(byKeyPath keyPath: String) -> Results<Element> {
        sorted(byKeyPath: keyPath, ascending: true)
    }

    /// Observes the collection on this thread (see ``observe(keyPaths:on:_:)``).
    public func observe(keyPaths: [String]? = nil, _ block: @escaping (RealmCollectionChange<Self>) -> Void)
        -> NotificationToken
    {
        observe(keyPaths: keyPaths, on: nil, block)
    }
}

extension RealmCollection where Element: ObjectBase {
    /// The objects sorted on a property.
    public func sorted<T: _HasPersistedType>(by keyPath: KeyPath<Element, T>, ascending: Bool = true)
        -> Results<Element> where T.PersistedType: SortableType
    {
        sorted(byKeyPath: QueryKeyPathNames.name(of: keyPath), ascending: ascending)
    }

    /// The smallest value of the property a key path names, or nil.
    public func min<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T? where T.PersistedType: MinMaxType {
        min(ofProperty: QueryKeyPathNames.name(of: keyPath))
    }

    /// The largest value of the property a key path names, or nil.
    public func max<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T? where T.PersistedType: MinMaxType {
        max(ofProperty: QueryKeyPathNames.name(of: keyPath))
    }

    /// The sum of the property a key path names.
    public func sum<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T where T.PersistedType: AddableType {
        sum(ofProperty: QueryKeyPathNames.name(of: keyPath))
    }

    /// The average of the property a key path names, or nil.
    public func average<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T?
        where T.PersistedType: AddableType
    {
        average(ofProperty: QueryKeyPathNames.name(of: keyPath))
    }

    /// The objects made distinct on the properties typed key paths name:
    /// `distinct(by: [\Dog.name, \Dog.age])`.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element>
        where S.Iterator.Element == PartialKeyPath<Element>
    {
        distinct(by: keyPaths.map(QueryKeyPathNames.name))
    }

    /// Observes with typed key paths: `observe(keyPaths: [\Dog.name])`.
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<Self>) -> Void) -> NotificationToken
    {
        observe(keyPaths: keyPaths.map(QueryKeyPathNames.name), on: queue, block)
    }
}

// MARK: - Collections of values

extension RealmCollection where Element: MinMaxType, Element.PersistedType: MinMaxType {
    /// The smallest value, or nil when empty.
    public func min() -> Element? { min(ofProperty: "self") }
    /// The largest value, or nil when empty.
    public func max() -> Element? { max(ofProperty: "self") }
}

extension RealmCollection where Element: OptionalProtocol, Element.Wrapped: MinMaxType & _HasPersistedType,
    Element.Wrapped.PersistedType: MinMaxType
{
    /// The smallest non-nil value, or nil.
    public func min() -> Element.Wrapped? { min(ofProperty: "self") }
    /// The largest non-nil value, or nil.
    public func max() -> Element.Wrapped? { max(ofProperty: "self") }
}

extension RealmCollection where Element: AddableType, Element.PersistedType: AddableType {
    /// The sum of the values (zero when empty).
    public func sum() -> Element { sum(ofProperty: "self") }
    // `average()` is RealmUnderscoredNames.swift's, Realm's form: the result type needs only an
    // addable persisted type (generic code asks for `V.AverageType` constrained that way).
}

extension RealmCollection where Element: OptionalProtocol, Element.Wrapped: AddableType & _HasPersistedType,
    Element.Wrapped.PersistedType: AddableType
{
    /// The sum of the non-nil values (zero when there are none).
    public func sum() -> Element.Wrapped { sum(ofProperty: "self") }
    // `average()` of optional values is the one above (an `Optional` of an addable type is
    // addable): a second one here made `List<Double?>.average()` ambiguous, as it is not in Realm.
}

// Realm's constraint (the persisted type is sortable), so generic code constrained only that
// way can sort; it covers enums and custom persistable types too.
extension RealmCollection where Element.PersistedType: SortableType {
    /// The values sorted.
    public func sorted(ascending: Bool = true) -> Results<Element> {
        sorted(byKeyPath: "self", ascending: ascending)
    }

    /// The distinct values, in first-seen order.
    public func distinct() -> Results<Element> { distinct(by: ["self"]) }
}

// MARK: - Conformances

extension Results: RealmCollectionBase, RealmCollection {}
extension List: RealmCollectionBase, RealmCollection {}
extension MutableSet: RealmCollectionBase, RealmCollection {}
extension LinkingObjects: RealmCollectionBase, RealmCollection {}

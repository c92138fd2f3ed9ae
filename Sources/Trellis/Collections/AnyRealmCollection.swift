import Dispatch
import Foundation

/// Any ``RealmCollection`` of `Element`, type-erased: a `Results`, `List`, `MutableSet`,
/// `LinkingObjects` (or another `AnyRealmCollection`) behind one type, live like the
/// collection it wraps. For stored properties of view models that may hold any of them.
///
/// ```swift
/// var dogs: AnyRealmCollection<Dog> = AnyRealmCollection(realm.objects(Dog.self))
/// dogs = AnyRealmCollection(person.dogs)
/// ```
public struct AnyRealmCollection<Element: RealmCollectionValue>: RealmCollection {
    let base: _AnyRealmCollectionBase<Element>

    /// Wraps `base`.
    public init<C: RealmCollection>(_ base: C) where C.Element == Element {
        if let erased = base as? AnyRealmCollection<Element> {
            self.base = erased.base
        } else {
            self.base = _AnyRealmCollectionBox(base)
        }
    }

    // MARK: Collection

    public typealias Index = Int
    public var startIndex: Int { 0 }
    public var endIndex: Int { base.count }
    public subscript(position: Int) -> Element { base[position] }
    /// Iterates the elements the wrapped collection holds when iteration begins.
    public func makeIterator() -> AnyIterator<Element> { base.makeIterator() }

    // MARK: RealmCollection

    public var realm: Realm? { base.realm }
    public var isInvalidated: Bool { base.isInvalidated }
    public var count: Int { base.count }
    /// `AnyRealmCollection<Dog> <0x…> (\n\t[0] Dog {…}\n)`, as Realm prints it.
    public var description: String { realmDescription(depth: RealmDescription.maximumDepth) }
    public var first: Element? { base.count == 0 ? nil : base[0] }
    public var last: Element? { base.count == 0 ? nil : base[base.count - 1] }
    public func index(of object: Element) -> Int? { base.index(of: object) }
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        base.index(matching: predicateFormat, args)
    }
    public func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int? {
        base.index(matchingQuery: isIncluded(Query<Element>()).predicate)
    }
    public func objects(at indexes: IndexSet) -> [Element] { base.objects(at: indexes) }
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        base.filter(predicateFormat, args)
    }
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        base.filter(query: isIncluded(Query<Element>()).predicate)
    }
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        base.sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }
    public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element>
        where S.Iterator.Element == SortDescriptor
    {
        base.sorted(by: Array(sortDescriptors))
    }
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Iterator.Element == String {
        base.distinct(by: Array(keyPaths))
    }
    public func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        base.results.min(ofProperty: property)
    }
    public func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        base.results.max(ofProperty: property)
    }
    public func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType {
        base.results.sum(ofProperty: property)
    }
    public func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType {
        base.results.average(ofProperty: property)
    }
    public func value(forKey key: String) -> Any? { base.value(forKey: key) }
    public func value(forKeyPath keyPath: String) -> Any? { base.value(forKeyPath: keyPath) }
    public func setValue(_ value: Any?, forKey key: String) { base.setValue(value, forKey: key) }

    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<AnyRealmCollection>) -> Void) -> NotificationToken
    {
        base.observe(keyPaths: keyPaths, on: queue, block)
    }

    public var isFrozen: Bool { base.isFrozen }
    public func freeze() -> AnyRealmCollection { AnyRealmCollection(erasing: base.freeze()) }
    public func thaw() -> AnyRealmCollection? { base.thaw().map { AnyRealmCollection(erasing: $0) } }
    public func _trellisResolver() -> _ThreadSafeResolver { base.resolver() }

    private init(erasing base: _AnyRealmCollectionBase<Element>) { self.base = base }

    /// Equal when they wrap equal collections.
    public static func == (lhs: AnyRealmCollection, rhs: AnyRealmCollection) -> Bool { lhs.base.isEqual(to: rhs.base) }
}

/// The erased collection: every member forwards to the wrapped one. Not API.
class _AnyRealmCollectionBase<Element: RealmCollectionValue> {
    var realm: Realm? { fatalError("abstract") }
    var isInvalidated: Bool { fatalError("abstract") }
    var count: Int { fatalError("abstract") }
    var description: String { fatalError("abstract") }
    subscript(position: Int) -> Element { fatalError("abstract") }
    func makeIterator() -> AnyIterator<Element> { fatalError("abstract") }
    func index(of object: Element) -> Int? { fatalError("abstract") }
    func index(matching text: String, _ args: [Any]) -> Int? { fatalError("abstract") }
    func index(matchingQuery predicate: QueryPredicate) -> Int? { fatalError("abstract") }
    func objects(at indexes: IndexSet) -> [Element] { fatalError("abstract") }
    /// The wrapped collection as Results (for filters, sorts and aggregates).
    var results: Results<Element> { fatalError("abstract") }
    func filter(_ text: String, _ args: [Any]) -> Results<Element> { results.filter(trapping: text, arguments: args) }
    func filter(query predicate: QueryPredicate) -> Results<Element> {
        do { return try results.filter(checked: predicate) } catch { throwRealmException(error.message) }
    }
    func sorted(by descriptors: [SortDescriptor]) -> Results<Element> { results.sorted(by: descriptors) }
    func distinct(by keyPaths: [String]) -> Results<Element> { results.distinct(by: keyPaths) }
    func value(forKey key: String) -> Any? { fatalError("abstract") }
    func value(forKeyPath keyPath: String) -> Any? { fatalError("abstract") }
    func setValue(_ value: Any?, forKey key: String) { fatalError("abstract") }
    func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                 _ block: @escaping (RealmCollectionChange<AnyRealmCollection<Element>>) -> Void) -> NotificationToken
    {
        fatalError("abstract")
    }
    var isFrozen: Bool { fatalError("abstract") }
    func freeze() -> _AnyRealmCollectionBase<Element> { fatalError("abstract") }
    func thaw() -> _AnyRealmCollectionBase<Element>? { fatalError("abstract") }
    func resolver() -> _ThreadSafeResolver { fatalError("abstract") }
    func isEqual(to other: _AnyRealmCollectionBase<Element>) -> Bool { fatalError("abstract") }
}

final class _AnyRealmCollectionBox<C: RealmCollection>: _AnyRealmCollectionBase<C.Element> {
    let base: C

    init(_ base: C) { self.base = base }

    override var realm: Realm? { base.realm }
    override var isInvalidated: Bool { base.isInvalidated }
    override var count: Int { base.count }
    override var description: String { base.description }
    override subscript(position: Int) -> C.Element { base[base.index(base.startIndex, offsetBy: position)] }
    override func makeIterator() -> AnyIterator<C.Element> { AnyIterator(base.makeIterator()) }
    override func index(of object: C.Element) -> Int? { base.index(of: object) }
    override func index(matching text: String, _ args: [Any]) -> Int? {
        if let elements = unmanagedElements {
            return UnmanagedPredicate.firstIndex(in: elements, matching: UnmanagedPredicate.parse(text, args))
        }
        let matching = results.filter(trapping: text, arguments: args)
        return matching.first.flatMap { base.index(of: $0) }
    }
    override func index(matchingQuery predicate: QueryPredicate) -> Int? {
        if let elements = unmanagedElements { return UnmanagedPredicate.firstIndex(in: elements, matching: predicate) }
        return filter(query: predicate).first.flatMap { base.index(of: $0) }
    }
    /// The elements of an unmanaged List or MutableSet (matched in memory, as in Realm).
    private var unmanagedElements: [Any]? { (base as? any _ObjectCollectionQueries)?._unmanagedElementsAny }
    override func objects(at indexes: IndexSet) -> [C.Element] { base.objects(at: indexes) }
    override var results: Results<C.Element> {
        if let results = base as? Results<C.Element> { return results }
        if let scoped = base as? any _ObjectCollectionQueries, let results = scoped._scopedResultsAny as? Results<C.Element> {
            return results
        }
        if let erased = base as? AnyRealmCollection<C.Element> { return erased.base.results }
        throwRealmException("This collection cannot be queried: \(type(of: base)).")
    }
    override func value(forKey key: String) -> Any? { base.value(forKey: key) }
    override func value(forKeyPath keyPath: String) -> Any? { base.value(forKeyPath: keyPath) }
    override func setValue(_ value: Any?, forKey key: String) { base.setValue(value, forKey: key) }
    override func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                          _ block: @escaping (RealmCollectionChange<AnyRealmCollection<C.Element>>) -> Void)
        -> NotificationToken
    {
        base.observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial(let collection): block(.initial(AnyRealmCollection(collection)))
            case .update(let collection, let deletions, let insertions, let modifications):
                block(.update(AnyRealmCollection(collection), deletions: deletions, insertions: insertions,
                              modifications: modifications))
            case .error(let error): block(.error(error))
            }
        }
    }
    override var isFrozen: Bool { base.isFrozen }
    override func freeze() -> _AnyRealmCollectionBase<C.Element> { _AnyRealmCollectionBox(base.freeze()) }
    override func thaw() -> _AnyRealmCollectionBase<C.Element>? { base.thaw().map { _AnyRealmCollectionBox($0) } }
    override func resolver() -> _ThreadSafeResolver {
        let inner = base._trellisResolver()
        return _ThreadSafeResolver { core in (inner.resolve(core) as? C).map { AnyRealmCollection($0) } }
    }
    override func isEqual(to other: _AnyRealmCollectionBase<C.Element>) -> Bool {
        guard let other = other as? _AnyRealmCollectionBox<C> else { return false }
        return base == other.base
    }
}

extension _ObjectCollectionQueries {
    /// The scoped results, type-erased (for ``AnyRealmCollection``). Not API.
    var _scopedResultsAny: Any { _scopedResults }
    /// The elements of an unmanaged collection, type-erased (for ``AnyRealmCollection``).
    var _unmanagedElementsAny: [Any]? { _unmanagedElements.map { $0.map { $0 as Any } } }
}

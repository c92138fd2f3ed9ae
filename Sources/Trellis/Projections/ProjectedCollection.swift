import Dispatch
import Foundation

/// A `List` or `MutableSet` of objects seen as the values of one property of its objects: the
/// type of a projected property declared with `projectTo`, as in Realm.
///
/// ```swift
/// class PersonProjection: Projection<Person> {
///     @Projected(\Person.dogs.projectTo.name) var dogNames: ProjectedCollection<String>
/// }
/// ```
///
/// It is live: it reads the collection and its objects on every access. Setting an element
/// (inside a write transaction) sets the property of the object at that position. A projected
/// `MutableSet` may hold equal values.
public struct ProjectedCollection<Element: RealmCollectionValue>: RandomAccessCollection, CustomStringConvertible,
    ThreadConfined
{
    /// Positions are integers from 0.
    public typealias Index = Int

    private let backing: ProjectedCollectionBacking<Element>

    fileprivate init(_ backing: ProjectedCollectionBacking<Element>) { self.backing = backing }

    /// The position of the first element, 0.
    public var startIndex: Int { 0 }
    /// One past the last position: the number of objects in the collection.
    public var endIndex: Int { backing.count }

    /// The property value of the object at `position`; setting it sets that object's property
    /// (inside a write transaction when managed). Out of bounds traps with Realm's message.
    public subscript(position: Int) -> Element {
        get { backing.value(at: position) }
        nonmutating set { backing.setValue(newValue, at: position) }
    }

    /// The Realm of the collection, or nil when it is unmanaged.
    public var realm: Realm? { backing.realm }
    /// Whether the object owning the collection was deleted or its Realm invalidated.
    public var isInvalidated: Bool { backing.isInvalidated }
    /// Whether the collection belongs to a frozen Realm.
    public var isFrozen: Bool { backing.isFrozen }

    /// The position of the first object whose property equals `object`, or nil.
    public func index(of object: Element) -> Int? { firstIndex(of: object) }

    /// The position of the first element for which `predicate` is true, or nil.
    public func index(matching predicate: (Element) throws -> Bool) rethrows -> Int? { try firstIndex(where: predicate) }

    /// `ProjectedCollection<String> {` then one `[i] value` line per element, as Realm prints it.
    public var description: String {
        var text = "ProjectedCollection<\(Element.self)> {\n"
        for (index, value) in enumerated() { text += "\t[\(index)] \(value)\n" }
        return text + "}"
    }

    /// The collection frozen at its Realm's current version.
    public func freeze() -> ProjectedCollection { ProjectedCollection(backing.freeze()) }

    /// The live collection on the calling thread, or nil if its owner was deleted.
    public func thaw() -> ProjectedCollection? { backing.thaw().map(ProjectedCollection.init) }

    /// Finds the same collection in another Realm of the file. Not API.
    public func _trellisResolver() -> _ThreadSafeResolver { backing.resolver() }

    /// Calls `block` with the initial collection, then after every commit that changed it:
    /// objects added, removed or moved, or (as modifications) a change to a property of one of
    /// its objects; `keyPaths` limits the properties that count (`["name"]`). With `queue`,
    /// `block` runs there.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<ProjectedCollection<Element>>) -> Void)
        -> NotificationToken
    {
        backing.observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial(let backing): block(.initial(ProjectedCollection(backing)))
            case .update(let backing, let deletions, let insertions, let modifications):
                block(.update(ProjectedCollection(backing), deletions: deletions, insertions: insertions,
                              modifications: modifications))
            case .error(let error): block(.error(error))
            }
        }
    }

    /// `observe` delivering on `queue` (Realm's spelling without key paths).
    public func observe(on queue: DispatchQueue?,
                        _ block: @escaping (RealmCollectionChange<ProjectedCollection<Element>>) -> Void)
        -> NotificationToken
    {
        observe(keyPaths: nil, on: queue, block)
    }
}

extension ProjectedCollection: _ProjectedElementPath {
    var elementPropertyName: String { backing.propertyName }
}

/// Turns a `List` or `MutableSet` of objects into a ``ProjectedCollection`` of one property of
/// its objects: `\Person.dogs.projectTo.name`.
@dynamicMemberLookup
public struct CollectionElementMapper<Element: ObjectBase & RealmCollectionValue> {
    let collection: AnyRealmCollection<Element>

    /// The values of the property `member` names, one per object of the collection.
    public subscript<V: RealmCollectionValue>(dynamicMember member: KeyPath<Element, V>) -> ProjectedCollection<V> {
        ProjectedCollection(ProjectedCollectionBox(collection, member, QueryKeyPathNames.name(of: member)))
    }
}

extension List where Element: ObjectBase {
    /// The list seen as the values of one property of its objects, for a `@Projected`
    /// property: `@Projected(\Person.dogs.projectTo.name) var dogNames: ProjectedCollection<String>`.
    public var projectTo: CollectionElementMapper<Element> {
        CollectionElementMapper(collection: AnyRealmCollection(self))
    }
}

extension MutableSet where Element: ObjectBase {
    /// The set seen as the values of one property of its objects, for a `@Projected` property.
    /// The projected values may repeat: it is not a set.
    public var projectTo: CollectionElementMapper<Element> {
        CollectionElementMapper(collection: AnyRealmCollection(self))
    }
}

// MARK: - Backing

/// What a ``ProjectedCollection`` reads: a collection of objects and a key path of them.
private class ProjectedCollectionBacking<Value: RealmCollectionValue> {
    var propertyName: String { fatalError("abstract") }
    var count: Int { fatalError("abstract") }
    var realm: Realm? { fatalError("abstract") }
    var isInvalidated: Bool { fatalError("abstract") }
    var isFrozen: Bool { fatalError("abstract") }
    func value(at position: Int) -> Value { fatalError("abstract") }
    func setValue(_ value: Value, at position: Int) { fatalError("abstract") }
    func freeze() -> ProjectedCollectionBacking<Value> { fatalError("abstract") }
    func thaw() -> ProjectedCollectionBacking<Value>? { fatalError("abstract") }
    func resolver() -> _ThreadSafeResolver { fatalError("abstract") }
    func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                 _ block: @escaping (RealmCollectionChange<ProjectedCollectionBacking<Value>>) -> Void)
        -> NotificationToken
    {
        fatalError("abstract")
    }
}

private final class ProjectedCollectionBox<Item: ObjectBase & RealmCollectionValue, Value: RealmCollectionValue>:
    ProjectedCollectionBacking<Value>
{
    let objects: AnyRealmCollection<Item>
    let keyPath: KeyPath<Item, Value>
    let name: String

    init(_ objects: AnyRealmCollection<Item>, _ keyPath: KeyPath<Item, Value>, _ name: String) {
        self.objects = objects
        self.keyPath = keyPath
        self.name = name
    }

    private func with(_ objects: AnyRealmCollection<Item>) -> ProjectedCollectionBox {
        ProjectedCollectionBox(objects, keyPath, name)
    }

    override var propertyName: String { name }
    override var count: Int { objects.count }
    override var realm: Realm? { objects.realm }
    override var isInvalidated: Bool { objects.isInvalidated }
    override var isFrozen: Bool { objects.isFrozen }

    override func value(at position: Int) -> Value {
        CollectionIndex.check(position, count: objects.count)
        return objects[position][keyPath: keyPath]
    }

    override func setValue(_ value: Value, at position: Int) {
        CollectionIndex.check(position, count: objects.count)
        let object = objects[position]
        if let writable = keyPath as? ReferenceWritableKeyPath<Item, Value> {
            object[keyPath: writable] = value
        } else {
            object[name] = value
        }
    }

    override func freeze() -> ProjectedCollectionBacking<Value> { with(objects.freeze()) }
    override func thaw() -> ProjectedCollectionBacking<Value>? { objects.thaw().map(with) }

    override func resolver() -> _ThreadSafeResolver {
        let inner = objects._trellisResolver()
        let keyPath = self.keyPath, name = self.name
        return _ThreadSafeResolver { core in
            (inner.resolve(core) as? AnyRealmCollection<Item>).map {
                ProjectedCollection(ProjectedCollectionBox($0, keyPath, name))
            }
        }
    }

    override func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                          _ block: @escaping (RealmCollectionChange<ProjectedCollectionBacking<Value>>) -> Void)
        -> NotificationToken
    {
        objects.observe(keyPaths: keyPaths, on: queue) { [keyPath, name] change in
            func box(_ objects: AnyRealmCollection<Item>) -> ProjectedCollectionBacking<Value> {
                ProjectedCollectionBox(objects, keyPath, name)
            }
            switch change {
            case .initial(let objects): block(.initial(box(objects)))
            case .update(let objects, let deletions, let insertions, let modifications):
                block(.update(box(objects), deletions: deletions, insertions: insertions, modifications: modifications))
            case .error(let error): block(.error(error))
            }
        }
    }
}

import Foundation
import Synchronization

/// A projection of an object, as a type: what ``Projection`` is, without its generic class.
/// Code generic over projections (`observe`, `freeze`) is written against it, as in Realm.
public protocol ProjectionObservable: AnyObject, ThreadConfined, SendableMetatype {
    /// The projected class: an ``Object`` or ``EmbeddedObject`` subclass.
    associatedtype Root: ObjectBase
    /// The object being projected.
    var rootObject: Root { get }
    /// A projection of `object`.
    init(projecting object: Root)
}

/// A light view model of an ``Object`` or ``EmbeddedObject``: only the properties it declares
/// with ``Projected``, possibly renamed, derived (`\Person.lastName.localizedUppercase`),
/// reached through links (`\Person.address?.city`) or mapped from a collection
/// (`\Person.friends.projectTo.firstName`), as in Realm.
///
/// ```swift
/// class PersonProjection: Projection<Person> {
///     @Projected(\Person.firstName) var name
///     @Projected(\Person.address?.city) var homeCity
///     @Projected(\Person.friends.projectTo.firstName) var friendsNames: ProjectedCollection<String>
/// }
///
/// let people: Results<PersonProjection> = realm.objects(PersonProjection.self)
/// let one = PersonProjection(projecting: person)
/// ```
///
/// A projection is live: it reads its root object, so it changes when the object does.
/// Setting a projected property inside a write transaction writes the root object. Results of
/// projections filter and sort by the root class's properties (`filter("firstName == 'Ann'")`)
/// or by the projection's key paths (`where { $0.name == "Ann" }`, `sorted(by: \.name)`), which
/// are mapped to the root's. Projections of the same object are equal.
open class Projection<Root: ObjectBase & RealmCollectionValue>: RealmCollectionValue, ProjectionObservable,
    CustomStringConvertible
{
    /// The root class's stored type (a projection is stored as its object). Not API.
    public typealias PersistedType = Root

    /// The object being projected.
    public let rootObject: Root

    /// A projection of `object` (managed or not). Traps with Realm's message when a
    /// `@Projected` key path does not start with a persisted property.
    public required init(projecting object: Root) {
        rootObject = object
        // Made now, so a projection that cannot work traps where it is made.
        _ = ProjectionSchema.of(self)
    }

    /// Projections of the same object (the same row of the same Realm, or the same unmanaged
    /// object) are equal.
    public static func == (lhs: Projection, rhs: Projection) -> Bool {
        ProjectionSchema.isSameRoot(lhs.rootObject, rhs.rootObject)
    }

    /// Hashes the projected object's identity (its class and row when managed).
    public func hash(into hasher: inout Hasher) {
        ProjectionSchema.hashRoot(rootObject, into: &hasher)
    }

    /// The projection's class and root class, then each projected property with the key path
    /// it reads and its value, as Realm prints a projection.
    open var description: String {
        let address = Unmanaged.passUnretained(rootObject).toOpaque()
        let lines = ProjectionSchema.of(self).properties.map { property in
            "\t\(property.label)(\\.\(property.realmKeyPath)) = \(rootObject[keyPath: property.keyPath] ?? "nil");"
        }
        return "\(type(of: self))<\(type(of: rootObject))> <\(address)> {\n\t"
            + lines.joined(separator: "\n") + "\n}"
    }

    // MARK: - _Persistable (a projection is stored as its object)

    /// The root class's property type. Not API.
    public class var _trellisTypeInfo: _PropertyTypeInfo { Root._trellisTypeInfo }

    /// Projections have no default value. Not API.
    public class func _trellisDefaultValue() -> Self {
        throwRealmException("A Projection cannot be the type of a @Persisted property: persist '\(Root.self)' instead.")
    }

    /// The projection of the object a link column holds. Not API.
    public class func _trellisRead(_ row: _RowReader, _ column: Int) -> Self {
        Self(projecting: Root._trellisRead(row, column))
    }

    /// Stores the projected object. Not API.
    public class func _trellisEncode(_ value: Projection, _ context: _EncodingContext) -> _StoredValue {
        Root._trellisEncode(value.rootObject, context)
    }

    /// Results over the root class hold projections of its objects. Not API.
    public class func _trellisElement(for object: ObjectBase) -> Self {
        guard let root = object as? Root else {
            throwRealmException("Trellis internal error: '\(type(of: object))' is not a '\(Root.self)'.")
        }
        return Self(projecting: root)
    }
}

// MARK: - ThreadConfined

extension Projection {
    /// The Realm of the projected object, or nil when it is unmanaged.
    public var realm: Realm? { rootObject.realm }

    /// Whether the projected object was deleted or its Realm invalidated.
    public var isInvalidated: Bool { rootObject.isInvalidated }

    /// Whether the projected object belongs to a frozen Realm.
    public var isFrozen: Bool { realm?.isFrozen ?? false }

    /// A projection of the object frozen at its Realm's current version: readable from any
    /// thread, never changing. Unmanaged objects cannot be frozen (Realm's message).
    public func freeze() -> Self { Self(projecting: rootObject.freeze()) }

    /// A projection of the live object on the calling thread (`self` when it is live), or nil
    /// when the object was deleted since it was frozen.
    public func thaw() -> Self? { rootObject.thaw().map { Self(projecting: $0) } }

    /// Finds the projected object in another Realm of the file. Not API.
    public func _trellisResolver() -> _ThreadSafeResolver {
        let inner = rootObject._trellisResolver()
        return _ThreadSafeResolver { core in (inner.resolve(core) as? Root).map { Self(projecting: $0) } }
    }
}

// MARK: - Schema

/// The projected properties of a projection class, found once per class from its
/// `@Projected` fields.
struct ProjectionSchema: Sendable {
    struct Property: @unchecked Sendable {
        // @unchecked Sendable: key paths are immutable.
        /// The Swift name in the projection (`name`).
        let label: String
        /// The key path of the root class it reads.
        let keyPath: AnyKeyPath
        /// The root's persisted properties it goes through (`"address.city"`).
        let originKeyPath: String
        /// The key path as Realm names it in descriptions: for a projected collection, the
        /// collection itself (`"friends"`, where ``originKeyPath`` is `"friends.firstName"`).
        let realmKeyPath: String
    }

    let properties: [Property]

    private static let cache = Mutex<[ObjectIdentifier: ProjectionSchema]>([:])

    /// The schema of `projection`'s class.
    static func of(_ projection: some ProjectionObservable) -> ProjectionSchema {
        let id = ObjectIdentifier(type(of: projection))
        if let known = cache.withLock({ $0[id] }) { return known }
        var properties = [Property]()
        // Superclasses' properties first, as they are declared.
        var mirrors = [Mirror]()
        var mirror: Mirror? = Mirror(reflecting: projection)
        while let current = mirror {
            mirrors.insert(current, at: 0)
            mirror = current.superclassMirror
        }
        for child in mirrors.flatMap(\.children) {
            guard let projected = child.value as? any AnyProjected, let name = child.label else { continue }
            let label = name.hasPrefix("_") ? String(name.dropFirst()) : name
            let paths = projected.originKeyPaths(label: label)
            properties.append(Property(label: label, keyPath: projected.projectedKeyPath,
                                       originKeyPath: paths.dotted, realmKeyPath: paths.realmName))
        }
        let schema = ProjectionSchema(properties: properties)
        cache.withLock { $0[id] = schema }
        return schema
    }

    /// The root key path a key path of the projection reads (`\PersonProjection.homeCity` →
    /// `"address.city"`): the key path is read on a projection of a recording object.
    static func originKeyPath<P: ProjectionObservable>(of keyPath: PartialKeyPath<P>) -> String {
        let recorder = KeyPathRecorder()
        let prototype = P.Root()
        prototype._record(with: recorder)
        let value = recorder.reading { P(projecting: prototype)[keyPath: keyPath] }
        var names = recorder.names
        if let collection = value as? any _ProjectedElementPath { names.append(collection.elementPropertyName) }
        guard !names.isEmpty else {
            throwRealmException("Key path \(keyPath) on '\(P.self)' does not name a projected property.")
        }
        return names.joined(separator: ".")
    }

    /// Whether two objects are the same: the same row of the same Realm, or the same accessor.
    static func isSameRoot(_ a: ObjectBase, _ b: ObjectBase) -> Bool {
        if a === b { return true }
        guard let x = a._managed, let y = b._managed else { return false }
        return x.core === y.core && x.info.className == y.info.className && x.key == y.key
    }

    static func hashRoot(_ object: ObjectBase, into hasher: inout Hasher) {
        if let managed = object._managed {
            hasher.combine(managed.info.className)
            hasher.combine(managed.key)
        } else {
            hasher.combine(ObjectIdentifier(object))
        }
    }
}

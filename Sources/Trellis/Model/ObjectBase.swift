/// The state of a managed object: which Realm, which class, which row.
struct ManagedObject {
    let core: RealmCore
    let table: Table
    let key: ObjectKey
    /// The Realm's epoch when the accessor was made (see `Realm.invalidate()`).
    let epoch: UInt64

    var info: ClassInfo { table.info }
}

/// The last row read through an accessor, valid while the Realm's change stamp is unchanged.
struct RowCache {
    var stamp: UInt64 = 0
    var bytes: UnsafeRawBufferPointer?
}

/// The common base of ``Object`` and ``EmbeddedObject``, as in Realm.
///
/// An object is *unmanaged* until it is added to a ``Realm``: then its `@Persisted`
/// properties read from and write to the database.
open class ObjectBase: CustomStringConvertible {
    /// Set when the object is managed by a Realm.
    final var _managed: ManagedObject?
    final var _rowCache = RowCache()

    /// Creates an unmanaged object. Subclasses with their own designated initializers declare
    /// `required override init()` too, as in Realm.
    public required init() {}

    /// The name of the class in the schema: the Swift type name.
    open class func className() -> String {
        String(describing: self)
    }

    /// Whether instances of this class are embedded objects.
    class var isEmbedded: Bool { false }

    /// The Realm managing this object, or nil when it is unmanaged or was deleted through
    /// this accessor.
    public var realm: Realm? {
        guard let managed = _managed, !managed.core.isClosed else { return nil }
        return Realm(core: managed.core)
    }

    /// Whether the object was deleted, or its Realm invalidated. Reading a property of an
    /// invalidated object traps.
    public var isInvalidated: Bool {
        guard let managed = _managed else { return false }
        return !managed.core.objectExists(managed)
    }

    /// The schema of this object's class.
    public var objectSchema: ObjectSchema {
        if let managed = _managed { return managed.info.objectSchema }
        return ClassInfo.unbound(for: type(of: self)).objectSchema
    }

    /// A readable dump of the class name and property values.
    open var description: String {
        if isInvalidated { return "[invalid object]" }
        let info = _managed?.info ?? ClassInfo.unbound(for: type(of: self))
        let body = info.storedFields.map { "\t\($0.name) = \(describeValue(self[$0.name]))" }
        return "\(info.className) {\n\(body.joined(separator: "\n"))\n}"
    }

    private func describeValue(_ value: Any?) -> String {
        switch value {
        case nil: "nil"
        case let string as String: "\"\(string)\""
        case let object as ObjectBase: "\(type(of: object).className())(…)"
        case let some?: "\(some)"
        }
    }

    /// Reads or writes a persisted property by name (dynamic access).
    ///
    /// A LinkingObjects property returns its `LinkingObjects` collection. An unknown name traps.
    public subscript(key: String) -> Any? {
        get {
            let info = _managed?.info ?? ClassInfo.unbound(for: type(of: self))
            guard let field = info.field(named: key) else {
                throwRealmException("Invalid property name '\(key)' for class '\(info.className)'.")
            }
            return field.witness.dynamicGet(self, field)
        }
        set {
            let info = _managed?.info ?? ClassInfo.unbound(for: type(of: self))
            guard let field = info.field(named: key) else {
                throwRealmException("Invalid property name '\(key)' for class '\(info.className)'.")
            }
            field.witness.dynamicSet(self, field, newValue)
        }
    }
}

extension ObjectBase {
    /// Drops the cached row pointer so the next read looks the row up again. For benchmarks
    /// that measure the uncached read path; not needed by applications.
    public func _invalidateRowCacheForBenchmark() { _rowCache = RowCache() }
}

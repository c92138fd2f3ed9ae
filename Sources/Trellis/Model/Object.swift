/// A top-level object stored in its class's table, with an optional primary key.
///
/// ```swift
/// class Dog: Object {
///     @Persisted(primaryKey: true) var _id: ObjectId
///     @Persisted var name = ""
///     @Persisted var age = 0
/// }
/// ```
///
/// Equality follows Realm: objects with a primary key are equal when they are the same row of
/// the same Realm file; others are equal only when they are the same accessor (use
/// ``isSameObject(as:)`` to compare rows).
open class Object: ObjectBase, _PersistableInsideOptional {
    /// Creates an unmanaged object.
    public required init() { super.init() }

    /// Creates an unmanaged object from a dictionary of property values, an array of values in
    /// property order, or another object.
    public convenience init(value: Any) {
        self.init()
        ObjectInitializer.populate(self, from: value)
    }

    /// Whether `object` is the same row of the same Realm as this one.
    public func isSameObject(as object: Object?) -> Bool {
        guard let object else { return false }
        if self === object { return true }
        guard let a = _managed, let b = object._managed else { return false }
        return a.core === b.core && a.table.tableId == b.table.tableId && a.key == b.key
    }

    /// The name of the primary key property, as Realm's legacy models declare it
    /// (`override class func primaryKey() -> String? { "id" }`); honoured like
    /// `@Persisted(primaryKey: true)`, which is the preferred way to declare it.
    open class func primaryKey() -> String? { nil }

    /// Names of properties to index, as Realm's legacy models declare them. As in Realm, it
    /// applies to properties declared the legacy way (`let age = RealmProperty<Int?>()`,
    /// `RealmOptional`, `List`): a `@Persisted` property is indexed by its own declaration
    /// (`@Persisted(indexed: true)`), and the override changes nothing for it. A name of no
    /// property is ignored; a property Realm cannot index (a float, double, data, decimal,
    /// object or collection) fails schema validation with Realm's "Property 'C.p' of type
    /// 'float' cannot be indexed.".
    open class func indexedProperties() -> [String] { [] }

    // MARK: - _Persistable (to-one links)

    public static func _trellisEncode(_ value: Object, _ context: _EncodingContext) -> _StoredValue {
        _StoredValue(.link(context.session.linkTarget(value)))
    }
}

/// As in Realm, two accessors are equal when they are the same accessor, or read the same row:
/// of a class with a primary key, or of one frozen version (a frozen object's row never
/// changes, and freezing one version twice gives one frozen Realm).
extension Object: Hashable {
    public static func == (lhs: Object, rhs: Object) -> Bool {
        if lhs === rhs { return true }
        guard let a = lhs._managed, let b = rhs._managed, a.key == b.key else { return false }
        if a.core.isFrozen, a.core === b.core, a.table.tableId == b.table.tableId { return true }
        guard a.info.primaryKeyField != nil, a.info === b.info else { return false }
        return a.core.environmentPath == b.core.environmentPath
    }

    public func hash(into hasher: inout Hasher) {
        if let managed = _managed, managed.info.primaryKeyField != nil || managed.core.isFrozen {
            hasher.combine(managed.info.className)
            hasher.combine(managed.key)
        } else {
            hasher.combine(ObjectIdentifier(self))
        }
    }
}

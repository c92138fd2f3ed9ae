/// An object that lives inside exactly one parent object and is deleted with it.
///
/// Embedded objects have no primary key and cannot be added, created or queried on their own
/// (`realm.objects(Address.self)` does not compile). Assigning a new embedded object to a
/// parent's property deletes the one it replaces; setting the property to nil deletes it.
///
/// ```swift
/// class Address: EmbeddedObject {
///     @Persisted var street: String?
///     @Persisted var city: String?
/// }
/// ```
open class EmbeddedObject: ObjectBase, _PersistableInsideOptional {
    /// Creates an unmanaged embedded object.
    public required init() { super.init() }

    /// Creates an unmanaged embedded object from a dictionary or an array of values.
    public convenience init(value: Any) {
        self.init()
        ObjectInitializer.populate(self, from: value)
    }

    override class var isEmbedded: Bool { true }

    /// Whether `object` is the same row of the same Realm as this one.
    public func isSameObject(as object: EmbeddedObject?) -> Bool {
        guard let object else { return false }
        if self === object { return true }
        guard let a = _managed, let b = object._managed else { return false }
        return a.core === b.core && a.table.tableId == b.table.tableId && a.key == b.key
    }

    // MARK: - _Persistable (embedded links)

    public static func _trellisEncode(_ value: EmbeddedObject, _ context: _EncodingContext) -> _StoredValue {
        _StoredValue(.link(context.session.embed(value)))
    }
}

extension EmbeddedObject: Hashable {
    /// Embedded objects are equal only when they are the same accessor, as in Realm.
    public static func == (lhs: EmbeddedObject, rhs: EmbeddedObject) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

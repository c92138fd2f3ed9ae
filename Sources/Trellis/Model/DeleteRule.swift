/// What deleting an object does to the objects one of its link properties points at.
///
/// Beyond Realm: Realm only ever clears links (``nullify``). Declare a cascade on a to-one link
/// or a `List`, `MutableSet` or `Map` of objects, as SwiftData's
/// `@Relationship(deleteRule: .cascade)` does:
///
/// ```swift
/// class Order: Object {
///     @Persisted(onDelete: .cascade) var lines: List<OrderLine>   // deleted with the order
///     @Persisted(onDelete: .cascade) var invoice: Invoice?        // so is the invoice
///     @Persisted var customer: Customer?                          // kept; Realm's rule
/// }
/// ```
///
/// Deleting an `Order` (by ``Realm/delete(_:)-(ObjectBase)``, a sequence or `Results`, in a
/// migration, or through a synced Realm on the device that deletes) then deletes the objects
/// its cascading properties link to, and theirs in turn: an object reached twice, or through a
/// cycle, is deleted once. Other objects that linked to a deleted object see the link cleared,
/// as for any delete. Notifications report every object deleted this way. The rule is stored in
/// the file's schema, so changing it is a schema change (raise `schemaVersion`); App Services
/// schemas have no such concept and export nothing for it.
public enum DeleteRule: String, Sendable, Hashable, CaseIterable {
    /// Links to the deleted object are cleared, and the objects it linked to stay (Realm's only
    /// behaviour, and the default).
    case nullify
    /// The objects the deleted object links to through this property are deleted with it.
    case cascade
}

/// The property types a delete rule applies to: a to-one link to an `Object` class and `List`,
/// `MutableSet` and `Map` of such objects. (Embedded objects are always deleted with their
/// parent.)
public protocol _ObjectLinkProperty: _Persistable {}

extension Optional: _ObjectLinkProperty where Wrapped: Object {}
extension List: _ObjectLinkProperty where Element: Object {}
extension MutableSet: _ObjectLinkProperty where Element: Object {}
extension Map: _ObjectLinkProperty where Value: _ObjectLinkProperty {}

extension Persisted where Value: _ObjectLinkProperty {
    /// A link property with a delete rule: `@Persisted(onDelete: .cascade) var lines: List<Line>`
    /// deletes the linked objects with the object that holds the property (see ``DeleteRule``).
    @inlinable
    public init(onDelete rule: DeleteRule) {
        _storage = .unmanagedNoDefault
        _untouched = true
        declaration = PropertyDeclaration(deleteRule: rule)
    }

    /// A link property with a default value and a delete rule (see ``DeleteRule``).
    @inlinable
    public init(wrappedValue value: Value, onDelete rule: DeleteRule) {
        _storage = .unmanaged(value)
        _untouched = false
        declaration = PropertyDeclaration(deleteRule: rule)
    }
}

import Foundation

/// Types a ``RealmProperty`` can hold: `AnyRealmValue`, and the optionals of the numeric types
/// and `Bool` (`RealmProperty<Int?>`), as in Realm.
public protocol RealmPropertyType: _Persistable {}

/// Types whose optional a ``RealmProperty`` can hold. Not API on its own.
public protocol _OptionalRealmPropertyType: _PersistableInsideOptional {}

extension AnyRealmValue: RealmPropertyType {}
extension Optional: RealmPropertyType where Wrapped: _OptionalRealmPropertyType {}
extension Int: _OptionalRealmPropertyType {}
extension Int8: _OptionalRealmPropertyType {}
extension Int16: _OptionalRealmPropertyType {}
extension Int32: _OptionalRealmPropertyType {}
extension Int64: _OptionalRealmPropertyType {}
extension Float: _OptionalRealmPropertyType {}
extension Double: _OptionalRealmPropertyType {}
extension Bool: _OptionalRealmPropertyType {}

/// A value property declared the pre-`@Persisted` way, as a `let` stored property of an
/// `Object` (Realm discovers it by reflection, and so does Trellis):
///
/// ```swift
/// class Dog: Object {
///     let age = RealmProperty<Int?>()
///     let extra = RealmProperty<AnyRealmValue>()
/// }
/// dog.age.value = 3
/// ```
///
/// Read and write its ``value``; once the object is managed, they go to the database (writes
/// inside a write transaction).
public final class RealmProperty<Value: RealmPropertyType>: CustomStringConvertible {
    let state: LegacyValueState<Value>

    /// A property holding the type's default (nil, or `AnyRealmValue.none`).
    public init() { state = LegacyValueState(Value._trellisDefaultValue()) }

    /// The value: the object's stored value once it is managed.
    public var value: Value {
        get { state.value }
        set { state.value = newValue }
    }

    /// The value, described.
    public var description: String { String(describing: value) }
}

/// Types a ``RealmOptional`` can hold.
public protocol RealmOptionalType: _PersistableInsideOptional {}
extension Int: RealmOptionalType {}
extension Int8: RealmOptionalType {}
extension Int16: RealmOptionalType {}
extension Int32: RealmOptionalType {}
extension Int64: RealmOptionalType {}
extension Float: RealmOptionalType {}
extension Double: RealmOptionalType {}
extension Bool: RealmOptionalType {}

/// An optional number or Bool declared the oldest way (`let age = RealmOptional<Int>()`);
/// Realm deprecated it for `RealmProperty<Int?>`, which behaves the same.
@available(*, deprecated, renamed: "RealmProperty", message: "RealmOptional<T> has been deprecated, use RealmProperty<T?> instead.")
public final class RealmOptional<Wrapped: RealmOptionalType>: CustomStringConvertible {
    let state: LegacyValueState<Wrapped?>

    /// A property holding `value` (nil by default).
    public init(_ value: Wrapped? = nil) { state = LegacyValueState(value) }

    /// The value: the object's stored value once it is managed.
    public var value: Wrapped? {
        get { state.value }
        set { state.value = newValue }
    }

    /// The value, described.
    public var description: String { String(describing: value) }
}

/// Where a legacy value property's value is: in memory, or (once its object is managed) in
/// the object's row.
final class LegacyValueState<Value: _Persistable> {
    private var unmanaged: Value
    /// The managed object and the field, once bound. Weak: the object owns this state.
    private weak var owner: ObjectBase?
    private var field: FieldInfo?
    /// Where the owner's row is, to read it once the owner's accessor is gone.
    private var row: (core: RealmCore, type: ObjectBase.Type, key: ObjectKey, epoch: UInt64)?
    /// The accessor made for that row (see ``boundOwner``), kept by this state.
    private var revivedOwner: ObjectBase?

    init(_ value: Value) { unmanaged = value }

    var isBound: Bool { field != nil }

    /// Reads and writes the database once the owner is managed.
    func bind(to owner: ObjectBase, field: FieldInfo) {
        self.owner = owner
        self.field = field
        revivedOwner = nil
        row = owner._managed.map { (core: $0.core, type: type(of: owner), key: $0.key, epoch: $0.epoch) }
    }

    /// The object whose row the value is in. As in Realm, the property outlives its object's
    /// accessor (`let age = dog.age` kept after `dog` is released): a new accessor of the same
    /// row then reads and writes it; a deleted row or an invalidated Realm traps.
    private var boundOwner: ObjectBase? {
        if let owner { return owner }
        if let revivedOwner { return revivedOwner }
        guard let row, !row.core.isClosed, row.core.epoch == row.epoch else { return nil }
        let revived = row.core.accessor(row.type, key: row.key)
        revivedOwner = revived
        return revived
    }

    var value: Value {
        get {
            guard let field else { return unmanaged }
            guard let owner = boundOwner, let managed = owner._managed else {
                throwRealmException("Object has been deleted or invalidated.")
            }
            let row = managed.core.row(of: owner, managed)
            return Value._trellisRead(_RowReader(row: row, core: managed.core, owner: owner), field.rowColumn)
        }
        set {
            guard let field else {
                unmanaged = newValue
                return
            }
            guard let owner = boundOwner, let managed = owner._managed else {
                throwRealmException("Object has been deleted or invalidated.")
            }
            managed.core.setProperty(of: owner, managed, field, value: newValue, legacyValue: true)
        }
    }

    /// The value held in memory (what an unmanaged object stores when added).
    var unmanagedValue: Value { unmanaged }
}

import Foundation

/// What ``CustomPersistable`` and ``FailableCustomPersistable`` share: a type stored as
/// another, persistable type (its `PersistedType`). Not API on its own.
public protocol _CustomPersistable: _PersistableInsideOptional, RealmCollectionValue
    where PersistedType: _PersistableInsideOptional & RealmCollectionValue
{
    /// The value to store.
    var persistableValue: PersistedType { get }
    /// Makes the value from the stored one; nil when it cannot (see ``FailableCustomPersistable``).
    static func _trellisMake(_ persisted: PersistedType) -> Self?
}

/// A type of your own stored as a type Trellis knows, usable in `@Persisted` properties,
/// collections, queries and sorting as if it were that type.
///
/// ```swift
/// struct Money: CustomPersistable, Hashable {
///     typealias PersistedType = Decimal128
///     var amount: Decimal128
///     init(persistedValue: Decimal128) { amount = persistedValue }
///     var persistableValue: Decimal128 { amount }
/// }
/// ```
public protocol CustomPersistable: _CustomPersistable {
    /// Makes the value from its stored form.
    init(persistedValue: PersistedType)
    /// The stored form of the value.
    var persistableValue: PersistedType { get }
}

/// A ``CustomPersistable`` whose conversion from the stored value may fail (`URL` from a
/// `String`). Reading a stored value that does not convert traps, unless the property is
/// optional, which then reads nil.
public protocol FailableCustomPersistable: _CustomPersistable {
    /// Makes the value from its stored form, or nil when it does not convert.
    init?(persistedValue: PersistedType)
    /// The stored form of the value.
    var persistableValue: PersistedType { get }
}

extension CustomPersistable {
    public static func _trellisMake(_ persisted: PersistedType) -> Self? { Self(persistedValue: persisted) }
}

extension FailableCustomPersistable {
    public static func _trellisMake(_ persisted: PersistedType) -> Self? { Self(persistedValue: persisted) }
}

extension _CustomPersistable {
    public static var _trellisTypeInfo: _PropertyTypeInfo {
        var info = PersistedType._trellisTypeInfo
        info.swiftName = "\(Self.self)"
        if info.type == .object, info.collection == .none {
            // Realm's rule: a link is nullable even behind a non-optional custom type.
            info.isOptional = true
            info.isLinkThroughCustomType = true
        }
        return info
    }

    /// The value made from the stored type's default value (`""`, `0`, …); traps with Realm's
    /// message when that does not convert: give the property a default value, or make it optional.
    public static func _trellisDefaultValue() -> Self {
        let persisted = PersistedType._trellisDefaultValue()
        if let value = _trellisMake(persisted) { return value }
        throwRealmException("Failed to default construct a \(Self.self) using the default value for persisted type "
            + "\(PersistedType.self). This conversion must either succeed, the property must be optional, or you "
            + "must explicitly specify a default value for the property.")
    }

    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Self {
        // A null link (the persisted type is an object) reads as the default value, as in Realm.
        if row.isNull(column), PersistedType.self is ObjectBase.Type { return _trellisDefaultValue() }
        let persisted = PersistedType._trellisRead(row, column)
        if let value = _trellisMake(persisted) { return value }
        // A `create` stores a value the init refuses, as Realm does. Realm's message says where it
        // was read: a property (read with its object) or a collection's element (with none).
        if row.owner == nil {
            throwRealmException("Could not convert value '\(persisted)' to type '\(Self.self)'.")
        }
        throwRealmException("Failed to convert persisted value '\(persisted)' to type '\(Self.self)' in a "
            + "non-optional context.")
    }

    /// In an optional property, a stored value that does not convert reads as nil.
    public static func _trellisReadIfPresent(_ row: _RowReader, _ column: Int) -> Self? {
        PersistedType._trellisReadIfPresent(row, column).flatMap(_trellisMake)
    }

    public static func _trellisEncode(_ value: Self, _ context: _EncodingContext) -> _StoredValue {
        let persisted = value.persistableValue
        // An object made by `persistableValue` is a temporary: kept until the add ends, so the
        // next one made cannot take its address and be taken for it (``AddSession/keepAlive(_:)``).
        if let object = persisted as? ObjectBase { context.session.keepAlive(object) }
        return PersistedType._trellisEncode(persisted, context)
    }
}

/// The stored form of a value used as a query argument or compared in Swift: custom types
/// become their persisted value. Not API.
enum CustomPersistableArgument {
    static func persisted(_ value: Any) -> Any? {
        (value as? any _CustomPersistable).map { open($0) }
    }

    private static func open<T: _CustomPersistable>(_ value: T) -> Any { value.persistableValue }
}

import Foundation

/// A type that a `@Persisted` property can hold. Conformances are provided by Trellis for every
/// supported type; do not conform your own types.
public protocol _Persistable: _HasPersistedType {
    /// What the schema records for this type.
    static var _trellisTypeInfo: _PropertyTypeInfo { get }
    /// The value of a `@Persisted var x: T` with no default (0, "", nil, a new ObjectId, …).
    static func _trellisDefaultValue() -> Self
    /// Reads the value of a managed property from its row.
    static func _trellisRead(_ row: _RowReader, _ column: Int) -> Self
    /// Encodes a value for storing (adding linked unmanaged objects through `context`).
    static func _trellisEncode(_ value: Self, _ context: _EncodingContext) -> _StoredValue
    /// Whether values are ``DynamicObject`` links (or optional ones), whose class their Swift
    /// type does not name: collections then read and check them by the target class. Not API.
    static var _trellisIsDynamicObject: Bool { get }
    /// Reads a managed property that has no row column (LinkingObjects: `column` is below -1)
    /// from its object alone. Not API.
    static func _trellisReadComputed(of object: ObjectBase, _ column: Int) -> Self
}

extension _Persistable {
    /// Values of every type but ``DynamicObject`` name their class by their type. Not API.
    public static var _trellisIsDynamicObject: Bool { false }

    /// Reads through ``_trellisRead(_:_:)`` with a reader holding no row. Not API.
    public static func _trellisReadComputed(of object: ObjectBase, _ column: Int) -> Self {
        guard let managed = object._managed else {
            throwRealmException("Trellis internal error: a computed property read from an unmanaged object.")
        }
        return _trellisRead(_RowReader(row: RowView(bytes: UnsafeRawBufferPointer(start: nil, count: 0)),
                                       core: managed.core, owner: object), column)
    }
}

/// A type that may also be stored as an optional (`T?`).
public protocol _PersistableInsideOptional: _Persistable {
    /// Reads a non-null column as the optional's value; nil when it cannot be read (a link
    /// whose target row is missing).
    static func _trellisReadIfPresent(_ row: _RowReader, _ column: Int) -> Self?
}

extension _PersistableInsideOptional {
    @inlinable
    public static func _trellisReadIfPresent(_ row: _RowReader, _ column: Int) -> Self? {
        _trellisRead(row, column)
    }
}

/// Types allowed as a primary key (`@Persisted(primaryKey: true)`).
public protocol _PrimaryKey {}

/// Types allowed as an indexed property (`@Persisted(indexed: true)`).
public protocol _Indexable {}

/// A managed row being read, with the Realm it belongs to. Not API.
public struct _RowReader {
    @usableFromInline let row: RowView
    /// Unowned: a reader lives only during one property read of an object that keeps the core.
    @usableFromInline unowned(unsafe) let core: RealmCore
    /// The object whose row this is, when known: a nested collection read from it is bound to
    /// it (see ``AnyRealmValue``).
    @usableFromInline unowned(unsafe) var owner: ObjectBase?

    @inlinable
    init(row: RowView, core: RealmCore, owner: ObjectBase? = nil) {
        self.row = row
        self.core = core
        self.owner = owner
    }
}

/// Where encoded values go: the Realm that receives linked objects. Not API.
public struct _EncodingContext {
    let session: AddSession
    /// The session's core (not kept beside it: making a context then retains one object).
    var core: RealmCore { session.core }
}

// MARK: - Optional

extension Optional: _Persistable where Wrapped: _PersistableInsideOptional {
    /// Whether the wrapped type is ``DynamicObject``. Not API.
    public static var _trellisIsDynamicObject: Bool { Wrapped._trellisIsDynamicObject }
    public static var _trellisTypeInfo: _PropertyTypeInfo {
        var info = Wrapped._trellisTypeInfo
        info.isOptional = true
        info.isLinkThroughCustomType = false
        info.swiftName = "\(info.swiftName)?"
        return info
    }
    public static func _trellisDefaultValue() -> Self { nil }
    @inlinable
    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Self {
        row.isNull(column) ? nil : Wrapped._trellisReadIfPresent(row, column)
    }
    public static func _trellisEncode(_ value: Self, _ context: _EncodingContext) -> _StoredValue {
        guard let value else { return _StoredValue(.null) }
        return Wrapped._trellisEncode(value, context)
    }
}

extension Optional: _PrimaryKey where Wrapped: _PrimaryKey {}
extension Optional: _Indexable where Wrapped: _Indexable {}

extension _RowReader {
    @inlinable @inline(__always)
    func isNull(_ column: Int) -> Bool { row.isNull(column) }
}

// MARK: - Integers

/// Integer types share one stored form (64-bit).
public protocol _PersistableInteger: _PersistableInsideOptional, FixedWidthInteger, _PrimaryKey, _Indexable {}

extension _PersistableInteger {
    public static var _trellisTypeInfo: _PropertyTypeInfo { _PropertyTypeInfo(.int, swiftName: "\(Self.self)") }
    public static func _trellisDefaultValue() -> Self { 0 }
    @inlinable @inline(__always)
    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Self {
        Self(truncatingIfNeeded: row.row.int(column))
    }
    public static func _trellisEncode(_ value: Self, _ context: _EncodingContext) -> _StoredValue {
        _StoredValue(.int(Int64(truncatingIfNeeded: value)))
    }
}

extension Int: _PersistableInteger {}
extension Int8: _PersistableInteger {}
extension Int16: _PersistableInteger {}
extension Int32: _PersistableInteger {}
extension Int64: _PersistableInteger {}

// MARK: - Other scalars

extension Bool: _PersistableInsideOptional, _PrimaryKey, _Indexable {
    public static var _trellisTypeInfo: _PropertyTypeInfo { _PropertyTypeInfo(.bool, swiftName: "Bool") }
    public static func _trellisDefaultValue() -> Bool { false }
    @inlinable @inline(__always)
    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Bool { row.row.bool(column) }
    public static func _trellisEncode(_ value: Bool, _ context: _EncodingContext) -> _StoredValue { _StoredValue(.bool(value)) }
}

extension Float: _PersistableInsideOptional {
    public static var _trellisTypeInfo: _PropertyTypeInfo { _PropertyTypeInfo(.float, swiftName: "Float") }
    public static func _trellisDefaultValue() -> Float { 0 }
    @inlinable @inline(__always)
    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Float { row.row.float(column) }
    public static func _trellisEncode(_ value: Float, _ context: _EncodingContext) -> _StoredValue { _StoredValue(.float(value)) }
}

extension Double: _PersistableInsideOptional {
    public static var _trellisTypeInfo: _PropertyTypeInfo { _PropertyTypeInfo(.double, swiftName: "Double") }
    public static func _trellisDefaultValue() -> Double { 0 }
    @inlinable @inline(__always)
    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Double { row.row.double(column) }
    public static func _trellisEncode(_ value: Double, _ context: _EncodingContext) -> _StoredValue { _StoredValue(.double(value)) }
}

extension String: _PersistableInsideOptional, _PrimaryKey, _Indexable {
    public static var _trellisTypeInfo: _PropertyTypeInfo { _PropertyTypeInfo(.string, swiftName: "String") }
    public static func _trellisDefaultValue() -> String { "" }
    @inlinable @inline(__always)
    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> String { row.row.string(column) }
    public static func _trellisEncode(_ value: String, _ context: _EncodingContext) -> _StoredValue { _StoredValue(.string(value)) }
}

extension Data: _PersistableInsideOptional {
    public static var _trellisTypeInfo: _PropertyTypeInfo { _PropertyTypeInfo(.data, swiftName: "Data") }
    public static func _trellisDefaultValue() -> Data { Data() }
    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Data { row.row.data(column) }
    public static func _trellisEncode(_ value: Data, _ context: _EncodingContext) -> _StoredValue { _StoredValue(.data(value)) }
}

extension Date: _PersistableInsideOptional, _Indexable {
    public static var _trellisTypeInfo: _PropertyTypeInfo { _PropertyTypeInfo(.date, swiftName: "Date") }
    /// The current date, as in Realm (`Date` is `_DefaultConstructible` there: `Date()`), for an
    /// unmanaged object's property without a default, a dictionary or Codable input without it, and
    /// `create` without it.
    public static func _trellisDefaultValue() -> Date { Date() }
    @inlinable @inline(__always)
    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Date { row.row.date(column) }
    public static func _trellisEncode(_ value: Date, _ context: _EncodingContext) -> _StoredValue { _StoredValue(.date(value)) }
}

extension UUID: _PersistableInsideOptional, _PrimaryKey, _Indexable {
    public static var _trellisTypeInfo: _PropertyTypeInfo { _PropertyTypeInfo(.UUID, swiftName: "UUID") }
    public static func _trellisDefaultValue() -> UUID { UUID() }
    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> UUID { row.row.uuid(column) }
    public static func _trellisEncode(_ value: UUID, _ context: _EncodingContext) -> _StoredValue { _StoredValue(.uuid(value)) }
}

extension ObjectId: _PersistableInsideOptional, _PrimaryKey, _Indexable {
    public static var _trellisTypeInfo: _PropertyTypeInfo { _PropertyTypeInfo(.objectId, swiftName: "ObjectId") }
    public static func _trellisDefaultValue() -> ObjectId { .generate() }
    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> ObjectId { row.row.objectId(column) }
    public static func _trellisEncode(_ value: ObjectId, _ context: _EncodingContext) -> _StoredValue { _StoredValue(.objectId(value)) }
}

extension Decimal128: _PersistableInsideOptional {
    public static var _trellisTypeInfo: _PropertyTypeInfo { _PropertyTypeInfo(.decimal128, swiftName: "Decimal128") }
    public static func _trellisDefaultValue() -> Self { Self(Decimal(0)) }
    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Self { Self(row.row.decimal(column).decimalValue) }
    public static func _trellisEncode(_ value: Decimal128, _ context: _EncodingContext) -> _StoredValue { _StoredValue(.decimal(value)) }
}

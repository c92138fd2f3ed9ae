import Foundation

/// A type with a stored form: `PersistedType` is what the database holds for it (the type
/// itself for every built-in type; the persisted type of a ``CustomPersistable``). Generic code
/// constrains aggregates and sorting through it, as Realm's does.
public protocol _HasPersistedType {
    /// The type the database stores for this type.
    associatedtype PersistedType = Self
}

/// `Optional`, for constraints on collections of optional values
/// (`where Element: OptionalProtocol, Element.Wrapped: MinMaxType`).
public protocol OptionalProtocol {
    /// The type inside the optional.
    associatedtype Wrapped
}

extension Optional: OptionalProtocol {}

/// Types whose values have a minimum and a maximum: `min(ofProperty:)`, `max()`.
public protocol MinMaxType {}

/// Types that can be summed and averaged: `sum(ofProperty:)`, `average()`. A marker, as in
/// Realm: it has no requirements.
public protocol AddableType {}

/// Types a collection can be sorted by: `sorted(byKeyPath:)`, `sorted(ascending:)`.
public protocol SortableType {}

/// Types whose collections are sorted by a key path of theirs (objects), not by themselves.
public protocol KeypathSortable {}

extension Int: MinMaxType, AddableType, SortableType {}
extension Int8: MinMaxType, AddableType, SortableType {}
extension Int16: MinMaxType, AddableType, SortableType {}
extension Int32: MinMaxType, AddableType, SortableType {}
extension Int64: MinMaxType, AddableType, SortableType {}
extension Float: MinMaxType, AddableType, SortableType {}
extension Double: MinMaxType, AddableType, SortableType {}
extension Decimal128: MinMaxType, AddableType, SortableType {}
extension Date: MinMaxType, SortableType {}
extension AnyRealmValue: MinMaxType, AddableType, SortableType {}
extension String: SortableType {}
extension Data: SortableType {}
extension Bool: SortableType {}
extension ObjectId: SortableType {}
extension UUID: SortableType {}
extension Optional: MinMaxType where Wrapped: MinMaxType {}
extension Optional: SortableType where Wrapped: SortableType {}
extension Optional: AddableType where Wrapped: AddableType {}
extension ObjectBase: KeypathSortable {}

/// Converts an aggregate's query value into the caller's type `T` (any stored type), or nil
/// when `T` is not one the database stores.
enum AggregateConversion {
    static func convert<T>(_ value: QueryValue, to type: T.Type, core: RealmCore) -> T? {
        // Unwrapped first: `nil as? T` is a value (`.some(nil)`) when T is an Optional, and Realm's
        // min/max/average of no values (or only nils) is nil, not `.some(nil)`.
        guard let persistable = T.self as? any _Persistable.Type, let converted = open(persistable, value, core) else {
            return nil
        }
        return converted as? T
    }

    private static func open<P: _Persistable>(_ type: P.Type, _ value: QueryValue, _ core: RealmCore) -> Any? {
        QueryValueConversion.convert(value, to: type, core: core)
    }
}

extension Optional: _HasPersistedType where Wrapped: _HasPersistedType {
    /// An optional stores its wrapped type's stored form, or null.
    public typealias PersistedType = Wrapped.PersistedType?
}

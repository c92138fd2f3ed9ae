// Realm Swift's underscored public names that generic app and library code uses (issue 40).
// They are not documented API in Realm either (`:nodoc:`), but code written against Realm
// names them, so they exist here with the same meaning.

import Foundation

/// The property names a key path designates, joined by dots: `_name(for: \Person.dog.name)` is
/// `"dog.name"`, `_name(for: \Person.dogs)` is `"dogs"` (Realm's `_name(for:)`).
public func _name<T: ObjectBase>(for keyPath: PartialKeyPath<T>) -> String {
    QueryKeyPathNames.name(of: keyPath)
}

/// A type that can be a collection element inside an `Optional` (`List<Int?>`,
/// `Map<String, Dog?>`): Realm's name for what Trellis spells
/// `RealmCollectionValue & _PersistableInsideOptional`.
public typealias _RealmCollectionValueInsideOptional = RealmCollectionValue & _PersistableInsideOptional

/// A type a `@Persisted` property can have: Realm's name for the root of its property-type
/// protocols (Trellis's `_Persistable`).
public typealias _RealmSchemaDiscoverable = _Persistable

/// The legacy `LinkingObjects(fromType:property:)` declaration, as a constraint (Realm's
/// `LinkingObjectsProtocol`; only `LinkingObjects` conforms).
public protocol LinkingObjectsProtocol {
    /// The class whose objects link here.
    associatedtype Element
    /// The objects of `fromType` linking here through `property`.
    init(fromType: Element.Type, property: String)
}

extension LinkingObjects: LinkingObjectsProtocol {}

/// One key-value entry of a map, as a constraint on generic code (Realm's `_RealmMapValue`;
/// `SingleMapEntry` conforms).
public protocol _RealmMapValue {
    /// The entry's key type.
    associatedtype Key: _MapKey
    /// The entry's value type.
    associatedtype Value: RealmCollectionValue
}

extension SingleMapEntry: _RealmMapValue {}

/// The position of an entry in a `Map` (Realm's `MapIndex`).
public struct MapIndex: Hashable, Sendable {
    /// The entry's offset in the map's order.
    public var offset: UInt

    /// The entry at `offset`.
    public init(offset: UInt) { self.offset = offset }
}

/// A persistable type whose `init()` makes its default value (Realm's `_DefaultConstructible`):
/// the value types, `AnyRealmValue` (`.none`), objects and collections (empty), as in Realm.
/// `Optional` is not one: its default is `nil`.
public protocol _DefaultConstructible {
    /// The type's default value.
    init()
}

extension Int: _DefaultConstructible {}
extension Int8: _DefaultConstructible {}
extension Int16: _DefaultConstructible {}
extension Int32: _DefaultConstructible {}
extension Int64: _DefaultConstructible {}
extension Bool: _DefaultConstructible {}
extension Float: _DefaultConstructible {}
extension Double: _DefaultConstructible {}
extension String: _DefaultConstructible {}
extension Data: _DefaultConstructible {}
extension Date: _DefaultConstructible {}
extension UUID: _DefaultConstructible {}
extension ObjectId: _DefaultConstructible {}
extension Decimal128: _DefaultConstructible {}
extension AnyRealmValue: _DefaultConstructible {}
extension Object: _DefaultConstructible {}
extension EmbeddedObject: _DefaultConstructible {}
extension List: _DefaultConstructible {}
extension MutableSet: _DefaultConstructible {}
extension Map: _DefaultConstructible {}

extension ObjectBase {
    /// The schema of this class as a Realm would store it (Realm's `sharedSchema()`); nil for
    /// `Object`, `EmbeddedObject` and `DynamicObject` themselves.
    public class func sharedSchema() -> ObjectSchema? {
        guard self != ObjectBase.self, self != Object.self, self != EmbeddedObject.self, self != DynamicObject.self
        else { return nil }
        return ClassInfo.unbound(for: self).objectSchema
    }
}

/// `AnyRealmValue` columns compare with `<`, `>`, ranges and aggregates in typed queries, as in
/// Realm (values of different kinds compare as Realm's mixed ordering says).
extension AnyRealmValue: _QueryNumeric {}

extension Query where T: OptionalProtocol, T.Wrapped: PersistableEnum {
    /// The raw value of an optional enum, for comparing with raw values
    /// (`$0.status.rawValue == 2`; nil when the property is nil).
    public var rawValue: Query<T.Wrapped.RawValue?> { Query<T.Wrapped.RawValue?>(node) }
}

// Realm states the value aggregates and sorts of `RealmCollection` by the element's persisted
// type alone, so generic code constrained only that way can call them. (The overloads
// constrained on the element itself, which concrete types find first, stay as they are.
// `sorted(ascending:)` and `distinct()` are stated Realm's way in RealmCollection.swift.)

extension RealmCollection where Element.PersistedType: MinMaxType {
    /// The smallest value, or nil when empty.
    public func min() -> Element? { min(ofProperty: "self") }
    /// The largest value, or nil when empty.
    public func max() -> Element? { max(ofProperty: "self") }
}

extension RealmCollection where Element.PersistedType: AddableType {
    /// The sum of the values (zero when empty).
    public func sum() -> Element { sum(ofProperty: "self") }
    /// The average of the values, or nil when empty.
    public func average<T: _HasPersistedType>() -> T? where T.PersistedType: AddableType {
        average(ofProperty: "self")
    }
}

import Foundation

/// A type that can be an element of `List`, `MutableSet` or a value of `Map`: every
/// persistable scalar and its optional, `AnyRealmValue`, `PersistableEnum`s and model classes.
public protocol RealmCollectionValue: _Persistable, Hashable {
    /// The element that results over objects of a class hold for `object`: the object itself,
    /// or (for a ``Projection``) a projection of it. Not API.
    static func _trellisElement(for object: ObjectBase) -> Self
}

extension RealmCollectionValue {
    /// The object itself: results over a class hold its objects. Only ever called with an
    /// object of the results' class, so the cast is free.
    @inline(__always)
    public static func _trellisElement(for object: ObjectBase) -> Self { unsafeBitCast(object, to: Self.self) }
}

extension Bool: RealmCollectionValue {}
extension Int: RealmCollectionValue {}
extension Int8: RealmCollectionValue {}
extension Int16: RealmCollectionValue {}
extension Int32: RealmCollectionValue {}
extension Int64: RealmCollectionValue {}
extension Float: RealmCollectionValue {}
extension Double: RealmCollectionValue {}
extension String: RealmCollectionValue {}
extension Data: RealmCollectionValue {}
extension Date: RealmCollectionValue {}
extension UUID: RealmCollectionValue {}
extension ObjectId: RealmCollectionValue {}
extension Decimal128: RealmCollectionValue {}
extension AnyRealmValue: RealmCollectionValue {}
extension Object: RealmCollectionValue {}
extension EmbeddedObject: RealmCollectionValue {}
extension Optional: RealmCollectionValue where Wrapped: RealmCollectionValue & _PersistableInsideOptional {}

/// The managed side of a collection: its Realm and where it is stored.
///
/// Holds the Realm strongly: a collection outlives the accessor of the object that owns it
/// (`let dogs = person.dogs` stays usable), as in Realm.
@usableFromInline
struct CollectionBinding {
    let core: RealmCore
    let location: CollectionLocation
    let epoch: UInt64

    init(core: RealmCore, table: Table, key: ObjectKey, field: FieldInfo) {
        self.core = core
        self.location = CollectionLocation(table: table, key: key, field: field)
        self.epoch = core.epoch
    }

    /// The same stored collection, read through `core` (another Realm of the file).
    init(core: RealmCore, location: CollectionLocation) {
        self.init(core: core, table: location.table, key: location.key, field: location.field)
    }

    /// The binding for a collection property of a managed object.
    init(object: ObjectBase, field: FieldInfo) {
        guard let managed = object._managed else {
            throwRealmException("Trellis internal error: '\(field.name)' is not managed.")
        }
        self.init(core: managed.core, table: managed.table, key: managed.key, field: field)
    }

    /// Whether the owning object still exists in the current snapshot.
    var isValid: Bool {
        // The owner's row is looked up near the last one read (iterating owners, their rows
        // are consecutive: the kept leaf page answers).
        // (A core in no read transaction yet, just opened, begins one here; `invalidate()`
        // changed the epoch.)
        !core.isClosed && epoch == core.epoch
            && core.withTransaction { $0.get(location.table.rows, nearIntegerKey: location.key) } != nil
    }

    func verifyReadable() {
        core.verifyThread()
        if !isValid { trapInvalid() }
        if ObservationGate.mayTrack {
            core.observeCollectionRead(.collection(table: location.table.tableId, key: location.key,
                                                   column: location.field.rowColumn))
        }
    }

    /// Traps unless the collection is still valid and inside a write, in Realm's order: a
    /// deleted or invalidated collection is reported before a missing write transaction.
    func verifyWritable(_ kind: String) {
        core.verifyThread()
        if !isValid { trapInvalid() }
        if !core.isInWriteTransaction {
            throwRealmException("Cannot modify \(kind) outside of a write transaction.")
        }
    }

    /// The trap for a collection that is not valid: realm-core's `Collection::verify_attached`
    /// message, the same whether its object was deleted or the read transaction it was read in
    /// ended (`invalidate()`, a frozen Realm closed).
    private func trapInvalid() -> Never {
        throwRealmException(invalidatedCollectionMessage(location.field.typeInfo.collection == .map ? "Dictionary"
            : location.field.typeInfo.collection == .set ? "Set" : "List"))
    }

    func isSameCollection(as other: CollectionBinding) -> Bool {
        core === other.core && location.table === other.location.table && location.key == other.location.key
            && location.field === other.location.field
    }

    /// Decodes one stored element.
    func decode<Element: _Persistable>(_ bytes: UnsafeRawBufferPointer, as _: Element.Type = Element.self) -> Element {
        if Element._trellisIsDynamicObject { return decodeDynamic(RowView(bytes: bytes)) }
        return Element._trellisRead(_RowReader(row: RowView(bytes: bytes), core: core), 0)
    }

    /// A ``DynamicObject`` element: an accessor of the collection's target class (which a
    /// DynamicObject's type does not tell). A map value that is null or links to a missing row
    /// (only a damaged file has one) is nil; a list or set element linking to a missing row is
    /// an unmanaged placeholder with the class's schema (see ``MissingLinkTarget``).
    private func decodeDynamic<Element: _Persistable>(_ row: RowView) -> Element {
        guard let target = location.field.typeInfo.objectClassName else { Self.holdsValues(location.field) }
        let isNull = row.isNull(0)
        let key: ObjectKey = isNull ? .max : row.slot(0)
        let table = isNull ? nil : core.dynamicTable(named: target, create: false)
        if let table, core.rowView(table, key) != nil,
           let element = core.accessor(DynamicObject.self, table: table, key: key) as? Element
        {
            return element
        }
        if !isNull, location.field.typeInfo.collection == .map {
            MissingLinkTarget.report(core, className: target, key: key)
        }
        if let none = Optional<DynamicObject>.none as? Element { return none }
        let info = table?.info ?? core.requireDynamicClassInfo(named: target)
        if let placeholder = MissingLinkTarget.dynamicPlaceholder(info, core: core, key: key) as? Element {
            return placeholder
        }
        throwRealmException("Trellis internal error: '\(location.field.name)' does not hold DynamicObjects.")
    }

    /// Decodes the element stored at `root` (a list element or a map value): an
    /// `AnyRealmValue` holding a nested collection is bound there, so it stays live.
    func decode<Element: _Persistable>(_ bytes: UnsafeRawBufferPointer, nestedAt root: @autoclosure () -> NestedRoot)
        -> Element
    {
        if Element.self == AnyRealmValue.self, bytes.count > 0, let mixed = RowView(bytes: bytes).mixed(0),
           mixed.isCollection,
           let value = AnyRealmValue(stored: mixed, core: core,
                                     nested: NestedCollectionBinding(core: core, root: root())) as? Element
        {
            return value
        }
        return decode(bytes)
    }

    /// Encodes an element for storing; unmanaged objects it holds are added to the Realm.
    func encode<Element: _Persistable>(_ value: Element, session: AddSession) -> [UInt8] {
        if Element._trellisIsDynamicObject { verifyDynamicElement(value) }
        let encoded = Element._trellisEncode(value, _EncodingContext(session: session))
        return RowWriter.encode(single: encoded.payload)
    }

    /// A new add session for a mutation of this collection (`kind` names it in the message for
    /// reusing a managed embedded object).
    func session(_ kind: String) -> AddSession {
        let session = AddSession(core: core, policy: core.propertyUpdatePolicy)
        session.embeddedReuseMessage = "Cannot add an existing managed embedded object to a \(kind)."
        return session
    }

    /// The stored form of `value` for a lookup, or nil when it cannot be stored here (an object
    /// that is unmanaged, deleted or from another Realm).
    func lookupKey<Element: _Persistable>(_ value: Element) -> [UInt8]? {
        if let object = value as? ObjectBase {
            guard let managed = object._managed, managed.core === core, core.objectExists(managed) else { return nil }
        }
        return encode(value, session: AddSession(core: core, policy: .error))
    }
}

/// Where a managed collection's contents are (a List keeps this beside its in-memory elements,
/// see ``List``): not generic, so using it looks no type up at run time.
enum CollectionBacking {
    /// In memory (the elements are beside it).
    case unmanaged
    case managed(CollectionBinding)
    /// A list or dictionary inside an `AnyRealmValue` of a managed object.
    case nested(NestedCollectionBinding)
}

/// Where a List, MutableSet or Map keeps its contents: in memory until its owner is added to a
/// Realm (`Contents` is an array or dictionary), then in the database.
enum CollectionStorage<Contents> {
    case unmanaged(Contents)
    case managed(CollectionBinding)
    /// A list or dictionary inside an `AnyRealmValue` of a managed object.
    case nested(NestedCollectionBinding)

    /// The binding of a managed collection, nil for an unmanaged one.
    var binding: CollectionBinding? {
        if case .managed(let binding) = self { return binding }
        return nil
    }
}

/// What `@Persisted` needs from a collection property type (List, MutableSet, Map).
protocol _CollectionProperty: AnyObject {
    associatedtype Contents
    /// A managed accessor over a stored collection.
    init(binding: CollectionBinding)
    /// The contents, in memory or stored.
    var storage: CollectionStorage<Contents> { get set }
    /// Stores the elements of `value` (an unmanaged collection, or another Realm's) as the
    /// contents of `binding`, replacing what was there; returns the instance the owning
    /// object keeps: `value` itself when it was unmanaged (as in Realm), else a new accessor.
    static func _trellisAttach(_ value: Self, to binding: CollectionBinding, session: AddSession) -> Self
    /// An unmanaged collection built from a loosely typed value (an array, dictionary or
    /// another collection), or nil when it does not fit.
    static func _trellisConvert(_ value: Any) -> Self?
    /// The elements as loosely typed values (for copying between collections).
    var _trellisElements: [Any] { get }
}

extension _CollectionProperty {
    /// The binding of a managed collection, nil for an unmanaged one.
    var binding: CollectionBinding? { storage.binding }

    /// The instance an owner keeps once `value` is stored under `binding`: `value` itself
    /// when it is unmanaged (as in Realm), a new accessor when it belongs to another stored
    /// collection, nil when it already is that stored collection (nothing to copy).
    static func attachTarget(_ value: Self, _ binding: CollectionBinding) -> Self? {
        guard let other = value.binding else { return value }
        return other.isSameCollection(as: binding) ? nil : Self(binding: binding)
    }

    /// `create(_:value:update: .modified)` of an existing object: `value` is stored into
    /// `current` as `add(_:update: .modified)` stores it, by difference (realm-core's assign
    /// under a diffing policy); false, doing nothing, under any other policy.
    static func assignByDifference(_ value: Self, to current: Self, _ kind: String) -> Bool {
        guard let binding = current.binding, binding.core.diffsAssignedCollections else { return false }
        binding.verifyWritable(kind)
        _ = _trellisAttach(value, to: binding, session: binding.session(kind))
        return true
    }

    /// The managed accessor of a collection property (kept by `@Persisted`).
    static func _trellisMakeAccessor(_ object: ObjectBase, _ field: FieldInfo, into slot: UnsafeMutableRawPointer) {
        slot.initializeMemory(as: Self.self, to: Self(binding: CollectionBinding(object: object, field: field)))
    }

    /// Sets and maps are made afresh for each owner (only `List` points its accessor at the next
    /// owner's list, see ``List/_trellisRepointAccessor(at:to:_:)``).
    static func _trellisRepointAccessor(at slot: UnsafeMutableRawPointer, to object: ObjectBase, _ field: FieldInfo)
        -> Bool
    {
        false
    }

    /// The Realm of a managed collection (the public `realm` of List, MutableSet and Map).
    var managingRealm: Realm? {
        switch storage {
        case .unmanaged: nil
        case .managed(let binding): Realm(core: binding.core)
        case .nested(let nested): Realm(core: nested.core)
        }
    }

    /// Whether the owner of a managed collection is gone (the public `isInvalidated`).
    var ownerIsGone: Bool {
        switch storage {
        case .unmanaged: false
        case .managed(let binding): !binding.isValid
        case .nested(let nested): !nested.isValid
        }
    }
}

/// Index checks with Realm's messages.
enum CollectionIndex {
    static func check(_ index: Int, count: Int, name: String = "index") {
        if index < 0 { throwRealmException("Cannot pass a negative value for '\(name)'.") }
        if index >= count {
            throwRealmException("Index \(index) is out of bounds (must be less than \(count)).")
        }
    }

    static func checkRemoval(_ number: Int, count: Int) {
        if number < 0 { throwRealmException("Cannot pass a negative value for 'number'.") }
        if number > count {
            throwRealmException("It is not possible to remove more objects (\(number)) from a list than it already "
                + "contains (\(count)).")
        }
    }
}

extension CollectionBinding {
    /// A collection of values reached through `dynamicList`/`dynamicMutableSet`/`dynamicMap`
    /// (which count it, as Realm's do) has no objects to read or add.
    static func holdsValues(_ field: FieldInfo) -> Never {
        throwRealmException("Property '\(field.name)' (\(field.typeInfo.swiftName)) holds values, not objects: read "
            + "it by name (object[\"\(field.name)\"]) instead of as DynamicObjects.")
    }

    /// Traps with Realm's message when a ``DynamicObject`` of another class is put into a
    /// collection of objects (its Swift type cannot tell), or any object into one of values.
    fileprivate func verifyDynamicElement(_ value: Any) {
        if location.field.typeInfo.objectClassName == nil { Self.holdsValues(location.field) }
        guard let managed = (value as? ObjectBase)?._managed, let target = location.field.typeInfo.objectClassName,
              managed.info.className != target
        else { return }
        throwRealmException("Object of type '\(managed.info.className)' does not match List type '\(target)'.")
    }
}

/// realm-core's message (v14, Realm Swift 10.54's `Collection::verify_attached`) for a collection
/// used after its object was deleted or the read transaction it was read in ended; `kind` is
/// "List", "Set" or "Dictionary" (its `type_name()`).
func invalidatedCollectionMessage(_ kind: String) -> String {
    "\(kind) is no longer valid. Either the parent object was deleted or the containing Realm has been invalidated "
        + "or closed."
}

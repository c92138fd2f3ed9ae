/// The state of a managed object: which Realm, which class, which row.
///
/// The references are unowned so that copying this (on every property read) touches no
/// reference count: the object keeps its core alive through `ObjectBase._coreOwner`, and the
/// core keeps its file state, which keeps the tables.
@usableFromInline
struct ManagedObject {
    @usableFromInline unowned(unsafe) let core: RealmCore
    unowned(unsafe) let table: Table
    let key: ObjectKey
    /// The Realm's epoch when the accessor was made (see `Realm.invalidate()`).
    let epoch: UInt64

    var info: ClassInfo { table.info }
}

/// The last row read through an accessor, valid while the Realm's change stamp is unchanged.
///
/// Empty is stamp 0, which no Realm ever has (``nextChangeStamp()`` never returns it), so an empty
/// cache never matches and its bytes need no optional (a test and a branch less per read).
@usableFromInline
struct RowCache {
    @usableFromInline var stamp: UInt64
    @usableFromInline var bytes: UnsafeRawBufferPointer

    @inlinable @inline(__always)
    init(stamp: UInt64 = 0, bytes: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)) {
        self.stamp = stamp
        self.bytes = bytes
    }
}

/// The common base of ``Object`` and ``EmbeddedObject``, as in Realm.
///
/// An object is *unmanaged* until it is added to a ``Realm``: then its `@Persisted`
/// properties read from and write to the database.
open class ObjectBase: CustomStringConvertible {
    /// Set when the object is managed by a Realm.
    // Accessors are confined to their Realm's thread (checked on each access), so dynamic
    // exclusivity checks are skipped on these hot fields.
    @usableFromInline @exclusivity(unchecked) final var _managed: ManagedObject?
    @usableFromInline @exclusivity(unchecked) final var _rowCache = RowCache()
    /// Keeps the Realm of a managed object alive (see ``ManagedObject``).
    final var _coreOwner: RealmCore?
    /// Set on the prototypes that turn a Swift key path into property names (queries, sorts).
    final var _keyPathRecorder: KeyPathRecorder?
    /// The registrar of an unmanaged object whose properties a `withObservationTracking`
    /// closure read (see ObservationTracking.swift).
    @usableFromInline final var _observation: ObservationSubject?
    /// Set when `Realm.delete` deleted the object through this accessor: as in Realm, the
    /// accessor then has no Realm, and deleting it again traps.
    final var _deletedThroughThisAccessor = false
    /// The accessor this object's last to-one read handed out, kept (by iteration accessors only,
    /// see ``_isIterationAccessor``) so that the next read may point it at its row instead of
    /// making one when nothing else references it (see
    /// ``RealmCore/linkedAccessor(_:key:from:)``).
    @exclusivity(unchecked) final var _spareLinkTarget: ObjectBase?
    /// Whether an iteration handed this accessor out and may still point it at its next object
    /// (see ``RealmCore/accessor(reusing:_:table:key:)``). Only such an accessor keeps spares (a
    /// link target, a LinkingObjects source): an object the program keeps holds no extra one, and
    /// spares, which are never iteration accessors, keep none themselves (no chains).
    @exclusivity(unchecked) final var _isIterationAccessor = false
    /// The source of the last `LinkingObjects` value read from this object, kept so that the
    /// next read may reuse it (see ``LinkingObjects/managedValue(_:_:readFrom:)``).
    @exclusivity(unchecked) final var _spareLinkingObjectsSource: LinkingObjectsSource?
    /// How many times this accessor was pointed at another row (see
    /// ``_repoint(core:table:key:epoch:)``): a collection accessor kept in a wrapper is the
    /// object's only while the wrapper says it was made for this generation (`Persisted._cachedFor`).
    @exclusivity(unchecked) public final var _generation: UInt64 = 0

    /// Makes this managed accessor the accessor of another row of the same table, as a new
    /// accessor would be: every field above that depends on the row is reset here (keep this in
    /// step with them). Only for an accessor nothing else references (see
    /// ``RealmCore/accessor(reusing:_:table:key:)``).
    final func _repoint(core: RealmCore, table: Table, key: ObjectKey, epoch: UInt64) {
        _managed = ManagedObject(core: core, table: table, key: key, epoch: epoch)
        _rowCache = RowCache()
        _deletedThroughThisAccessor = false
        // The collection accessors the wrappers keep belong to the previous row from now on.
        _generation &+= 1
    }

    /// Creates an unmanaged object. Subclasses with their own designated initializers declare
    /// `required override init()` too, as in Realm.
    public required init() {}

    /// Names of properties Realm leaves out of `@objc dynamic` models. Like Realm, Trellis does
    /// not consult it for `@Persisted` models: a property without `@Persisted` is never stored.
    /// Kept so overriding code compiles.
    open class func ignoredProperties() -> [String] { [] }

    /// Custom names under which properties are stored, as in Realm: Swift property name →
    /// persisted (column) name. Override it to keep a file's names (say, `snake_case` names
    /// shared with a server or another SDK) while the Swift code uses its own:
    ///
    /// ```swift
    /// class Person: Object {
    ///     @Persisted var firstName: String
    ///     override class func propertiesMapping() -> [String: String] {
    ///         ["firstName": "first_name"]
    ///     }
    /// }
    /// ```
    ///
    /// The file, the App Services schema export, the `trellis` tool and a Realm opened without
    /// the model class (``Realm/dynamicObjects(_:)`` there) use the persisted name. The Swift
    /// API uses the Swift name: key paths, typed and text queries, sorting, distinct,
    /// sectioning, observation key paths, KVC, ``Property/name`` (``Property/columnName`` is
    /// the persisted name), and the new objects of a migration (its old objects are read by the
    /// file's names). Names not declared as properties are ignored.
    open class func propertiesMapping() -> [String: String] { [:] }

    /// Whether the class is in the default schema: the classes of a Realm opened without
    /// ``Realm/Configuration/objectTypes``, as in Realm. Override it to return false for a class
    /// only some Realms hold: a Realm without `objectTypes` then leaves it out of its
    /// ``Realm/schema`` and traps when it is used, with Realm's "is not managed by the Realm";
    /// a Realm whose `objectTypes` list it holds it as any other.
    open class func shouldIncludeInDefaultSchema() -> Bool { true }

    /// The name of the class in the schema: the Swift type name.
    open class func className() -> String {
        String(describing: self)
    }

    /// Whether instances of this class are embedded objects.
    class var isEmbedded: Bool { false }

    /// The Realm managing this object, or nil when it is unmanaged or was deleted through
    /// this accessor.
    public var realm: Realm? {
        // An object of a frozen Realm `invalidate()` closed still names it, as in Realm.
        guard let managed = _managed, !_deletedThroughThisAccessor else { return nil }
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

    /// The class name and every persisted property's value, as Realm prints them
    /// (`Dog {\n\tname = Rex;\n\tage = 3;\n}`; links and collections nested five levels deep).
    open var description: String {
        if isInvalidated { return "[invalid object]" }
        return RealmDescription.object(self, depth: RealmDescription.maximumDepth)
    }

    /// The value of the persisted property named `key` as its Swift type (an `Int8` as `Int8`),
    /// for Trellis's own copying and encoding; ``subscript(key:)`` is the API. Traps on an
    /// unknown name.
    final func storedValue(forKey key: String) -> Any? {
        // A migration's objects read the migration's values (never a sized integer).
        if let dynamic = self as? DynamicObject, dynamic.migrationEntry != nil { return dynamic[key] }
        let info = _managed?.info ?? ClassInfo.unbound(for: type(of: self))
        guard let field = info.field(named: key) else {
            throwRealmException("Invalid property name '\(key)' for class '\(info.className)'.")
        }
        return field.witness.dynamicGet(self, field)
    }

    /// Reads or writes a persisted property by name (dynamic access).
    ///
    /// A LinkingObjects property returns its `LinkingObjects` collection. An unknown name traps.
    /// An `Int8`, `Int16`, `Int32` or `Int64` property reads as an `NSNumber`, as in Realm, so
    /// that `obj["int8"] as! Int` and `as! Int8` both work. An `AnyRealmValue` property reads as
    /// the value it holds (nil for `.none`), as in Realm, and takes a plain value too
    /// (`obj["any"] = "hello"`).
    public subscript(key: String) -> Any? {
        get {
            let info = _managed?.info ?? ClassInfo.unbound(for: type(of: self))
            guard let field = info.field(named: key) else {
                throwRealmException("Invalid property name '\(key)' for class '\(info.className)'.")
            }
            return KeyValueCoding.dynamicValue(field.witness.dynamicGet(self, field))
        }
        set {
            let info = _managed?.info ?? ClassInfo.unbound(for: type(of: self))
            guard let field = info.field(named: key) else {
                throwRealmException("Invalid property name '\(key)' for class '\(info.className)'.")
            }
            // A legacy `RealmProperty` primary key too gets the accessor's message here (its
            // `value` and `setValue(_:forKey:)` give realm-core's).
            if field.isPrimaryKey, let managed = _managed {
                managed.core.refusePrimaryKeyChange(managed, field, legacyValue: false)
            }
            field.witness.dynamicSet(self, field, newValue)
        }
    }
}

extension ObjectBase {
    /// The reader of a managed object's row for a property whose wrapper knows its row `column`
    /// (0 or more, see `Persisted._column`). Nil for an unmanaged object.
    ///
    /// Inlined into the `@Persisted` getter, which the model's module specializes: when the row
    /// read last is still current (same thread, nothing changed since), reading a scalar is a
    /// few loads with no call. Anything else goes through ``_managedRowReaderLookingUp(_:)``.
    @inlinable @inline(__always)
    final func _managedRowReader(_ column: Int) -> _RowReader? {
        // `managed.core` is read through its unowned(unsafe) reference each time: binding it to
        // a local would retain and release it.
        // The thread test and Swift Observation's share one load: this thread's Observation
        // slot is the core's only on the thread that opened it (see ``ObservationGate``), and
        // its word is non-null only inside a `withObservationTracking` closure, where the read
        // registers.
        if column >= 0, let managed = _managed, _rowCache.stamp == managed.core.changeStamp,
           let slot = ObservationGate.resolvedSlot, slot == managed.core.ownerObservationSlot
        {
            if _slowPath(slot.pointee != nil) { _observeManagedRead(column) }
            return _RowReader(row: RowView(bytes: _rowCache.bytes), core: managed.core, owner: self)
        }
        return _managedRowReaderLookingUp(column)
    }

    /// ``_managedRowReader(_:)`` when the cached row cannot be used: looks the row up (and
    /// checks the thread and that the object still exists). A LinkingObjects property has no
    /// row column and is read without a reader (``_Persistable/_trellisReadComputed(of:_:)``).
    @usableFromInline @inline(never)
    final func _managedRowReaderLookingUp(_ column: Int) -> _RowReader? {
        guard let managed = _managed else { return nil }
        let row = Unmanaged.passUnretained(managed.core)._withUnsafeGuaranteedRef { $0.row(of: self, managed) }
        if column >= 0, ObservationGate.mayTrack { _observeManagedRead(column) }
        return _RowReader(row: row, core: managed.core, owner: self)
    }

    /// Writes into each `@Persisted` wrapper of this accessor of `info`'s class its column and
    /// field, so that its reads find them without a key path (see `Persisted._column`); only the
    /// field when `columns` is false (an unmanaged prototype, see ``_record(with:)``).
    final func _bindSlots(_ info: ClassInfo, columns: Bool = true) {
        // The offsets are those of `info`'s model class (classes known only from a file have no
        // wrappers and no slots).
        guard type(of: self) == info.objectType else { return }
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
        info.wrapperSlots.withUnsafeBufferPointer { slots in
            for slot in slots {
                // `_column` then `_field`, the wrapper's first two stored properties.
                if columns { (base + slot.offset).storeBytes(of: slot.column, as: Int32.self) }
                (base + slot.offset + 4).storeBytes(of: slot.field, as: Int32.self)
            }
        }
    }

    /// Makes this unmanaged prototype record the properties read from it (typed queries, sorts,
    /// projections): its wrappers learn their fields, so a read tells the recorder which.
    final func _record(with recorder: KeyPathRecorder) {
        _keyPathRecorder = recorder
        _bindSlots(ClassInfo.unbound(for: type(of: self)), columns: false)
    }

    /// Whether a Realm manages the object. Not API: the `@Persisted` setter asks it.
    public final var _isManaged: Bool { _managed != nil }

    /// Drops the cached row pointer so the next read looks the row up again. For benchmarks
    /// that measure the uncached read path; not needed by applications.
    public func _invalidateRowCacheForBenchmark() { _rowCache = RowCache() }
}

// MARK: - Links (shared by Object and EmbeddedObject)

/// A to-one link column holds the target's object key; `Object` and `EmbeddedObject` differ
/// only in how a value is encoded (a link target is added, an embedded object gets its parent).
extension _PersistableInsideOptional where Self: ObjectBase {
    public static var _trellisTypeInfo: _PropertyTypeInfo {
        _PropertyTypeInfo(.object, objectType: Self.self, swiftName: className())
    }
    public static func _trellisDefaultValue() -> Self { Self() }
    /// Whether the class is ``DynamicObject`` (its links are read by their target class's
    /// name): one metadata comparison, no dynamic dispatch. Not API.
    public static var _trellisIsDynamicObject: Bool { Self.self == DynamicObject.self }
    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Self {
        // With its row read (a List's elements are often consecutive keys: the lookup steps).
        // A missing row (only a damaged file links to one) gives a new unmanaged object of
        // default values: reading it never traps (see MissingLinkTarget).
        let key = row.row.slot(column)
        return row.core.linkedAccessor(Self.self, key: key, from: row.owner)
            ?? MissingLinkTarget.placeholder(Self.self, core: row.core, key: key)
    }
    /// The linked object with its row already read (the first property read needs no lookup);
    /// nil if the target row is missing, which only a damaged file has.
    public static func _trellisReadIfPresent(_ row: _RowReader, _ column: Int) -> Self? {
        row.core.linkedAccessor(Self.self, key: row.row.slot(column), from: row.owner)
    }
}

/// The options a `@Persisted` declaration carries.
@usableFromInline
struct PropertyDeclaration {
    var isPrimaryKey = false
    var isIndexed = false
    /// What deleting the object does to the objects this property links to (declared before
    /// `originProperty`, so it takes a padding byte and the wrapper keeps its size).
    var deleteRule: DeleteRule
    var originProperty: String?

    @usableFromInline
    init(isPrimaryKey: Bool = false, isIndexed: Bool = false, originProperty: String? = nil,
         deleteRule: DeleteRule = .nullify)
    {
        self.isPrimaryKey = isPrimaryKey
        self.isIndexed = isIndexed
        self.originProperty = originProperty
        self.deleteRule = deleteRule
    }
}

/// Declares a stored property of a Trellis object, exactly as Realm Swift does.
///
/// ```swift
/// class Dog: Object {
///     @Persisted(primaryKey: true) var _id: ObjectId
///     @Persisted var name = ""
///     @Persisted var age: Int?
///     @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
/// }
/// ```
///
/// On an unmanaged object the property is a plain stored value. Once the object is managed by
/// a ``Realm``, every read goes to the database (one key lookup plus a decode) and every write
/// must happen inside a write transaction.
@propertyWrapper
public struct Persisted<Value: _Persistable> {
    @usableFromInline
    enum Storage {
        /// Unmanaged, never read or written: the default is computed on first use.
        case unmanagedNoDefault
        case unmanaged(Value)
        /// Managed, for types whose accessor is kept (collections): the live instance.
        case managedCached(Value)
        /// Managed (set only on objects of `Encodable` classes, so encoding can refuse it):
        /// the value is in the database.
        case managed
    }

    /// Where a managed object keeps this property's value, written into the wrapper when the
    /// object becomes managed (see ``ClassInfo/wrapperSlots``): its row column (0 or more), for
    /// LinkingObjects `-2 - field index`, else -1 (unmanaged, collections). With ``_field``,
    /// it lets a read find the property with a load instead of looking its key path up.
    /// Declared first, so it lies at the start of the wrapper whatever `Value` is.
    @usableFromInline var _column: Int32 = -1
    /// 1 + the property's field index in its class, written with ``_column`` (and into the
    /// prototypes that record key paths); 0 while unbound.
    @usableFromInline var _field: Int32 = 0
    /// For a managed collection: the ``ObjectBase/_generation`` of the object when the
    /// accessor in `storage` was made (an accessor pointed at another row since keeps it, but it
    /// is the previous row's).
    @usableFromInline var _cachedFor: UInt64 = 0
    /// Whether `storage` is `.unmanagedNoDefault` (never read or written while unmanaged), kept
    /// beside it by every store: adding an object tells untouched collections without generic
    /// code (see ``untouchedOffset``).
    @usableFromInline var _untouched: Bool
    @usableFromInline var _storage: Storage
    @usableFromInline let declaration: PropertyDeclaration

    /// The value, or where it is. Every store keeps ``_untouched`` in step.
    @inlinable var storage: Storage {
        get { _storage }
        set {
            if case .unmanagedNoDefault = newValue { _untouched = true } else { _untouched = false }
            _storage = newValue
        }
    }

    /// The byte offset of ``_untouched`` in any `Persisted` (the fields before it do not depend
    /// on `Value`).
    static var untouchedOffset: Int { 16 }

    /// `@Persisted` works only on properties of `Object` and `EmbeddedObject` subclasses.
    @available(*, unavailable, message: "@Persisted can only be used as a property on a Trellis object")
    public var wrappedValue: Value {
        get { fatalError("@Persisted can only be used as a property on a Trellis object") }
        // swiftlint:disable:next unused_setter_value
        set { fatalError("@Persisted can only be used as a property on a Trellis object") }
    }

    /// A property with the type's default value (0, "", nil, a new ObjectId or UUID, an empty
    /// collection).
    @inlinable
    public init() {
        _storage = .unmanagedNoDefault
        _untouched = true
        declaration = PropertyDeclaration()
    }

    /// A property with a default value.
    @inlinable
    public init(wrappedValue value: Value) {
        _storage = .unmanaged(value)
        _untouched = false
        declaration = PropertyDeclaration()
    }

    /// Reads and writes the property through the object: the database when it is managed.
    ///
    /// Inlined into the model's module so a managed read of a scalar is specialized there: one
    /// non-generic call finds the row, then the value type decodes its column.
    @inlinable
    public static subscript<EnclosingSelf: ObjectBase>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        @inline(__always)
        get {
            // The key path is a literal to a stored field and is used only to reach the wrapper
            // for short reads and stores: the optimizer makes each a plain load or store, makes
            // no key path object at all and needs no dynamic exclusivity check. Any other use
            // (passing it to a function, a long access) would cost a `swift_getKeyPath` call or
            // a `swift_beginAccess` on every read.
            let column = Int(object[keyPath: storageKeyPath]._column)
            if column >= 0 {
                if let reader = object._managedRowReader(column) { return Value._trellisRead(reader, column) }
            } else if column < -1, object._managed != nil {
                // A LinkingObjects property (see ClassInfo.linkingObjectsColumn(fieldIndex:)).
                return Value._trellisReadComputed(of: object, column)
            }
            let field = Int(object[keyPath: storageKeyPath]._field)
            if field != 0 {
                guard object._isManaged else { return readRecorded(object, fieldIndex: field - 1) }
                // A managed collection: the accessor kept for this row, else a new one, kept.
                // Here, where `Value` is known, matching and storing it looks no metadata up.
                let generation = object._generation
                if object[keyPath: storageKeyPath]._cachedFor == generation,
                   case .managedCached(let value) = object[keyPath: storageKeyPath].storage
                {
                    return value
                }
                // Kept for the row an iteration accessor read before it moved on: pointed at this
                // row when nothing else references it (the wrapper lets go of it first).
                if case .managedCached(var previous) = object[keyPath: storageKeyPath].storage {
                    object[keyPath: storageKeyPath].storage = .managed
                    if repointCollection(&previous, of: object, fieldIndex: field - 1) {
                        object[keyPath: storageKeyPath].storage = .managedCached(previous)
                        object[keyPath: storageKeyPath]._cachedFor = generation
                        return previous
                    }
                }
                let value = makeCollection(object, fieldIndex: field - 1)
                object[keyPath: storageKeyPath].storage = .managedCached(value)
                object[keyPath: storageKeyPath]._cachedFor = generation
                return value
            }
            // An unmanaged object read inside a `withObservationTracking` closure learns its
            // fields, and its reads then register (see `readRecorded`).
            if ObservationGate.mayTrack, object._bindFieldsForObservation() {
                let bound = Int(object[keyPath: storageKeyPath]._field)
                if bound != 0 { return readRecorded(object, fieldIndex: bound - 1) }
            }
            switch object[keyPath: storageKeyPath].storage {
            case .unmanaged(let value), .managedCached(let value): return value
            case .unmanagedNoDefault, .managed: break
            }
            if object._isManaged { unboundManagedRead(object) }
            let value = Value._trellisDefaultValue()
            object[keyPath: storageKeyPath].storage = .unmanaged(value)
            return value
        }
        // Inlined into the model's setter, like the getter: the key path only reaches the
        // wrapper, so it is never made (a key path that escaped to a function would also make
        // every access to the property in the model's module a dynamically checked one).
        @inline(__always)
        set {
            if object._isManaged {
                writeBound(newValue, to: object, fieldIndex: Int(object[keyPath: storageKeyPath]._field) - 1)
            } else if object._observation != nil {
                // A tracking closure read a property of this unmanaged object: as an
                // `@Observable` class, the store tells it.
                let fieldIndex = Int(object[keyPath: storageKeyPath]._field) - 1
                object._willSetUnmanaged(fieldIndex: fieldIndex)
                object[keyPath: storageKeyPath].storage = .unmanaged(newValue)
                object._didSetUnmanaged(fieldIndex: fieldIndex)
            } else {
                object[keyPath: storageKeyPath].storage = .unmanaged(newValue)
            }
        }
    }

    /// Reads a property of an unmanaged object whose wrapper knows its field (see ``_field``): a
    /// prototype recording the key paths read from it (typed queries, sorts, projections).
    @usableFromInline
    static func readRecorded(_ object: ObjectBase, fieldIndex: Int) -> Value {
        let field = ClassInfo.unbound(for: type(of: object)).fields[fieldIndex]
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        let value = (base + field.offset).assumingMemoryBound(to: Persisted<Value>.self).pointee.unmanagedValue()
        guard let recorder = object._keyPathRecorder else {
            if ObservationGate.mayTrack { object._observeUnmanagedRead(fieldIndex: fieldIndex) }
            return value
        }
        return recorder.record(object, field, unmanaged: value)
    }

    /// A new accessor for a managed object's collection property (the caller keeps it).
    @usableFromInline
    static func makeCollection(_ object: ObjectBase, fieldIndex: Int) -> Value {
        guard let managed = object._managed else { unboundManagedRead(object) }
        return makeAccessor(object, managed.info.fields[fieldIndex])
    }

    /// Points `previous`, the collection accessor kept for the row `object` read before (an
    /// iteration accessor moved on), at the collection of its current row; false when something
    /// else references it (the program kept it), and a new one is made.
    @usableFromInline
    static func repointCollection(_ previous: inout Value, of object: ObjectBase, fieldIndex: Int) -> Bool {
        guard let managed = object._managed, fieldIndex < managed.info.fields.count,
              let maker = managed.info.fields[fieldIndex].accessorMaker
        else { return false }
        let field = managed.info.fields[fieldIndex]
        return withUnsafeMutablePointer(to: &previous) {
            maker._trellisRepointAccessor(at: UnsafeMutableRawPointer($0), to: object, field)
        }
    }

    /// A new managed accessor of `field` (a collection or LinkingObjects) of `object`.
    static func makeAccessor(_ object: ObjectBase, _ field: FieldInfo) -> Value {
        guard let maker = field.accessorMaker else {
            throwRealmException("Trellis internal error: no accessor for '\(field.name)'.")
        }
        // `maker` is `Value` itself (see FieldInfo.accessorMaker): it initializes the slot. Not
        // `withUnsafeTemporaryAllocation`, which in code generic over `Value` looks the metadata
        // of a `Result` up at run time on every call (about 330 instructions).
        let slot = UnsafeMutablePointer<Value>.allocate(capacity: 1)
        defer { slot.deallocate() }
        maker._trellisMakeAccessor(object, field, into: UnsafeMutableRawPointer(slot))
        return slot.move()
    }

    /// A managed object whose wrappers were never bound: a bug in Trellis, never a stale value.
    @usableFromInline
    static func unboundManagedRead(_ object: ObjectBase) -> Never {
        throwRealmException("Trellis internal error: a property of a managed '\(type(of: object).className())' "
            + "was used through an accessor that does not know its columns.")
    }

    /// Writes a managed object's property to the database: `fieldIndex` is the one its wrapper
    /// was given when the object became managed (see ``_field``).
    @usableFromInline
    static func writeBound(_ newValue: Value, to object: ObjectBase, fieldIndex: Int) {
        guard let managed = object._managed, fieldIndex >= 0 else { unboundManagedRead(object) }
        managed.core.setProperty(of: object, managed, managed.info.fields[fieldIndex], value: newValue)
    }

    /// The unmanaged value, computing (and keeping) the default on first use.
    mutating func unmanagedValue() -> Value {
        switch storage {
        case .unmanaged(let value), .managedCached(let value):
            return value
        case .unmanagedNoDefault, .managed:
            let value = Value._trellisDefaultValue()
            storage = .unmanaged(value)
            return value
        }
    }
}

extension Persisted where Value.PersistedType: _Indexable {
    /// A property with an index, which makes equality and range queries on it fast. As in
    /// Realm, what counts is the stored type: a ``CustomPersistable`` stored as an indexable
    /// type (`Int`, `String`, `Date`…) can be indexed too.
    @inlinable
    public init(indexed: Bool) {
        _storage = .unmanagedNoDefault
        _untouched = true
        declaration = PropertyDeclaration(isIndexed: indexed)
    }

    /// A property with a default value and an index.
    @inlinable
    public init(wrappedValue value: Value, indexed: Bool) {
        _storage = .unmanaged(value)
        _untouched = false
        declaration = PropertyDeclaration(isIndexed: indexed)
    }
}

extension Persisted where Value: _PrimaryKey {
    /// The primary key: unique in the class, immutable once the object is managed, indexed.
    @inlinable
    public init(primaryKey: Bool) {
        _storage = .unmanagedNoDefault
        _untouched = true
        declaration = PropertyDeclaration(isPrimaryKey: primaryKey, isIndexed: primaryKey)
    }

    /// The primary key with a default value.
    @inlinable
    public init(wrappedValue value: Value, primaryKey: Bool) {
        _storage = .unmanaged(value)
        _untouched = false
        declaration = PropertyDeclaration(isPrimaryKey: primaryKey, isIndexed: primaryKey)
    }
}

/// Types whose managed accessor is created once per object and kept (collections,
/// LinkingObjects), so that `obj.dogs === obj.dogs`.
protocol _CachedAccessor {
    /// Initializes `slot` (uninitialized memory for one `Self`) with the managed accessor of
    /// `field` of `object`. Through a pointer rather than `Any`, so the caller casts nothing.
    static func _trellisMakeAccessor(_ object: ObjectBase, _ field: FieldInfo, into slot: UnsafeMutableRawPointer)
    /// Points the accessor in `slot` (initialized, one `Self`) at `field` of `object` when
    /// nothing but `slot` references it; false otherwise, leaving it as it was.
    static func _trellisRepointAccessor(at slot: UnsafeMutableRawPointer, to object: ObjectBase, _ field: FieldInfo)
        -> Bool
}

// MARK: - Codable

extension Persisted: Decodable where Value: Decodable {
    /// Decodes the property's value (an unmanaged object's property).
    public init(from decoder: any Decoder) throws {
        // Through a container, so the decoder's strategies apply (dates, data, keys).
        _storage = .unmanaged(try decoder.singleValueContainer().decode(Value.self))
        _untouched = false
        declaration = PropertyDeclaration()
    }
}

extension Persisted: Encodable where Value: Encodable {
    /// Encodes the value of an unmanaged object's property. A managed object's property is an
    /// `EncodingError.invalidValue`, as in Realm.
    public func encode(to encoder: any Encoder) throws {
        switch storage {
        case .unmanaged(let value):
            // Through a container, so the encoder's strategies apply (dates, data, keys).
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .unmanagedNoDefault:
            var container = encoder.singleValueContainer()
            try container.encode(Value._trellisDefaultValue())
        case .managed, .managedCached:
            throw EncodingError.invalidValue(self, EncodingError.Context(
                codingPath: encoder.codingPath,
                debugDescription: "Only unmanaged Realm objects can be encoded using automatic Codable synthesis. "
                    + "You must explicitly define encode(to:) on your model class to support managed Realm objects."))
        }
    }
}

extension KeyedDecodingContainer {
    /// A property missing from the input keeps its default, as in Realm.
    public func decode<T: _Persistable & Decodable>(_: Persisted<T>.Type, forKey key: Key) throws -> Persisted<T> {
        try decodeIfPresent(Persisted<T>.self, forKey: key) ?? Persisted()
    }
}

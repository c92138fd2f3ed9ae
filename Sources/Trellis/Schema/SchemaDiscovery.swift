import Foundation
@_spi(Reflection) import Swift

/// The hooks schema discovery and dynamic access need from a `Persisted<Value>` field.
/// `Persisted` is the only conformer.
protocol PersistedFieldWitness: SendableMetatype {
    static var valueTypeInfo: _PropertyTypeInfo { get }
    /// The value type when its managed accessor is made once and kept (collections,
    /// LinkingObjects), else nil.
    static var cachedAccessorType: (any _CachedAccessor.Type)? { get }
    /// Whether the field is a to-one property to an `Object` class laid out as
    /// `Persisted<Object?>` (see ``ObjectLinkField``).
    static var holdsOptionalObject: Bool { get }
    /// Whether this is a ``LegacyFieldWitness`` (a field declared without `@Persisted`). Asked
    /// instead of casting: a failed cast of a witness met for the first time scans every
    /// conformance record of the process.
    static var isLegacyField: Bool { get }
    static func declaration(at field: UnsafeRawPointer) -> PropertyDeclaration
    /// Encodes the unmanaged value held at `field` (computing its default if needed).
    static func encodeUnmanaged(at field: UnsafeMutableRawPointer, _ context: _EncodingContext) -> _StoredValue
    /// Encodes the unmanaged value held at `field`, then lets go of it (the field reads as
    /// managed): for to-one and mixed fields of an object being added, which are never read
    /// unmanaged again. One call, so `Persisted<Value>`'s metadata is looked up once, not four
    /// times (``encodeUnmanaged(at:_:)`` then ``markManaged(at:)``).
    static func encodeUnmanagedAndRelease(at field: UnsafeMutableRawPointer, _ context: _EncodingContext) -> _StoredValue
    /// The unmanaged value at `field`.
    static func unmanagedValue(at field: UnsafeMutableRawPointer) -> Any
    /// Whether the unmanaged property at `field` was never read or written (its default is
    /// not made yet).
    static func isUntouched(at field: UnsafeRawPointer) -> Bool
    /// Stores `value` as the unmanaged value at `field`; returns false if it has the wrong type.
    static func setUnmanaged(at field: UnsafeMutableRawPointer, _ value: Any?) -> Bool
    static func dynamicGet(_ object: ObjectBase, _ field: FieldInfo) -> Any?
    /// Marks a scalar or to-one property of a new managed accessor as managed (only for
    /// `Encodable` classes: encoding it must fail).
    static func markManaged(at field: UnsafeMutableRawPointer)
    /// The value of a scalar or to-one column in `row` (a row of `core`'s file, or a copy).
    static func storedValue(_ row: RowView, core: RealmCore, column: Int) -> Any?
    static func dynamicSet(_ object: ObjectBase, _ field: FieldInfo, _ value: Any?)
    /// For a collection field of an object being added: stores its contents and keeps the
    /// managed collection in the field.
    static func attachCollection(at field: UnsafeMutableRawPointer, binding: CollectionBinding, session: AddSession)
}

extension PersistedFieldWitness {
    static var holdsOptionalObject: Bool { false }
    static var isLegacyField: Bool { false }

    /// The two steps one after the other (fields other than `Persisted` hold no unmanaged value
    /// to let go of in one step).
    static func encodeUnmanagedAndRelease(at field: UnsafeMutableRawPointer, _ context: _EncodingContext)
        -> _StoredValue
    {
        let encoded = encodeUnmanaged(at: field, context)
        markManaged(at: field)
        return encoded
    }
}

/// Learns a model class's properties from its stored fields.
///
/// Uses the standard library's field reflection (names, offsets and types of stored fields,
/// superclass first), which on Linux replaces the Objective-C runtime Realm relies on. A field
/// is a persisted property when its type is `Persisted<T>`; every other field is ignored, as
/// in Realm.
enum SchemaDiscovery {
    static func discover(_ type: ObjectBase.Type) -> ClassInfo {
        let prototype = type.init()
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(prototype).toOpaque())
        var fields = [FieldInfo]()
        var rowColumn = 0
        // Fields are visited superclass first: ObjectBase's own come first and are not the model's.
        var visited = 0, otherFields = 0
        let mapping = type.propertiesMapping()
        // Realm also takes the primary key from a `primaryKey()` override, `@Persisted` models too.
        let legacyPrimaryKey = (type as? Object.Type)?.primaryKey()
        // Realm honours an `indexedProperties()` override for properties declared the legacy way
        // (`let age = RealmProperty<Int?>()`, in a class with no `@Persisted` property); a
        // `@Persisted` property's own declaration decides, the override changes nothing for it.
        let legacyIndexed = Set((type as? Object.Type)?.indexedProperties() ?? [])
        _ = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1)) { namePointer, offset, fieldType, _ in
            visited += 1
            // ObjectBase's own fields are never properties.
            guard visited > objectBaseFieldCount else { return true }
            // Each cast below looks the conformance up, and the first lookup for a type scans
            // every conformance record of the process (~0.3M instructions on Linux) whether it
            // succeeds or not; a class's to-one property type (`Persisted<Next?>`) is new for
            // each class. So the common case, `Persisted`, is asked first and alone.
            let rawName = String(cString: namePointer)
            let witness: any PersistedFieldWitness.Type
            let name: String
            var isLegacy = false
            if let persisted = fieldType as? any PersistedFieldWitness.Type {
                witness = persisted
                name = rawName.hasPrefix("_") ? String(rawName.dropFirst()) : rawName
            } else if let legacyType = fieldType as? any _LegacyFieldType.Type {
                // `let dogs = List<Dog>()`: the Swift name is the property name.
                otherFields += 1
                witness = legacyType.legacyWitness
                name = rawName
                isLegacy = true
            } else {
                otherFields += 1
                return true
            }
            let info = witness.valueTypeInfo
            let stored = info.type != .linkingObjects
            var declaration = witness.declaration(at: base + offset)
            if name == legacyPrimaryKey { declaration.isPrimaryKey = true }
            if isLegacy, legacyIndexed.contains(name) { declaration.isIndexed = true }
            fields.append(FieldInfo(name: name, index: fields.count, rowColumn: stored ? rowColumn : -1,
                                    offset: offset, witness: witness, typeInfo: info,
                                    declaration: declaration, columnName: mapping[name]))
            if stored { rowColumn += 1 }
            return true
        }
        withExtendedLifetime(prototype) {}
        return ClassInfo(objectType: type, fields: fields,
                         hasOtherStoredFields: otherFields > 0)
    }

    /// How many stored fields `ObjectBase` itself has (every model class has them first).
    private static let objectBaseFieldCount: Int = {
        var count = 0
        _ = _forEachField(of: ObjectBase.self, options: _EachFieldOptions(rawValue: 1)) { _, _, _, _ in
            count += 1
            return true
        }
        return count
    }()
}

// MARK: - Persisted as a field witness

extension Persisted: PersistedFieldWitness {
    static var valueTypeInfo: _PropertyTypeInfo { Value._trellisTypeInfo }

    static var cachedAccessorType: (any _CachedAccessor.Type)? {
        // Only collections and LinkingObjects keep their accessor. Any other type is not asked:
        // a failed conformance lookup of a type met for the first time (a to-one property's
        // `Next?`, new for each class) scans every conformance record of the process.
        let info = Value._trellisTypeInfo
        guard info.collection != .none || info.type == .linkingObjects else { return nil }
        return Value.self as? any _CachedAccessor.Type
    }
    static var holdsOptionalObject: Bool { ObjectLinkField.qualifies(Value.self) }


    static func declaration(at field: UnsafeRawPointer) -> PropertyDeclaration {
        field.assumingMemoryBound(to: Persisted<Value>.self).pointee.declaration
    }

    // Called for every property of every object added: without these the generic code looks up
    // `Persisted<Value>` metadata twice per call (a hash-table probe each), a quarter of an insert.
    @_specialize(exported: false, where Value == Int)
    @_specialize(exported: false, where Value == String)
    @_specialize(exported: false, where Value == Bool)
    @_specialize(exported: false, where Value == Double)
    @_specialize(exported: false, where Value == Date)
    @_specialize(exported: false, where Value == ObjectId)
    @_specialize(exported: false, where Value == UUID)
    @_specialize(exported: false, where Value == Int?)
    @_specialize(exported: false, where Value == String?)
    @_specialize(exported: false, where Value == Bool?)
    @_specialize(exported: false, where Value == Double?)
    @_specialize(exported: false, where Value == Date?)
    @_specialize(exported: false, where Value == ObjectId?)
    @_specialize(exported: false, where Value == UUID?)
    static func encodeUnmanaged(at field: UnsafeMutableRawPointer, _ context: _EncodingContext) -> _StoredValue {
        let value = field.assumingMemoryBound(to: Persisted<Value>.self).pointee.unmanagedValue()
        return Value._trellisEncode(value, context)
    }

    static func encodeUnmanagedAndRelease(at field: UnsafeMutableRawPointer, _ context: _EncodingContext)
        -> _StoredValue
    {
        let storage = field.assumingMemoryBound(to: Persisted<Value>.self)
        let value: Value
        switch storage.pointee._storage {
        case .unmanaged(let held), .managedCached(let held): value = held
        case .unmanagedNoDefault, .managed: value = Value._trellisDefaultValue()
        }
        let encoded = Value._trellisEncode(value, context)
        storage.pointee._storage = .managed
        storage.pointee._untouched = false
        return encoded
    }

    static func unmanagedValue(at field: UnsafeMutableRawPointer) -> Any {
        field.assumingMemoryBound(to: Persisted<Value>.self).pointee.unmanagedValue()
    }

    static func isUntouched(at field: UnsafeRawPointer) -> Bool {
        // A plain load: matching the generic enum would look its metadata up on every object added.
        field.load(fromByteOffset: untouchedOffset, as: Bool.self)
    }

    static func setUnmanaged(at field: UnsafeMutableRawPointer, _ value: Any?) -> Bool {
        guard let converted = ValueConversion.convert(value, to: Value.self) else { return false }
        field.assumingMemoryBound(to: Persisted<Value>.self).pointee.storage = .unmanaged(converted)
        return true
    }

    static func attachCollection(at field: UnsafeMutableRawPointer, binding: CollectionBinding, session: AddSession) {
        guard let collectionType = Value.self as? any _CollectionProperty.Type else { return }
        let storage = field.assumingMemoryBound(to: Persisted<Value>.self)
        let current = storage.pointee.unmanagedValue()
        guard let attached = attach(collectionType, current, binding, session) as? Value else {
            throwRealmException("Trellis internal error: '\(binding.location.field.name)' could not be stored.")
        }
        storage.pointee.storage = .managedCached(attached)
    }

    private static func attach<C: _CollectionProperty>(_: C.Type, _ value: Value, _ binding: CollectionBinding,
                                                        _ session: AddSession) -> Any?
    {
        guard let collection = value as? C else { return nil }
        return C._trellisAttach(collection, to: binding, session: session)
    }

    static func markManaged(at field: UnsafeMutableRawPointer) {
        let storage = field.assumingMemoryBound(to: Persisted<Value>.self)
        if case .managedCached = storage.pointee.storage { return }
        storage.pointee.storage = .managed
    }

    static func storedValue(_ row: RowView, core: RealmCore, column: Int) -> Any? {
        flattened(Value._trellisRead(_RowReader(row: row, core: core), column))
    }

    static func dynamicGet(_ object: ObjectBase, _ field: FieldInfo) -> Any? {
        let pointer = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque()) + field.offset
        let storage = pointer.assumingMemoryBound(to: Persisted<Value>.self)
        guard let managed = object._managed else { return flattened(storage.pointee.unmanagedValue()) }
        if field.cachesAccessor {
            return managedAccessor(object, field, storage)
        }
        let row = managed.core.row(of: object, managed)
        return flattened(Value._trellisRead(_RowReader(row: row, core: managed.core, owner: object), field.rowColumn))
    }

    /// The managed accessor of a collection (made once and kept) or LinkingObjects (made on
    /// every read, as in Realm).
    static func managedAccessor(_ object: ObjectBase, _ field: FieldInfo,
                                _ storage: UnsafeMutablePointer<Persisted<Value>>) -> Value
    {
        if !field.isLinkingObjects, storage.pointee._cachedFor == object._generation,
           case .managedCached(let value) = storage.pointee.storage
        {
            return value
        }
        let value = makeAccessor(object, field)
        if !field.isLinkingObjects {
            storage.pointee.storage = .managedCached(value)
            storage.pointee._cachedFor = object._generation
        }
        return value
    }

    /// A nil optional as nil (not as a boxed `Optional.none`), as Realm's dynamic getter returns.
    private static func flattened(_ value: Value) -> Any? {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional { return mirror.children.first?.value }
        return value
    }

    static func dynamicSet(_ object: ObjectBase, _ field: FieldInfo, _ value: Any?) {
        guard let converted = ValueConversion.convert(value, to: Value.self) else {
            throwRealmException("Invalid value '\(value.map { "\($0)" } ?? "nil")' of type "
                + "'\(value.map { "\(type(of: $0))" } ?? "nil")' for '\(Value._trellisTypeInfo.swiftName)' property "
                + "'\(type(of: object).className()).\(field.name)'.")
        }
        if let managed = object._managed {
            managed.core.setProperty(of: object, managed, field, value: converted)
        } else {
            let pointer = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque()) + field.offset
            pointer.assumingMemoryBound(to: Persisted<Value>.self).pointee.storage = .unmanaged(converted)
        }
    }
}

/// The options a `@Persisted` declaration carries.
@usableFromInline
struct PropertyDeclaration {
    var isPrimaryKey = false
    var isIndexed = false
    var originProperty: String?

    @usableFromInline
    init(isPrimaryKey: Bool = false, isIndexed: Bool = false, originProperty: String? = nil) {
        self.isPrimaryKey = isPrimaryKey
        self.isIndexed = isIndexed
        self.originProperty = originProperty
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

    @usableFromInline var storage: Storage
    @usableFromInline let declaration: PropertyDeclaration

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
        storage = .unmanagedNoDefault
        declaration = PropertyDeclaration()
    }

    /// A property with a default value.
    @inlinable
    public init(wrappedValue value: Value) {
        storage = .unmanaged(value)
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
        get {
            if let read = object._managedColumn(storageKeyPath) {
                return Value._trellisRead(read.reader, read.column)
            }
            return readSlowly(object, storageKeyPath)
        }
        // Inlined into the model's setter so the storage key path is a literal there, which the
        // optimizer turns into a plain store instead of a key-path walk (a tenth of an insert).
        @inline(__always)
        set {
            if object._isManaged {
                write(newValue, to: object, storageKeyPath)
            } else {
                // Inlined with the key path known, this is a plain store into the object.
                object[keyPath: storageKeyPath].storage = .unmanaged(newValue)
            }
        }
    }

    /// Reads an unmanaged value, or a managed collection / LinkingObjects accessor (made once
    /// per object and kept).
    @usableFromInline
    static func readSlowly<EnclosingSelf: ObjectBase>(
        _ object: EnclosingSelf, _ storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        guard let managed = object._managed else {
            let value = object[keyPath: storageKeyPath].unmanagedValue()
            if let recorder = object._keyPathRecorder { return recorder.record(object, storageKeyPath, unmanaged: value) }
            return value
        }
        let field = managed.info.field(for: storageKeyPath)
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque()) + field.offset
        return managedAccessor(object, field, base.assumingMemoryBound(to: Persisted<Value>.self))
    }

    /// Writes through to the database when managed, else into the unmanaged storage.
    @usableFromInline
    static func write<EnclosingSelf: ObjectBase>(
        _ newValue: Value, to object: EnclosingSelf,
        _ storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) {
        if let managed = object._managed {
            let field = managed.info.field(for: storageKeyPath)
            managed.core.setProperty(of: object, managed, field, value: newValue)
        } else {
            object[keyPath: storageKeyPath].storage = .unmanaged(newValue)
        }
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

extension Persisted where Value: _Indexable {
    /// A property with an index, which makes equality and range queries on it fast.
    @inlinable
    public init(indexed: Bool) {
        storage = .unmanagedNoDefault
        declaration = PropertyDeclaration(isIndexed: indexed)
    }

    /// A property with a default value and an index.
    @inlinable
    public init(wrappedValue value: Value, indexed: Bool) {
        storage = .unmanaged(value)
        declaration = PropertyDeclaration(isIndexed: indexed)
    }
}

extension Persisted where Value: _PrimaryKey {
    /// The primary key: unique in the class, immutable once the object is managed, indexed.
    @inlinable
    public init(primaryKey: Bool) {
        storage = .unmanagedNoDefault
        declaration = PropertyDeclaration(isPrimaryKey: primaryKey, isIndexed: primaryKey)
    }

    /// The primary key with a default value.
    @inlinable
    public init(wrappedValue value: Value, primaryKey: Bool) {
        storage = .unmanaged(value)
        declaration = PropertyDeclaration(isPrimaryKey: primaryKey, isIndexed: primaryKey)
    }
}

/// Types whose managed accessor is created once per object and kept (collections,
/// LinkingObjects), so that `obj.dogs === obj.dogs`.
protocol _CachedAccessor {
    /// Initializes `slot` (uninitialized memory for one `Self`) with the managed accessor of
    /// `field` of `object`. Through a pointer rather than `Any`, so the caller casts nothing.
    static func _trellisMakeAccessor(_ object: ObjectBase, _ field: FieldInfo, into slot: UnsafeMutableRawPointer)
}

// MARK: - Codable

extension Persisted: Decodable where Value: Decodable {
    /// Decodes the property's value (an unmanaged object's property).
    public init(from decoder: any Decoder) throws {
        // Through a container, so the decoder's strategies apply (dates, data, keys).
        storage = .unmanaged(try decoder.singleValueContainer().decode(Value.self))
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

import Synchronization

/// What Trellis knows about one `@Persisted` property of a model class.
final class FieldInfo: Sendable {
    /// The property name (the Swift name without the wrapper's underscore).
    let name: String
    /// The name stored in the file: the class's ``ObjectBase/propertiesMapping()`` entry for
    /// ``name``, else ``name``. Only the catalog, index database names and migrations use it.
    let columnName: String
    /// Index among the class's `@Persisted` fields.
    let index: Int
    /// Position in the row, or -1 for LinkingObjects (computed, not stored).
    let rowColumn: Int
    /// Byte offset of the `Persisted` storage inside an instance.
    let offset: Int
    let witness: any PersistedFieldWitness.Type
    // Sendable: immutable after discovery. The metatype inside is an immutable value.
    nonisolated(unsafe) let typeInfo: _PropertyTypeInfo
    let isPrimaryKey: Bool
    let isIndexed: Bool
    let originProperty: String?
    /// What deleting an object of the class does to the objects this link property targets.
    let deleteRule: DeleteRule
    /// For collections and LinkingObjects: the value type, which makes the managed accessor
    /// (looked up once here, so a read makes no dynamic cast).
    let accessorMaker: (any _CachedAccessor.Type)?
    /// The property's type when it is one a primary-key lookup encodes straight from the key
    /// (`Int`, `Int64`, `String`; see ``PrimaryKeyEncoding/payload(ofKey:for:)``).
    let directKeyType: Any.Type?
    /// A to-one property to an `Object` class, whose wrapper is read without generic code when
    /// its object is added (``ObjectLinkField``).
    let holdsOptionalObject: Bool

    init(name: String, index: Int, rowColumn: Int, offset: Int, witness: any PersistedFieldWitness.Type,
         typeInfo: _PropertyTypeInfo, declaration: PropertyDeclaration, columnName: String? = nil)
    {
        self.name = name
        self.columnName = columnName ?? name
        self.index = index
        self.rowColumn = rowColumn
        self.offset = offset
        self.witness = witness
        self.typeInfo = typeInfo
        self.isPrimaryKey = declaration.isPrimaryKey
        self.isIndexed = declaration.isIndexed
        self.originProperty = declaration.originProperty
        self.deleteRule = declaration.deleteRule
        self.accessorMaker = witness.cachedAccessorType
        self.holdsOptionalObject = typeInfo.type == .object && typeInfo.collection == .none && witness.holdsOptionalObject
        self.directKeyType = switch (typeInfo.type, typeInfo.isOptional, typeInfo.swiftName) {
        case (.int, false, "Int"): Int.self
        case (.int, false, "Int64"): Int64.self
        case (.string, false, _): String.self
        default: nil
        }
    }

    var isLinkingObjects: Bool { typeInfo.type == .linkingObjects }
    var isLink: Bool { typeInfo.type == .object }
    var isStored: Bool { rowColumn >= 0 }
    /// Collections and LinkingObjects keep one accessor per object.
    var cachesAccessor: Bool { typeInfo.collection != .none || isLinkingObjects }
    var isEmbeddedLink: Bool { isLink && (typeInfo.objectType?.isEmbedded ?? typeInfo.storedTargetIsEmbedded) }
    /// A link (to-one or a collection of objects) whose targets are deleted with its owner.
    var cascadesDeletes: Bool { deleteRule == .cascade && isLink && !isEmbeddedLink }

    var property: Property {
        Property(name: name, type: typeInfo.type, isOptional: typeInfo.isOptional, collection: typeInfo.collection,
                 isIndexed: isIndexed || isPrimaryKey, isPrimary: isPrimaryKey,
                 objectClassName: typeInfo.objectClassName, linkOriginPropertyName: originProperty,
                 columnName: columnName, deleteRule: deleteRule)
    }
}

/// What Trellis knows about a model class, discovered once per process from the Swift type.
///
/// Discovery reads the stored fields of the class (``SchemaDiscovery``); nothing here depends
/// on a particular file, so one `ClassInfo` serves every Realm.
final class ClassInfo: Sendable {
    let objectType: ObjectBase.Type
    let className: String
    let isEmbedded: Bool
    /// Every `@Persisted` field, in declaration order (superclass fields first).
    let fields: [FieldInfo]
    /// The stored fields (not LinkingObjects), in row order.
    let storedFields: [FieldInfo]
    /// The stored links whose targets are deleted with the object (``DeleteRule/cascade``).
    let cascadingFields: [FieldInfo]
    let primaryKeyField: FieldInfo?
    let objectSchema: ObjectSchema
    /// Where each `@Persisted` wrapper of an accessor is and the slot written into it when the
    /// accessor becomes managed (see `Persisted._column`); empty for classes known only by a file's
    /// schema, whose accessors have no wrappers.
    let wrapperSlots: [WrapperSlot]

    /// A `@Persisted` wrapper's byte offset in an accessor and what a managed accessor's wrapper
    /// is given (`Persisted._column`, `Persisted._field`).
    struct WrapperSlot {
        let offset: Int
        let column: Int32
        let field: Int32
    }

    /// Whether an accessor that nothing else references may be pointed at another row during
    /// enumeration and link hops (see ``ObjectBase/_repoint(core:table:key:epoch:)``): the class
    /// keeps no state of its own in an accessor (no field that is not persisted, no legacy
    /// declaration); the collection accessors its wrappers keep are for one row (see
    /// ``ObjectBase/_generation``).
    let accessorsAreReusable: Bool

    /// Fields declared without `@Persisted` (`let dogs = List<Dog>()`, `RealmProperty`,
    /// `let owners = LinkingObjects(fromType:property:)`), made live when an accessor becomes
    /// managed.
    let legacyFields: [FieldInfo]

    convenience init(objectType: ObjectBase.Type, fields: [FieldInfo], hasOtherStoredFields: Bool = true) {
        self.init(objectType: objectType, className: objectType.className(), isEmbedded: objectType.isEmbedded,
                  fields: fields, hasOtherStoredFields: hasOtherStoredFields, hasWrappers: true)
    }

    /// A class known only by the schema stored in a file (no model class): its `objectType` is
    /// `ObjectBase` and no accessor is ever made for it (see ``StoredSchemaQuery``), or
    /// `DynamicObject` for ``DynamicObject`` accessors (see ``DynamicSchema``).
    convenience init(storedClassNamed className: String, isEmbedded: Bool, fields: [FieldInfo],
                     objectType: ObjectBase.Type = ObjectBase.self)
    {
        self.init(objectType: objectType, className: className, isEmbedded: isEmbedded, fields: fields,
                  hasOtherStoredFields: true, hasWrappers: false)
    }

    /// `hasWrappers`: the fields were discovered in the model class (their offsets are those of
    /// `@Persisted` wrappers in its instances).
    private init(objectType: ObjectBase.Type, className: String, isEmbedded: Bool, fields: [FieldInfo],
                 hasOtherStoredFields: Bool, hasWrappers: Bool)
    {
        // An accessor holds nothing of its row but what `ObjectBase` holds and its wrappers'
        // kept collection accessors, which belong to one generation: no field of the model's own,
        // no legacy declaration.
        let legacyFields = fields.filter { $0.witness.isLegacyField }
        self.accessorsAreReusable = !hasOtherStoredFields && legacyFields.isEmpty
        self.legacyFields = legacyFields
        self.objectType = objectType
        self.className = className
        self.isEmbedded = isEmbedded
        self.fields = fields
        self.storedFields = fields.filter(\.isStored)
        self.cascadingFields = storedFields.filter(\.cascadesDeletes)
        self.primaryKeyField = fields.first { $0.isPrimaryKey }
        self.objectSchema = ObjectSchema(className: className,
                                         properties: storedFields.map(\.property),
                                         computedProperties: fields.filter(\.isLinkingObjects).map(\.property),
                                         isEmbedded: isEmbedded)
        wrapperSlots = !hasWrappers ? [] : fields.compactMap { field in
            guard !field.witness.isLegacyField else { return nil }
            // The column a read decodes from the row; for LinkingObjects (made from the object
            // alone, no row read) `-2 - field index`; -1 for collections, whose accessor is kept.
            let column = field.isLinkingObjects ? Self.linkingObjectsColumn(fieldIndex: field.index)
                : field.cachesAccessor ? -1 : field.rowColumn
            return WrapperSlot(offset: field.offset, column: Int32(column), field: Int32(field.index + 1))
        }
    }

    func field(named name: String) -> FieldInfo? {
        fields.first { $0.name == name }
    }

    /// The field stored under `columnName` in the file (see ``ObjectBase/propertiesMapping()``).
    func field(columnName: String) -> FieldInfo? {
        fields.first { $0.columnName == columnName }
    }

    /// The column a LinkingObjects field's wrapper is given (see ``wrapperSlots``): below -1, so
    /// that the property read hands it to `LinkingObjects._trellisReadComputed`, which makes the
    /// value from the object alone (see `Persisted`'s getter).
    static func linkingObjectsColumn(fieldIndex: Int) -> Int { -2 - fieldIndex }

    /// The field index ``linkingObjectsColumn(fieldIndex:)`` encoded, or nil for any other column.
    static func linkingObjectsFieldIndex(column: Int) -> Int? { column <= -2 ? -2 - column : nil }
}

/// A stored `LinkingObjects` field declared without `@Persisted`.
extension ClassInfo {
    private static let registry = Mutex<[ObjectIdentifier: ClassInfo]>([:])

    /// The class info of `type`, discovering it on first use.
    /// A class discovered so far (by a configuration or first use) with this schema name.
    static func known(named className: String) -> ClassInfo? {
        registry.withLock { $0.values.first { $0.className == className } }
    }

    static func unbound(for type: ObjectBase.Type) -> ClassInfo {
        if let known = registry.withLock({ $0[ObjectIdentifier(type)] }) { return known }
        let info = SchemaDiscovery.discover(type)
        return registry.withLock { registry in
            if let raced = registry[ObjectIdentifier(type)] { return raced }
            registry[ObjectIdentifier(type)] = info
            return info
        }
    }
}

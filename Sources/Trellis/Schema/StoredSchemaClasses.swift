/// The classes of a file as its stored schema describes them, with their tables: what queries
/// need when the model classes are not at hand (``StoredSchemaQuery``).
///
/// The class infos have no Swift type (their `objectType` is `ObjectBase`) and their fields no
/// accessors, so they serve only to read rows; the tables are opened in `core`'s snapshot and
/// live as long as this value.
final class StoredSchemaClasses {
    private var infos: [String: ClassInfo] = [:]
    private var tables: [String: Table] = [:]

    /// The classes for reading, with the tables that exist in `core`'s snapshot.
    init(core: RealmCore) {
        let transaction = core.transaction
        let embedded = Self.embeddedClassNames(core.file.catalog)
        for stored in core.file.catalog.classes {
            let info = Self.classInfo(stored, embedded: embedded)
            infos[stored.name] = info
            if let rows = Table.existingRows(of: stored.name, in: transaction) { tables[stored.name] = Table(info: info, tableId: stored.tableId, rows: rows, primaryKeys: nil) }
        }
    }

    /// The classes for writing in `core`'s write transaction: every table is opened (created if
    /// need be) with its primary-key and secondary indexes.
    init(writingIn core: RealmCore, transaction: Transaction) throws {
        let embedded = Self.embeddedClassNames(core.file.catalog)
        for stored in core.file.catalog.classes {
            let info = Self.classInfo(stored, embedded: embedded)
            infos[stored.name] = info
            tables[stored.name] = try Table.open(info, tableId: stored.tableId, in: transaction, create: true,
                                                 columnShift: core.file.catalog.keptColumnShift)
        }
    }

    private static func embeddedClassNames(_ catalog: SchemaCatalog) -> Set<String> {
        Set(catalog.classes.filter(\.embedded).map(\.name))
    }

    /// The table of the class named `name`.
    func table(named name: String) -> Table? { tables[name] }

    /// The table with this number in the file.
    func table(id: UInt32) -> Table? { tables.values.first { $0.tableId == id } }

    /// The class named `name`, if the file has it.
    func info(named name: String) -> ClassInfo? { infos[name] }

    /// The class's table; nil when no object of it was ever stored.
    func table(of info: ClassInfo) -> Table? { tables[info.className] }

    /// Class names in the file, sorted.
    var classNames: [String] { infos.keys.sorted() }

    /// Link targets and tables by class name.
    var resolver: QueryClassResolver {
        QueryClassResolver(
            targetClass: { [unowned self] field in field.typeInfo.objectClassName.flatMap { self.infos[$0] } },
            classNamed: { [unowned self] name in self.infos[name] },
            table: { [unowned self] info in self.tables[info.className] })
    }

    private static func classInfo(_ stored: SchemaCatalog.StoredClass, embedded: Set<String>) -> ClassInfo {
        var fields = [FieldInfo]()
        for (column, storedProperty) in stored.properties.enumerated() {
            fields.append(field(storedProperty.property, index: fields.count, rowColumn: column, embedded: embedded))
        }
        for computed in stored.computed {
            fields.append(field(computed.property, index: fields.count, rowColumn: -1, embedded: embedded))
        }
        return ClassInfo(storedClassNamed: stored.name, isEmbedded: stored.embedded, fields: fields)
    }

    private static func field(_ property: Property, index: Int, rowColumn: Int, embedded: Set<String>) -> FieldInfo {
        var typeInfo = _PropertyTypeInfo(property.type)
        typeInfo.isOptional = property.isOptional
        typeInfo.collection = property.collection
        typeInfo.storedTargetName = property.objectClassName
        typeInfo.storedTargetIsEmbedded = property.objectClassName.map(embedded.contains) ?? false
        let declaration = PropertyDeclaration(isPrimaryKey: property.isPrimary, isIndexed: property.isIndexed,
                                              originProperty: property.linkOriginPropertyName,
                                              deleteRule: property.deleteRule)
        return FieldInfo(name: property.name, index: index, rowColumn: rowColumn, offset: 0,
                         witness: StoredFieldWitness.self, typeInfo: typeInfo, declaration: declaration)
    }
}

/// The witness of a field known only from a file's stored schema: such fields belong to no
/// Swift object, so nothing may read or write one through an accessor.
private enum StoredFieldWitness: PersistedFieldWitness {
    private static func misuse() -> Never {
        throwRealmException("Trellis internal error: a class read from a file's stored schema has no accessors.")
    }

    static var valueTypeInfo: _PropertyTypeInfo { misuse() }
    static var cachedAccessorType: (any _CachedAccessor.Type)? { nil }
    static func declaration(at field: UnsafeRawPointer) -> PropertyDeclaration { misuse() }
    static func encodeUnmanaged(at field: UnsafeMutableRawPointer, _ context: _EncodingContext) -> _StoredValue {
        misuse()
    }
    static func unmanagedValue(at field: UnsafeMutableRawPointer) -> Any { misuse() }
    static func isUntouched(at field: UnsafeRawPointer) -> Bool { misuse() }
    static func setUnmanaged(at field: UnsafeMutableRawPointer, _ value: Any?) -> Bool { misuse() }
    static func dynamicGet(_ object: ObjectBase, _ field: FieldInfo) -> Any? { misuse() }
    static func storedValue(_ row: RowView, core: RealmCore, column: Int) -> Any? { misuse() }
    static func markManaged(at field: UnsafeMutableRawPointer) { misuse() }
    static func dynamicSet(_ object: ObjectBase, _ field: FieldInfo, _ value: Any?) { misuse() }
    static func attachCollection(at field: UnsafeMutableRawPointer, binding: CollectionBinding, session: AddSession) {
        misuse()
    }
}

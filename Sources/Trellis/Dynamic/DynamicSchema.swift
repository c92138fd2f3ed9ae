/// The classes of one Realm as ``DynamicObject``s see them: by name, from the schema stored in
/// the file (or, for a class not stored yet, from its model class), with tables whose
/// accessors are `DynamicObject`s.
///
/// One per `RealmCore`, made on first dynamic use. The tables live as long as the core, since
/// accessors refer to them unowned: a table whose databases a write transaction opened is
/// used only until that transaction ends, then kept (for its accessors) but no longer handed
/// out.
final class DynamicSchema {
    private var infos: [String: ClassInfo] = [:]
    private var tables: [String: Table] = [:]
    private var writeTables: [String: Table] = [:]
    private var retired: [Table] = []

    /// The table of a class, made in the current write transaction or before.
    func table(named name: String) -> Table? { writeTables[name] ?? tables[name] }

    /// A table whose databases all processes can see.
    func keep(_ table: Table, named name: String, openedByWrite: Bool) {
        if openedByWrite { writeTables[name] = table } else { tables[name] = table }
    }

    /// The model class a link to each class reads as (nil: a `DynamicObject`), found once.
    var linkTargetModels: [String: ObjectBase.Type?] = [:]

    func info(named name: String) -> ClassInfo? { infos[name] }
    func keep(_ info: ClassInfo) { infos[info.className] = info }

    /// The table with this number in the file.
    func table(id: UInt32) -> Table? {
        writeTables.values.first { $0.tableId == id } ?? tables.values.first { $0.tableId == id }
    }

    /// The write transaction ended: tables it opened databases for are opened again when next
    /// needed.
    func endWrite() {
        retired.append(contentsOf: writeTables.values)
        writeTables = [:]
    }

    /// A class's info for dynamic access: its stored properties in row order, then its
    /// LinkingObjects properties.
    static func classInfo(named className: String, isEmbedded: Bool, properties: [Property], computed: [Property],
                          embeddedClasses: Set<String>) -> ClassInfo
    {
        var fields = [FieldInfo]()
        for (column, property) in properties.enumerated() {
            fields.append(field(property, index: fields.count, rowColumn: column, embeddedClasses: embeddedClasses))
        }
        for property in computed {
            fields.append(field(property, index: fields.count, rowColumn: -1, embeddedClasses: embeddedClasses))
        }
        return ClassInfo(storedClassNamed: className, isEmbedded: isEmbedded, fields: fields,
                         objectType: DynamicObject.self)
    }

    private static func field(_ property: Property, index: Int, rowColumn: Int, embeddedClasses: Set<String>)
        -> FieldInfo
    {
        var typeInfo = _PropertyTypeInfo(property.type)
        typeInfo.isOptional = property.isOptional
        typeInfo.collection = property.collection
        typeInfo.storedTargetName = property.objectClassName
        typeInfo.storedTargetIsEmbedded = property.objectClassName.map(embeddedClasses.contains) ?? false
        typeInfo.swiftName = DynamicFieldTypes.swiftName(of: property)
        let declaration = PropertyDeclaration(isPrimaryKey: property.isPrimary, isIndexed: property.isIndexed,
                                              originProperty: property.linkOriginPropertyName,
                                              deleteRule: property.deleteRule)
        return FieldInfo(name: property.name, index: index, rowColumn: rowColumn, offset: 0,
                         witness: DynamicFieldTypes.witness(for: property), typeInfo: typeInfo,
                         declaration: declaration, columnName: property.columnName)
    }
}

extension RealmCore {
    /// This Realm's dynamic classes, made on first use.
    var dynamicSchema: DynamicSchema {
        if let schema = dynamicClasses { return schema }
        let schema = DynamicSchema()
        dynamicClasses = schema
        return schema
    }

    /// The model class of this name the configuration or the process knows, if any.
    private func modelClass(named name: String) -> ObjectBase.Type? {
        // With objectTypes, only those: a class outside them is not the Realm's, as in Realm.
        // Without, every model class of the program (Realm's default schema), used yet or not.
        let type: ObjectBase.Type?
        if let types = configuration.objectTypes {
            type = types.first { $0.className() == name }
        } else {
            type = ClassInfo.known(named: name)?.objectType ?? ProgramModelClasses.modelClass(named: name)
        }
        guard let type, type != DynamicObject.self, type != ObjectBase.self, !configuration.opensAnySchemaVersion else {
            return nil
        }
        return type
    }

    /// The model class of a stored class, when this Realm has it (configured, or found by the
    /// Swift type name the file records) and it stores exactly what the file holds.
    private func matchingModel(of stored: SchemaCatalog.StoredClass) -> ClassInfo? {
        if configuration.opensAnySchemaVersion { return nil }
        // With objectTypes, only those (as in Realm); else the class the file names.
        let configured = configuration.objectTypes.map { types in types.first { $0.className() == stored.name } }
        guard let type = configured ?? SchemaCatalog.modelClass(of: stored), type != DynamicObject.self else { return nil }
        let info = ClassInfo.unbound(for: type)
        return SchemaCatalog.differences(stored: stored, model: info).isEmpty
            && SchemaCatalog.indexChanges(stored: stored, model: info).isEmpty ? info : nil
    }

    /// The stored class of this name, reading a newer catalog if another process added it.
    private func storedClass(named name: String) -> (SchemaCatalog.StoredClass, SchemaCatalog)? {
        var catalog = currentCatalog
        if catalog.storedClass(named: name) == nil, !hasPendingCatalog {
            catalog = file.catalog(readingNewerFrom: transaction)
        }
        return catalog.storedClass(named: name).map { ($0, catalog) }
    }

    /// The class `name` for dynamic access; nil when neither the file nor a model has it.
    func dynamicClassInfo(named name: String) -> ClassInfo? {
        if let known = dynamicSchema.info(named: name) { return known }
        let info: ClassInfo
        if let (stored, catalog) = storedClass(named: name) {
            var properties = stored.properties.map(\.property)
            var computed = stored.computed.map(\.property)
            if let modelInfo = matchingModel(of: stored) {
                // As in Realm, a Realm that has the model class names properties as the model
                // does (propertiesMapping()); without it, the file's names are all there is.
                properties = properties.map { stored in
                    modelInfo.field(columnName: stored.name).map { stored.named($0.name, columnName: stored.name) } ?? stored
                }
                let modelComputed = modelInfo.fields.filter(\.isLinkingObjects).map(\.property)
                computed = modelComputed + computed.filter { stored in !modelComputed.contains { $0.name == stored.name } }
            }
            info = DynamicSchema.classInfo(named: name, isEmbedded: stored.embedded,
                                           properties: properties, computed: computed,
                                           embeddedClasses: Set(catalog.classes.filter(\.embedded).map(\.name)))
        } else if let model = modelClass(named: name) {
            let modelInfo = ClassInfo.unbound(for: model)
            let embedded = modelInfo.fields.compactMap { field in
                field.typeInfo.objectType.flatMap { $0.isEmbedded ? $0.className() : nil }
            }
            info = DynamicSchema.classInfo(named: name, isEmbedded: modelInfo.isEmbedded,
                                           properties: modelInfo.storedFields.map(\.property),
                                           computed: modelInfo.fields.filter(\.isLinkingObjects).map(\.property),
                                           embeddedClasses: Set(embedded))
        } else {
            return nil
        }
        dynamicSchema.keep(info)
        return info
    }

    /// The class `name` for dynamic access; traps with Realm's message when the Realm does not
    /// have it.
    func requireDynamicClassInfo(named name: String) -> ClassInfo {
        guard let info = dynamicClassInfo(named: name) else { notManagedByTheRealm(name) }
        return info
    }

    /// ``requireDynamicClassInfo(named:)`` for the Realm's dynamic API (`dynamicObjects(_:)`,
    /// `dynamicObject(ofType:forPrimaryKey:)`, `dynamicCreate(_:value:update:)`): as in Realm
    /// (`RLMSchemaInfo`), a class the configuration's `objectTypes` leaves out is not the Realm's,
    /// even when the file stores it, and traps with Realm's message. A Realm of the file's stored
    /// schema (no `objectTypes`) has every class the file stores.
    func requireConfiguredClassInfo(named name: String) -> ClassInfo {
        if !configuration.opensAnySchemaVersion, let types = configuration.objectTypes,
           !types.contains(where: { $0.className() == name })
        {
            notManagedByTheRealm(name)
        }
        return requireDynamicClassInfo(named: name)
    }

    /// Traps with Realm's message for a class the Realm does not have.
    func notManagedByTheRealm(_ name: String) -> Never {
        throwRealmException("Object type '\(name)' is not managed by the Realm. If using a custom `objectClasses` "
            + "/ `objectTypes` array in your configuration, add `\(name)` to the list of `objectClasses` / "
            + "`objectTypes`.")
    }

    /// The table of class `name` with `DynamicObject` accessors: nil when no object of it was
    /// stored yet, unless `create` (in a write transaction) makes it.
    func dynamicTable(named name: String, create: Bool) -> Table? {
        let info = requireDynamicClassInfo(named: name)
        if let table = dynamicSchema.table(named: name) { return table }
        let creating = create && isInWriteTransaction
        var stored = storedClass(named: name)?.0
        if stored == nil, creating, let model = modelClass(named: name) {
            _ = table(for: model, create: true)  // registers the class in the file's schema
            stored = currentCatalog.storedClass(named: name)
        }
        guard let stored else { return nil }
        do {
            guard let table = try Table.open(info, tableId: stored.tableId, in: transaction, create: creating,
                                                 columnShift: currentCatalog.keptColumnShift,
                                                 indexedColumns: SchemaCatalog.indexedColumns(of: stored)) else {
                return nil
            }
            let openedByWrite = hasPendingCatalog || (writeTransaction?.hasOpened(anyOf: table.databases) ?? false)
            dynamicSchema.keep(table, named: name, openedByWrite: openedByWrite)
            return table
        } catch {
            throwRealmException("Could not open the table of '\(name)' in '\(environmentPath)': \(error)")
        }
    }

    /// The model class a to-one link to class `name` reads as through a ``DynamicObject``: as
    /// in Realm, a link target is an object of the Realm's own class for it (a `Dog`, not a
    /// `DynamicObject`) when the Realm has that model class and it stores what the file holds;
    /// nil otherwise (a file read without its classes, a migration's old schema).
    func linkTargetModel(named name: String) -> ObjectBase.Type? {
        if let known = dynamicSchema.linkTargetModels[name] { return known }
        let model = storedClass(named: name).flatMap { matchingModel(of: $0.0)?.objectType }
        dynamicSchema.linkTargetModels[name] = .some(model)
        return model
    }

    /// A `DynamicObject` accessor for an existing row of class `name`.
    func dynamicAccessor(className name: String, key: ObjectKey) -> DynamicObject {
        guard let table = dynamicTable(named: name, create: false) else {
            throwRealmException("Object has been deleted or invalidated.")
        }
        return accessor(DynamicObject.self, table: table, key: key)
    }
}

extension ClassInfo {
    /// The class name of a ``DynamicObject`` class, nil for a model class.
    var dynamicClassName: String? { objectType == DynamicObject.self ? className : nil }
}

extension RealmCore {
    /// The accessor in this Realm of the object `managed` designates in another Realm of the
    /// file, with its row read, or nil when the row is missing. A ``DynamicObject`` stays one
    /// (its Swift type does not name its class).
    func sameObject<T: ObjectBase>(_ type: T.Type, as managed: ManagedObject) -> T? {
        sameObject(type, key: managed.key, dynamicClassName: managed.info.dynamicClassName)
    }

    /// The object a stored link names when this Realm has no table open for its class (a class
    /// left out of `objectTypes`): a ``DynamicObject`` of the class the file stores under
    /// `tableId`, as Realm reads such a link; nil when the file has no such class or object.
    func unmodelledObject(tableId: UInt32, key: ObjectKey) -> DynamicObject? {
        guard let stored = currentCatalog.classes.first(where: { $0.tableId == tableId }) else { return nil }
        return sameObject(DynamicObject.self, key: key, dynamicClassName: stored.name)
    }

    /// ``sameObject(_:as:)`` by key, and class name for a ``DynamicObject``.
    func sameObject<T: ObjectBase>(_ type: T.Type, key: ObjectKey, dynamicClassName: String?) -> T? {
        guard let dynamicClassName else { return linkedAccessor(type, key: key) }
        guard let table = dynamicTable(named: dynamicClassName, create: false),
              let bytes = transaction.get(table.rows, integerKey: key)
        else { return nil }
        let object = accessor(type, table: table, key: key)
        object._rowCache = RowCache(stamp: changeStamp, bytes: bytes)
        return object
    }
}

import Foundation

/// A value of one property during a migration, decoded from the old layout or set by the block.
enum MigrationValue {
    case null
    /// A scalar, or a to-one link (`.link(key)` of the property's target class).
    case scalar(_StoredValue.Payload)
    case list([MigrationValue])
    case set([MigrationValue])
    case map([(key: String, value: MigrationValue)])
}

/// One object being migrated: its values before, and the values it will be written with.
final class MigrationRecord {
    let className: String
    let key: ObjectKey
    let old: [String: MigrationValue]
    var new: [String: MigrationValue]
    var isDeleted = false
    /// The objects the block holds for the record, so that every read of it while one is held
    /// hands out the same object (`==`, `isSameObject(as:)` and sets treat it as one).
    weak var oldObject: DynamicObject?
    weak var newObject: DynamicObject?

    init(className: String, key: ObjectKey, old: [String: MigrationValue], new: [String: MigrationValue]) {
        self.className = className
        self.key = key
        self.old = old
        self.new = new
    }
}

/// Rewrites the classes whose stored layout changed (and any class the migration block
/// enumerates) in one write transaction, keeping every object's key so links from classes
/// that did not change stay valid.
///
/// Old rows, lists, sets and maps are decoded by the *stored* schema into ``MigrationRecord``s;
/// the block reads and changes them; then each rewritten class's storage is cleared and its
/// objects are written again through the normal write path (rows, primary-key and secondary
/// indexes, backlinks, collections). Objects the block deleted are deleted last, through the
/// normal delete (links to them are cleared, embedded children go with them).
final class Migrator {
    let core: RealmCore
    let txn: Transaction
    let oldCatalog: SchemaCatalog
    private(set) var newCatalog: SchemaCatalog
    /// The configured model classes, by name.
    let models: [String: ClassInfo]
    /// The new tables (created in this transaction), by class name.
    private var tables: [String: Table] = [:]
    /// The list, set and map collections the new objects handed out (live, as in Realm).
    private let collections = MigrationCollections()
    /// The classes read so far, in the order read.
    private var loadedOrder: [String] = []
    private var records: [String: [MigrationRecord]] = [:]
    private var recordsByKey: [String: [ObjectKey: MigrationRecord]] = [:]
    /// Classes no longer in the models whose data `deleteData(forType:)` removes.
    private var droppedClasses: [SchemaCatalog.StoredClass] = []

    var oldSchema: Schema { Schema(oldCatalog.classes.map(\.objectSchema)) }
    var newSchema: Schema { Schema(models.values.map(\.objectSchema).sorted { $0.className < $1.className }) }

    /// Migrates the file to the configured models, or throws and leaves it as it was.
    static func migrate(_ configuration: Realm.Configuration, file: FileState, classes: [ClassInfo]) throws {
        let core = try RealmCore(configuration: configuration, file: file)
        core.beginWrite()
        guard let txn = core.writeTransaction else { return }
        do {
            let old = try FileState.readCatalog(txn, meta: file.meta, path: file.environment.path)
            Logger.log(.info, Category.Storage.all, "Migrating '\(file.environment.path)' from schema version "
                + "\(old.schemaVersion) to \(configuration.schemaVersion)")
            let migrator = try Migrator(core: core, txn: txn, oldCatalog: old, classes: classes,
                                        schemaVersion: configuration.schemaVersion)
            for info in classes {
                // A class whose indexes change is written again too: its new table (opened
                // with the model's indexes) gets every entry of an index it adds.
                if let stored = old.storedClass(named: info.className),
                   SchemaCatalog.needsRewrite(stored: stored, model: info)
                {
                    migrator.load(info.className)
                }
            }
            configuration.migrationBlock?(Migration(migrator: migrator), old.schemaVersion)
            try migrator.write()
            try core.commitWrite()
        } catch {
            if core.writeTransaction != nil { core.cancelWrite() }
            throw error
        }
    }

    private init(core: RealmCore, txn: Transaction, oldCatalog: SchemaCatalog, classes: [ClassInfo],
                 schemaVersion: UInt64) throws
    {
        self.core = core
        self.txn = txn
        self.oldCatalog = oldCatalog
        models = Dictionary(classes.map { ($0.className, $0) }, uniquingKeysWith: { first, _ in first })
        var catalog = oldCatalog
        for info in classes {
            if let index = catalog.classes.firstIndex(where: { $0.name == info.className }) {
                catalog.classes[index].embedded = info.isEmbedded
                catalog.classes[index].properties = SchemaCatalog.storedProperties(of: info)
                catalog.classes[index].computed = SchemaCatalog.storedComputedProperties(of: info)
                catalog.classes[index].swiftType = SchemaCatalog.swiftTypeName(of: info)
            } else {
                _ = catalog.add(info)
            }
        }
        catalog.schemaVersion = schemaVersion
        catalog.noteDeleteRules()
        newCatalog = catalog
        for info in classes {
            guard let tableId = catalog.storedClass(named: info.className)?.tableId,
                  let table = try Table.open(info, tableId: tableId, in: txn, create: true,
                                             columnShift: catalog.keptColumnShift)
            else { continue }
            tables[info.className] = table
        }
    }

    // MARK: - Reading the old objects

    /// Reads every object of `className` by the stored schema (once).
    func load(_ className: String) {
        guard records[className] == nil else { return }
        records[className] = []
        recordsByKey[className] = [:]
        loadedOrder.append(className)
        guard let stored = oldCatalog.storedClass(named: className),
              let rows = try? txn.database(named: Table.rowsName(className), create: false),
              let cursor = txn.existingCursor(rows)
        else { return }
        let properties = stored.properties.map(\.property)
        var loaded = [MigrationRecord]()
        var entry = cursor.first()
        while let (rawKey, rawRow) = entry {
            let key = Cursor.integerKey(rawKey)
            let row = RowView(bytes: rawRow)
            var old = [String: MigrationValue]()
            for (column, property) in properties.enumerated() {
                old[property.name] = MigrationStorage.value(of: property, column: column, row: row, table: stored.tableId,
                                                            key: key, txn: txn, collections: core.file.collections)
            }
            loaded.append(MigrationRecord(className: className, key: key, old: old,
                                          new: initialValues(className, old: old, stored: properties)))
            entry = cursor.next()
        }
        records[className] = loaded
        recordsByKey[className] = Dictionary(loaded.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The values a migrated object starts with: unchanged properties keep their value, new or
    /// retyped ones get the model's default.
    private func initialValues(_ className: String, old: [String: MigrationValue], stored: [Property])
        -> [String: MigrationValue]
    {
        guard let info = models[className] else { return [:] }
        var values = defaults(of: info)
        for field in info.storedFields {
            let property = field.property
            // Old values are by the file's names, new ones by the Swift names.
            guard let previous = stored.first(where: { $0.name == property.columnName }),
                  previous.type == property.type, previous.collection == property.collection,
                  previous.objectClassName == property.objectClassName,
                  let value = old[property.columnName]
            else { continue }
            if case .null = value, !property.isOptional, property.type != .object { continue }
            values[property.name] = value
        }
        return values
    }

    private var defaultsCache: [String: [String: MigrationValue]] = [:]

    /// The values of a new unmanaged object of the class (its declared defaults).
    private func defaults(of info: ClassInfo) -> [String: MigrationValue] {
        if let cached = defaultsCache[info.className] { return cached }
        let prototype = info.objectType.init()
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(prototype).toOpaque())
        var values = [String: MigrationValue]()
        for field in info.storedFields {
            let property = field.property
            switch property.collection {
            case .list: values[property.name] = .list([])
            case .set: values[property.name] = .set([])
            case .map: values[property.name] = .map([])
            case .none:
                let value = property.type == .object ? nil : field.witness.unmanagedValue(at: base + field.offset)
                values[property.name] = MigrationConversion.value(value, for: property, link: { _ in nil }) ?? .null
            }
        }
        withExtendedLifetime(prototype) {}
        defaultsCache[info.className] = values
        return values
    }

    // MARK: - What the block does

    /// The ``MigrationObject`` (a ``DynamicObject``) a migration block sees for `record`.
    private func object(_ record: MigrationRecord, isOld: Bool) -> MigrationObject {
        if let held = isOld ? record.oldObject : record.newObject { return held }
        let object = DynamicObject()
        object.migrationEntry = MigrationEntry(record: record, isOld: isOld, migrator: self)
        if isOld { record.oldObject = object } else { record.newObject = object }
        return object
    }

    func enumerate(_ className: String, _ block: (MigrationObject?, MigrationObject?) -> Void) {
        let inOld = oldCatalog.storedClass(named: className) != nil
        let inNew = models[className] != nil
        if !inOld, !inNew { throwRealmException("Cannot enumerate objects of type '\(className)': no such class.") }
        guard inOld else { return }
        load(className)
        for record in records[className] ?? [] where !record.isDeleted {
            block(object(record, isOld: true), inNew ? object(record, isOld: false) : nil)
        }
    }

    func create(_ className: String, value: Any) -> MigrationObject {
        guard let info = models[className], let table = tables[className] else {
            throwRealmException("Cannot create an object of type '\(className)': it is not in the new schema.")
        }
        load(className)
        let record = MigrationRecord(className: className, key: core.allocateKey(in: table), old: [:],
                                     new: defaults(of: info))
        records[className, default: []].append(record)
        recordsByKey[className, default: [:]][record.key] = record
        let created = object(record, isOld: false)
        guard let entry = created.migrationEntry else { return created }
        if let values = value as? [String: Any] {
            for (name, value) in values { write(name, of: entry, value: value) }
        } else if let values = value as? [Any] {
            for (field, value) in zip(info.storedFields, values) { write(field.name, of: entry, value: value) }
        }
        return created
    }

    func delete(_ object: MigrationObject) {
        guard let entry = object.migrationEntry else {
            throwRealmException("Can only delete an object handed to the migration block or created by it.")
        }
        entry.record.isDeleted = true
    }

    func deleteData(forType className: String) -> Bool {
        guard let stored = oldCatalog.storedClass(named: className) else { return false }
        if models[className] != nil {
            load(className)
            for record in records[className] ?? [] { record.isDeleted = true }
        } else if !droppedClasses.contains(where: { $0.name == className }) {
            droppedClasses.append(stored)
            newCatalog.classes.removeAll { $0.name == className }
        }
        return true
    }

    func renameProperty(onType className: String, from oldName: String, to newName: String) {
        guard let stored = oldCatalog.storedClass(named: className),
              let oldProperty = stored.properties.first(where: { $0.name == oldName })?.property
        else {
            throwRealmException("Cannot rename property '\(className).\(oldName)' because it does not exist.")
        }
        guard let model = models[className], let field = model.field(named: newName) ?? model.field(columnName: newName),
              field.isStored
        else {
            throwRealmException("Renamed property '\(className).\(newName)' does not exist.")
        }
        let newProperty = field.property
        guard oldProperty.type == newProperty.type, oldProperty.collection == newProperty.collection else {
            throwRealmException("Cannot rename property '\(className).\(oldName)' to '\(newName)' because it would "
                + "change from type '\(oldProperty.typeDescription)' to '\(newProperty.typeDescription)'.")
        }
        load(className)
        for record in records[className] ?? [] {
            record.new[field.name] = record.old[oldName] ?? .null
        }
    }

    // MARK: - Values for MigrationObject

    func read(_ key: String, of object: MigrationEntry) -> Any? {
        let record = object.record
        let values = object.isOld ? record.old : record.new
        // A new object is read by Swift names; its persisted names are accepted too.
        let name = object.isOld || values[key] != nil ? key
            : models[record.className]?.field(columnName: key).map(\.name) ?? key
        guard let value = values[name] else {
            throwRealmException("Invalid property name '\(name)' for class '\(record.className)'.")
        }
        let property = object.isOld
            ? oldCatalog.storedClass(named: record.className)?.properties.first { $0.name == name }?.property
            : models[record.className]?.field(named: name)?.property
        if let property, property.collection != .none {
            // Realm's List<DynamicObject>, List<Int>, MutableSet<…>, Map<String, …>.
            if !object.isOld, let handedOut = collections.handedOut(record, name) { return handedOut }
            if let made = MigrationCollections.make(property, collectionElements(value, property, isOld: object.isOld)) {
                if !object.isOld { collections.keep(made, record, name, property) }
                return made
            }
        }
        return swiftValue(value, target: property?.objectClassName, isOld: object.isOld)
    }

    private func swiftValue(_ value: MigrationValue, target: String?, isOld: Bool) -> Any? {
        switch value {
        case .null: return nil
        case .scalar(.link(let key)):
            guard let target else { return nil }
            load(target)
            return recordsByKey[target]?[key].map { object($0, isOld: isOld) }
        case .scalar(.mixed(.link(let tableId, let key))):
            // An AnyRealmValue holding a link reads as the migration's object, as in Realm.
            let catalog = isOld ? oldCatalog : newCatalog
            guard let target = catalog.classes.first(where: { $0.tableId == tableId })?.name else { return nil }
            load(target)
            return recordsByKey[target]?[key].map { object($0, isOld: isOld) }
        case .scalar(let payload): return MigrationConversion.swiftValue(payload)
        case .list(let elements), .set(let elements):
            return elements.map { swiftValue($0, target: target, isOld: isOld) as Any }
        case .map(let entries):
            return Dictionary(entries.map { ($0.key, swiftValue($0.value, target: target, isOld: isOld) as Any) },
                              uniquingKeysWith: { _, last in last })
        }
    }

    func write(_ name: String, of object: MigrationEntry, value: Any?) {
        if object.isOld {
            throwRealmException("Cannot modify an old object during a migration: set '\(name)' on the new object.")
        }
        let record = object.record
        guard let model = models[record.className],
              let field = model.field(named: name) ?? model.field(columnName: name), field.isStored
        else {
            throwRealmException("Invalid property name '\(name)' for class '\(record.className)'.")
        }
        let property = field.property
        record.new[field.name] = converted(value, for: property, of: record, name)
        if let handedOut = collections.handedOut(record, field.name), handedOut !== value as AnyObject {
            // The collection read before shows the new elements, as a live one does.
            MigrationCollections.refill(handedOut, property, with: collectionElements(record.new[field.name], property,
                                                                                     isOld: false))
        }
    }

    /// The stored form of `value` for a property of a new object; traps when it has the wrong type.
    private func converted(_ value: Any?, for property: Property, of record: MigrationRecord, _ name: String)
        -> MigrationValue
    {
        let converted = MigrationConversion.value(value, for: property) { linked in
            // Only the migration's new objects (given or created) can be linked to.
            guard !linked.isOld, let tableId = newCatalog.storedClass(named: linked.record.className)?.tableId else {
                return nil
            }
            return MigrationLink(className: linked.record.className, tableId: tableId, key: linked.record.key)
        }
        guard let converted else {
            throwRealmException("Invalid value '\(value.map { "\($0)" } ?? "nil")' for property "
                + "'\(record.className).\(name)' of type '\(property.typeDescription)'.")
        }
        return converted
    }

    /// The elements of a list, set or map value as Swift values (links as migration objects),
    /// with a map's keys.
    private func collectionElements(_ value: MigrationValue?, _ property: Property, isOld: Bool)
        -> [(key: String, value: Any?)]
    {
        let target = property.objectClassName
        switch value {
        case .list(let elements)?, .set(let elements)?:
            return elements.map { (key: "", value: swiftValue($0, target: target, isOld: isOld)) }
        case .map(let entries)?:
            return entries.map { (key: $0.key, value: swiftValue($0.value, target: target, isOld: isOld)) }
        default:
            return []
        }
    }

    /// Stores the elements of every collection the new objects handed out in their records.
    private func storeHandedOutCollections() {
        collections.forEachKept { record, name, property, collection in
            record.new[name] = converted(collection, for: property, of: record, name)
        }
    }

    // MARK: - Writing the new objects

    func write() throws {
        storeHandedOutCollections()
        try prepareStorage()
        core.adoptMigratedTables(Array(tables.values), catalog: newCatalog)
        if let error = writeObjects() { throw error }
        deleteObjects()
    }

    // The steps of write() are kept out of line: with them inlined, Swift 6.3.1's optimizer
    // emits invalid IR for write() in a release build ("swifterror value can only be loaded
    // and stored from").

    /// Writes the new catalog and clears the storage of every class being rewritten or dropped.
    @inline(never)
    private func prepareStorage() throws {
        try FileState.writeCatalog(newCatalog, txn: txn, meta: core.file.meta)
        for className in loadedOrder {
            if let stored = oldCatalog.storedClass(named: className) { try clear(stored, dropDatabases: false) }
        }
        for stored in droppedClasses { try clear(stored, dropDatabases: true) }
    }

    /// Writes every loaded object again; the first error (a duplicate primary key) ends it.
    @inline(never)
    private func writeObjects() -> Realm.Error? {
        for className in loadedOrder {
            guard let table = tables[className] else { continue }
            for record in (records[className] ?? []).sorted(by: { $0.key < $1.key }) {
                if let error = writeObject(record, table) { return error }
            }
        }
        return nil
    }

    /// Deletes the objects the block deleted, through the normal delete.
    @inline(never)
    private func deleteObjects() {
        for className in loadedOrder {
            guard let table = tables[className] else { continue }
            for record in records[className] ?? [] where record.isDeleted && core.rowView(table, record.key) != nil {
                core.deleteObject(table, key: record.key)
            }
        }
    }

    private func writeObject(_ record: MigrationRecord, _ table: Table) -> Realm.Error? {
        let fields = table.info.storedFields
        let values: [_StoredValue.Payload] = fields.map { field in
            guard field.typeInfo.collection == .none, case .scalar(let payload)? = record.new[field.name] else {
                return field.typeInfo.collection == .none ? .null : .none
            }
            return payload
        }
        if let primaryKey = table.info.primaryKeyField,
           !core.insertPrimaryKey(table, values[primaryKey.rowColumn], key: record.key)
        {
            return Realm.Error(.primaryKeyExists, "Primary key property '\(table.info.className).\(primaryKey.name)' "
                + "has duplicate values after migration ('\(PrimaryKeyEncoding.describe(values[primaryKey.rowColumn]))'). "
                + "Give every object a distinct value in the migration block.", fileURL: core.environmentPath)
        }
        core.writeRow(table, key: record.key, values: values, isNew: true)
        for field in fields where field.typeInfo.collection != .none {
            let location = CollectionLocation(table: table, key: record.key, field: field)
            switch record.new[field.name] {
            case .list(let elements)?:
                if !elements.isEmpty { core.listSplice(location, 0..<0, with: elements.map(Self.elementBytes)) }
            case .set(let elements)?:
                for element in elements { core.setInsert(location, Self.elementBytes(element)) }
            case .map(let entries)?:
                for entry in entries { core.mapSet(location, entry.key, Self.elementBytes(entry.value)) }
            default:
                break
            }
        }
        return nil
    }

    private static func elementBytes(_ value: MigrationValue) -> [UInt8] {
        if case .scalar(let payload) = value { return RowWriter.encode(single: payload) }
        return RowWriter.encode(single: .null)
    }

    /// Removes a class's rows, indexes, owned collections and outgoing backlinks (and, for a
    /// dropped class, its incoming backlinks too). Its databases stay, empty: a database is
    /// never deleted while the process may hold its handle (see ``DatabaseHandles``).
    private func clear(_ stored: SchemaCatalog.StoredClass, dropDatabases: Bool) throws {
        // Rows recorded for the column copies earlier in this transaction go to the copies
        // first, and are then emptied with them.
        try core.columnLog.flush(in: txn)
        var names = [Table.rowsName(stored.name), Table.primaryKeysName(stored.name), ColumnStorage.name(stored.name),
                     ColumnDelta.name(stored.name)]
        names += stored.properties.map { SecondaryIndex.name(stored.name, $0.name) }
        if let info = models[stored.name] {
            names += info.storedFields.map { SecondaryIndex.name(stored.name, $0.columnName) }
        }
        for name in Set(names) {
            let isRows = [Table.rowsName(stored.name), ColumnStorage.name(stored.name), ColumnDelta.name(stored.name)]
                .contains(name)
            if let database = try txn.database(named: name, create: false, integerKeys: isRows) {
                try txn.empty(database)
            }
        }
        core.columnLog.forgetDeltaStates()
        var owned = [UInt8]()
        BigEndian.append(stored.tableId, to: &owned)
        try deleteEntries(of: core.file.collections) { $0.starts(with: owned) }
        try deleteEntries(of: core.file.backlinks) { key in
            guard let backlink = BacklinkKey(key) else { return false }
            return backlink.originTable == stored.tableId || (dropDatabases && backlink.targetTable == stored.tableId)
        }
        // The counts of the links just deleted: changes recorded earlier in this transaction go
        // to the blocks first, then the blocks of those links go with them.
        try core.flushBacklinkCounts(txn)
        if let counts = core.file.backlinkCounts {
            try deleteEntries(of: counts) { key in
                guard let block = BacklinkCountBlockKey(key) else { return false }
                return block.originTable == stored.tableId || (dropDatabases && block.targetTable == stored.tableId)
            }
        }
    }

    private func deleteEntries(of database: DatabaseHandle, where matches: (UnsafeRawBufferPointer) -> Bool) throws {
        let cursor = try txn.cursor(database)
        var doomed = [[UInt8]]()
        var entry = cursor.first()
        while let (key, _) = entry {
            if matches(key) { doomed.append(Array(key)) }
            entry = cursor.next()
        }
        for key in doomed { try key.withUnsafeBytes { _ = try txn.delete(database, key: $0) } }
    }
}

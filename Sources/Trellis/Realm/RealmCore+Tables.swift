import Foundation

// MARK: - Tables

/// Finding the table of a class: the current write's own, the file's, or bound on first use
/// (a class first met after the Realm opened), with the checks that binding makes.
extension RealmCore {
    /// Whether a table the current write transaction created holds a top-level object.
    var pendingTablesHoldObjects: Bool {
        guard let writeTransaction else { return false }
        return pendingTables.values.contains { !$0.info.isEmbedded && writeTransaction.entryCount($0.rows) > 0 }
    }

    /// The table of `type` in this Realm: bound, created in the current write if `create`, or
    /// nil when the class has no table yet.
    ///
    /// `verifiesConfigured` (the public typed API: `objects(_:)`, `object(ofType:forPrimaryKey:)`):
    /// a table looked up afresh must be of a class the configuration's `objectTypes` list, as
    /// in Realm, even when another Realm of the file bound it (``verifyConfigured(_:)``).
    func table(for type: ObjectBase.Type, create: Bool, verifiesConfigured: Bool = false) -> Table? {
        let id = ObjectIdentifier(type)
        // Link hops and backlink counts look the same one or two classes up on every read, and
        // adding objects their classes on every object.
        if let cached = cachedTables.0, cached.type == id, cached.isValid(changeStamp) { return cached.table }
        if let cached = cachedTables.1, cached.type == id, cached.isValid(changeStamp) { return cached.table }
        let found = pendingTables[id] ?? file.table(for: type).map { keepingStoredIndexes($0, id) }
        if let found {
            if verifiesConfigured { verifyConfigured(type) }
            // Not for a frozen core, which other threads read at the same time. In a write, whose
            // every change moves the stamp, for the rest of the write: a class's table changes
            // only when a write ends or a migration adopts new tables, which both clear this.
            if !isFrozen {
                let stamp = writeTransaction == nil ? changeStamp : CachedTable.wholeWrite
                cachedTables = (CachedTable(type: id, table: found, stamp: stamp), cachedTables.0)
            }
            return found
        }
        return bindTable(for: type, create: create)
    }

    /// Where the links behind a LinkingObjects value are: the origin class's table and the
    /// origin property's column; nil when the origin class has no table yet (nothing links).
    /// Remembered for the last field asked about while the change stamp holds (as tables are),
    /// so that counting each object's backlinks looks neither the table nor the property up.
    func backlinkOrigin(_ field: FieldInfo?, originType: ObjectBase.Type, originProperty: String)
        -> (table: Table, column: Int)?
    {
        if let field, let cached = cachedBacklinkOrigin, cached.field == ObjectIdentifier(field),
           cached.type == ObjectIdentifier(originType), cached.stamp == changeStamp
        {
            return (cached.table, cached.column)
        }
        guard let origin = table(for: originType, create: false) else { return nil }
        guard let originField = origin.info.field(named: originProperty), originField.isLink else {
            throwRealmException("Property '\(origin.info.className).\(originProperty)' declared as origin of linking "
                + "objects does not exist or is not a link")
        }
        if let field, writeTransaction == nil, !isFrozen {
            cachedBacklinkOrigin = CachedBacklinkOrigin(field: ObjectIdentifier(field), type: ObjectIdentifier(originType),
                                                        stamp: changeStamp, table: origin, column: originField.rowColumn)
        }
        return (origin, originField.rowColumn)
    }

    /// An answer of ``backlinkOrigin(_:originType:originProperty:)``, valid while the change
    /// stamp is the same (see ``CachedTable``).
    struct CachedBacklinkOrigin {
        let field: ObjectIdentifier
        let type: ObjectIdentifier
        let stamp: UInt64
        let table: Table
        let column: Int
    }

    /// A table found by ``table(for:create:)``, valid while the change stamp is the same: tables
    /// change only with writes, migrations and new snapshots, which all move the stamp.
    struct CachedTable {
        let type: ObjectIdentifier
        let table: Table
        /// The change stamp it was found under, or ``wholeWrite``.
        let stamp: UInt64

        /// Valid until the write transaction it was found in ends (the entries are cleared then).
        static let wholeWrite = UInt64.max

        func isValid(_ changeStamp: UInt64) -> Bool { stamp == changeStamp || stamp == Self.wholeWrite }
    }

    /// Traps with Realm's message when the configuration's `objectTypes` leave `type` out, or,
    /// without `objectTypes`, when `type` is left out of the default schema
    /// (``ObjectBase/shouldIncludeInDefaultSchema()``) (bindTable's check, for a table another
    /// Realm of the file bound). Internal walks of the
    /// file's tables (links, the consistency check) do not check.
    func verifyConfigured(_ type: ObjectBase.Type) {
        guard storedSchema == nil else { return }
        if let types = configuration.objectTypes {
            if !types.contains(where: { $0 == type }) { notManagedByTheRealm(type.className()) }
        } else if !type.shouldIncludeInDefaultSchema(), type != DynamicObject.self {
            // Left out of the default schema (a Realm without objectTypes), as in Realm
            // (DynamicObject gets bindTable's own message).
            notManagedByTheRealm(type.className())
        }
    }

    private func bindTable(for type: ObjectBase.Type, create: Bool) -> Table? {
        if type == DynamicObject.self {
            throwRealmException("Object type '\(type.className())' is not managed by the Realm: read and write "
                + "DynamicObjects with dynamicObjects(_:) and dynamicCreate(_:value:update:).")
        }
        verifyConfigured(type)
        let info = ClassInfo.unbound(for: type)
        var catalog = pendingCatalog ?? file.catalog
        if pendingCatalog == nil, catalog.storedClass(named: info.className) == nil {
            // Another process may have added the class since this process read the catalog.
            catalog = file.catalog(readingNewerFrom: transaction)
        }
        do {
            if let stored = catalog.storedClass(named: info.className) {
                var differences = SchemaCatalog.differences(stored: stored, model: info)
                if differences.isEmpty, SchemaCatalog.isReordered(stored: stored, model: info) {
                    // Reordering is handled when the file opens (SchemaBinder), where the class
                    // is known; a class first met here cannot have its rows rewritten.
                    differences.append("Properties of '\(info.className)' are declared in another order than "
                        + "stored: open the Realm with objectTypes including '\(info.className)' (writable) once "
                        + "to store them in the new order.")
                }
                let indexChanges = SchemaCatalog.indexChanges(stored: stored, model: info)
                if differences.isEmpty, !indexChanges.isEmpty {
                    // Indexes are built or dropped when the file opens (SchemaBinder); a class
                    // first met here would otherwise keep an index the file lacks.
                    differences += indexChanges
                    differences.append("The indexes of '\(info.className)' differ from the file's: open the Realm "
                        + "with objectTypes including '\(info.className)' (writable) once to add or remove them.")
                }
                if !differences.isEmpty {
                    throwRealmException(SchemaBinder.mismatchMessage(differences, path: environmentPath))
                }
                // Every stored database already has a handle (see DatabaseHandles): binding
                // only looks them up, and a table without databases yet has no objects.
                guard let table = try Table.open(info, tableId: stored.tableId, in: transaction, create: false,
                                                 columnShift: catalog.keptColumnShift) else {
                    return nil
                }
                // Handles this write opened are private to it until it commits.
                let opensOwnDatabases = writeTransaction?.hasOpened(anyOf: table.databases) ?? false
                if pendingCatalog == nil, !opensOwnDatabases { file.publish([table], catalog: file.catalog) }
                else { pendingTables[ObjectIdentifier(type)] = table }
                return table
            }
            guard create, let writeTransaction else { return nil }
            let problems = SchemaBinder.problems(registering: info)
            if !problems.isEmpty {
                throwRealmException(SchemaValidator.error(for: problems).message)
            }
            let tableId = catalog.add(info)
            guard let table = try Table.open(info, tableId: tableId, in: writeTransaction, create: true,
                                             columnShift: catalog.keptColumnShift) else { return nil }
            try FileState.writeCatalog(catalog, txn: writeTransaction, meta: file.meta)
            pendingCatalog = catalog
            pendingTables[ObjectIdentifier(type)] = table
            return table
        } catch {
            throwRealmException("Could not open the table of '\(info.className)' in '\(environmentPath)': \(error)")
        }
    }

    func table(id: UInt32) -> Table? {
        if let pending = pendingTables.values.first(where: { $0.tableId == id }) { return pending }
        if let found = file.table(id: id) { return keepingStoredIndexes(found, ObjectIdentifier(found.info.objectType)) }
        return storedSchema?.table(id: id) ?? dynamicClasses?.table(id: id)
    }
}

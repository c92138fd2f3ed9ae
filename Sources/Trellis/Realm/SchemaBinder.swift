/// Checks the configured models against the rules and the file, and creates missing tables,
/// when a Realm is opened.
enum SchemaBinder {
    /// The classes to check when `type` is registered lazily: it and every class it links to.
    static func closure(of types: [ObjectBase.Type]) -> [ClassInfo] {
        var seen = Set<ObjectIdentifier>()
        var result = [ClassInfo]()
        var queue = types
        while let type = queue.popLast() {
            guard seen.insert(ObjectIdentifier(type)).inserted else { continue }
            let info = ClassInfo.unbound(for: type)
            result.append(info)
            queue.append(contentsOf: info.fields.compactMap { $0.typeInfo.objectType })
        }
        return result
    }

    static func problems(registering info: ClassInfo) -> [String] {
        SchemaValidator.validate(closure(of: [info.objectType]), explicitList: false)
    }

    static func mismatchMessage(_ differences: [String], path: String) -> String {
        "Migration is required due to the following errors in '\(path)':\n"
            + differences.map { "- \($0)" }.joined(separator: "\n")
            + "\nIncrease Realm.Configuration.schemaVersion and migrate, or set deleteRealmIfMigrationNeeded to "
            + "true to start with an empty file."
    }

    /// Validates the configured classes, compares them with the file, creates missing tables.
    static func bind(_ configuration: Realm.Configuration, file: FileState) throws {
        let path = file.environment.path
        try ColumnUpgrade.upgradeIfNeeded(configuration, file: file)
        try CompactUpgrade.upgradeIfNeeded(configuration, file: file)
        if configuration.opensAnySchemaVersion { return }
        let classes: [ClassInfo]
        if let types = configuration.objectTypes {
            classes = types.map(ClassInfo.unbound(for:))
            let problems = SchemaValidator.validate(classes, explicitList: true)
            if !problems.isEmpty { throw SchemaValidator.error(for: problems) }
        } else {
            classes = defaultSchema(file.catalog)
            let problems = SchemaValidator.validate(classes, explicitList: false)
            if !problems.isEmpty { throw SchemaValidator.error(for: problems) }
        }
        let catalog = file.catalog
        var differences = [String]()
        for info in classes {
            if let stored = catalog.storedClass(named: info.className) {
                differences += SchemaCatalog.differences(stored: stored, model: info)
            }
        }
        // A file that already holds classes, opened with a higher version: migrate (a new file
        // only records the version).
        let versionRaised = configuration.schemaVersion > catalog.schemaVersion && !catalog.classes.isEmpty
        let wantsMigration = versionRaised && !configuration.readOnly
            && (!differences.isEmpty || configuration.migrationBlock != nil)
        if wantsMigration, !(configuration.deleteRealmIfMigrationNeeded && !differences.isEmpty) {
            try Migrator.migrate(configuration, file: file, classes: classes)
            return try bind(configuration, file: file)
        }
        if !differences.isEmpty {
            throw Realm.Error(.schemaMismatch, mismatchMessage(differences, path: path), fileURL: path)
        }
        try checkVersion(configuration, catalog, path: path)
        let reordered = catalog.reorderedClasses(classes)
        if !reordered.isEmpty, configuration.readOnly {
            let names = reordered.map { "'\($0)'" }.joined(separator: ", ")
            throw Realm.Error(.schemaMismatch, "The properties of \(names) are declared in another order than they "
                + "are stored in '\(path)', and a read-only Realm cannot store them in the new order. Open the file "
                + "writable once (Trellis then rewrites those classes in the declared order, without a migration), "
                + "or declare the properties in the stored order.", fileURL: path)
        }
        // A read-only Realm binds the indexes the file has (openTables): its queries stay right.
        let rewritten = configuration.readOnly ? [] : catalog.rewrittenClasses(classes)
        if !rewritten.isEmpty {
            try rewriteWithoutMigration(rewritten, configuration, file: file, classes: classes)
            return try bind(configuration, file: file)
        }
        try openTables(classes, configuration: configuration, file: file)
    }

    /// Properties are matched by name, and indexes are added and dropped when the file opens, as
    /// in Realm: a class whose properties are declared in another order than stored, or whose
    /// indexes changed, has its objects written again in the declared order with the declared
    /// indexes, in one write transaction, with no migration block and the schema version as
    /// configured.
    private static func rewriteWithoutMigration(_ rewritten: [String], _ configuration: Realm.Configuration,
                                                file: FileState, classes: [ClassInfo]) throws
    {
        let path = file.environment.path
        let names = rewritten.map { "'\($0)'" }.joined(separator: ", ")
        Logger.log(.info, Category.Storage.all, "Storing \(names) in their declared order and with their declared "
            + "indexes in '\(path)'")
        var rewrite = configuration
        rewrite.migrationBlock = nil
        try Migrator.migrate(rewrite, file: file, classes: classes)
    }

    /// The classes a Realm opened without `objectTypes` checks, migrates and binds when it
    /// opens: the model class of every class stored in the file that this program has (found by
    /// the Swift name the file records, see ``SchemaCatalog/modelClass(of:)``), with the classes
    /// they link to. Realm lists every model class of the program instead; Linux cannot list a
    /// program's classes, so other classes are registered when first used.
    static func defaultSchema(_ catalog: SchemaCatalog) -> [ClassInfo] {
        closure(of: catalog.classes.compactMap(SchemaCatalog.modelClass(of:)))
    }

    private static func checkVersion(_ configuration: Realm.Configuration, _ catalog: SchemaCatalog, path: String) throws {
        if configuration.schemaVersion < catalog.schemaVersion {
            throw Realm.Error(.schemaMismatch, "Provided schema version \(configuration.schemaVersion) is less than "
                + "last set version \(catalog.schemaVersion) of '\(path)'. Open it with schemaVersion "
                + "\(catalog.schemaVersion) or higher.", fileURL: path)
        }
    }

    private static func openTables(_ classes: [ClassInfo], configuration: Realm.Configuration, file: FileState) throws {
        var catalog = file.catalog
        let missing = classes.filter { catalog.storedClass(named: $0.className) == nil }
        let versionChanged = configuration.schemaVersion != catalog.schemaVersion
        // The classes' Swift names are recorded only along a write that happens anyway: opening
        // never waits for another process's writer just for them.
        let needsWrite = (!missing.isEmpty || versionChanged) && !configuration.readOnly
        do {
            let txn = needsWrite ? try file.environment.beginWrite() : try file.environment.beginRead()
            if needsWrite {
                // Another process may have added classes since the catalog was read: start from
                // the catalog as it is now, under the write lock.
                catalog = try FileState.readCatalog(txn, meta: file.meta, path: file.environment.path)
                let differences = classes.flatMap { info in
                    catalog.storedClass(named: info.className).map { SchemaCatalog.differences(stored: $0, model: info) } ?? []
                }
                if !differences.isEmpty {
                    txn.abort()
                    throw Realm.Error(.schemaMismatch, mismatchMessage(differences, path: file.environment.path),
                                      fileURL: file.environment.path)
                }
            }
            var tables = [Table]()
            var addedTable: UInt32?
            for info in classes {
                let stored = catalog.storedClass(named: info.className)?.tableId
                let tableId = stored ?? (needsWrite ? catalog.add(info) : 0)
                if stored == nil, tableId != 0 { addedTable = tableId }
                if tableId == 0 { continue }
                // A stored class is bound with the indexes the file has: the model's, but for a
                // read-only Realm whose model adds or removes one (its queries then scan, or use
                // the file's index, and it writes nothing).
                let indexed = catalog.storedClass(named: info.className).map(SchemaCatalog.indexedColumns(of:))
                if let table = try Table.open(info, tableId: tableId, in: txn, create: needsWrite,
                                                 columnShift: catalog.keptColumnShift, indexedColumns: indexed) {
                    tables.append(table)
                }
            }
            let version = txn.version
            if needsWrite {
                catalog.schemaVersion = configuration.schemaVersion
                _ = catalog.recordSwiftTypes(of: classes)
                try FileState.writeCatalog(catalog, txn: txn, meta: file.meta)
                // Adding classes changes no object: say so to observers across this version.
                if let addedTable { try file.persistNoObjectChangesRecord(txn, addedTable: addedTable) }
                try txn.commit()
            } else {
                txn.abort()
            }
            file.publish(tables, catalog: catalog, version: needsWrite ? version : nil)
        } catch let error as StorageError {
            throw RealmErrors.opening(file.environment.path, error)
        }
    }
}

/// Brings a file of format 2 (rows only) to the current format (format 6's compact rows and
/// primary-key entries, and their column copies).
///
/// Runs when a writable Realm opens the file, in one write transaction: every class's column
/// copy is built from its rows and the catalog records the current format, or, if anything fails, nothing
/// changes. A read-only open leaves the file as it is and answers queries from the rows.
enum ColumnUpgrade {
    static func upgradeIfNeeded(_ configuration: Realm.Configuration, file: FileState) throws {
        try FileUpgrade.run(configuration, file: file, readOnlyHint: " (queries then read the rows)",
                            needsUpgrade: { $0.format < 3 }) { catalog, txn in
            // Rows and primary-key entries get format 6's layout first, in this same transaction.
            try CompactUpgrade.compact(catalog, in: txn)
            let shift = configuration.columnChunkShift
            for stored in catalog.classes {
                guard let rows = Table.existingRows(of: stored.name, in: txn),
                      let database = try txn.database(named: ColumnStorage.name(stored.name), create: true,
                                                      integerKeys: true)
                else { continue }
                try txn.empty(database)
                let delta = try txn.database(named: ColumnDelta.name(stored.name), create: true, integerKeys: true)
                let storage = ColumnStorage(database: database, delta: delta, rows: rows, shift: shift,
                                            kinds: ColumnKind.of(stored))
                try storage.buildFromRows(in: txn)
            }
            catalog.format = SchemaCatalog.formatVersion
            catalog.columnShift = shift
            return "column copies of \(catalog.classes.count) classes"
        }
    }
}

/// Brings a file of format 2 (rows only) to format 3 (rows and their column copies).
///
/// Runs when a writable Realm opens the file, in one write transaction: every class's column
/// copy is built from its rows and the catalog records format 3, or, if anything fails, nothing
/// changes. A read-only open leaves the file as it is and answers queries from the rows.
enum ColumnUpgrade {
    static func upgradeIfNeeded(_ configuration: Realm.Configuration, file: FileState) throws {
        guard !configuration.readOnly, file.catalog.format < 3 else { return }
        let path = file.environment.path
        do {
            let txn = try file.environment.beginWrite()
            var catalog: SchemaCatalog
            do {
                // Under the write lock: another process may have upgraded the file meanwhile.
                catalog = try FileState.readCatalog(txn, meta: file.meta, path: path)
                guard catalog.format < 3 else {
                    // The catalog of the last commit: the write's own version is not committed.
                    let committed = txn.version - 1
                    txn.abort()
                    file.publish([], catalog: catalog, version: committed)
                    return
                }
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
                try FileState.writeCatalog(catalog, txn: txn, meta: file.meta)
                let version = txn.version
                try txn.commitUnlessFailed()
                Logger.log(.info, Category.Storage.all, "Upgraded '\(path)' to file format \(catalog.format) "
                    + "(column copies of \(catalog.classes.count) classes)")
                file.publish([], catalog: catalog, version: version)
            } catch {
                txn.abort()
                throw error
            }
        } catch let error as StorageError {
            throw Realm.Error(.fileFormatUpgradeRequired, "Trellis could not upgrade '\(path)' to file format "
                + "\(SchemaCatalog.formatVersion): \(error). The file is unchanged; free disk space or open it "
                + "read-only (queries then read the rows).", fileURL: path)
        }
    }
}

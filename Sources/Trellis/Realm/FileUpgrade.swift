/// The transaction every file-format upgrade on open runs in (``ColumnUpgrade``,
/// ``CompactUpgrade``): all of an upgrade is committed, or nothing changes.
///
/// A writable open whose catalog needs the upgrade begins a write; under the write lock it reads
/// the catalog again (another process may have upgraded the file meanwhile, and then nothing is
/// written), lets the upgrade rewrite what it must and set the catalog's new format, writes that
/// catalog, commits, logs, and publishes the catalog to the file's Realms. A read-only open
/// leaves the file as it is.
enum FileUpgrade {
    /// Upgrades `file` when `configuration` is writable and `needsUpgrade` holds for its catalog.
    ///
    /// - Parameters:
    ///   - needsUpgrade: whether a catalog's file still needs this upgrade.
    ///   - readOnlyHint: what a read-only open of the file does meanwhile, added to the error's advice.
    ///   - upgrade: rewrites the file in the transaction and updates the catalog (its format at
    ///     least); returns what it wrote, for the log.
    /// - Throws: ``Realm/Error/Code/fileFormatUpgradeRequired`` when the storage fails (the file
    ///   is then unchanged), or what `upgrade` throws.
    static func run(_ configuration: Realm.Configuration, file: FileState, readOnlyHint: String = "",
                    needsUpgrade: (SchemaCatalog) -> Bool,
                    upgrade: (inout SchemaCatalog, Transaction) throws -> String) throws
    {
        guard !configuration.readOnly, needsUpgrade(file.catalog) else { return }
        let path = file.environment.path
        do {
            let txn = try file.environment.beginWrite()
            do {
                var catalog = try FileState.readCatalog(txn, meta: file.meta, path: path)
                guard needsUpgrade(catalog) else {
                    // The catalog of the last commit: the write's own version is not committed.
                    let committed = txn.version - 1
                    txn.abort()
                    file.publish([], catalog: catalog, version: committed)
                    return
                }
                let written = try upgrade(&catalog, txn)
                try FileState.writeCatalog(catalog, txn: txn, meta: file.meta)
                let version = txn.version
                try txn.commitUnlessFailed()
                Logger.log(.info, Category.Storage.all,
                           "Upgraded '\(path)' to file format \(catalog.format) (\(written))")
                file.publish([], catalog: catalog, version: version)
            } catch {
                txn.abort()
                throw error
            }
        } catch let error as StorageError {
            throw Realm.Error(.fileFormatUpgradeRequired, "Trellis could not upgrade '\(path)' to file format "
                + "\(SchemaCatalog.formatVersion): \(error). The file is unchanged; free disk space or open it "
                + "read-only\(readOnlyHint).", fileURL: path)
        }
    }
}

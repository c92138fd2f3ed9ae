import Foundation

/// What a core last checked its tables' indexes against: the catalog of one stored checksum.
///
/// Indexes are added and dropped when a file opens, without a migration (``SchemaBinder``). A
/// Realm bound before that (in another process, or in this one with another model class of
/// the same name) keeps tables with the old indexes: a writer would not maintain an index the
/// file now has, and a reader would use one the file dropped. So the first use of a table in a
/// snapshot whose catalog changed compares the table's indexes with the catalog's, and binds
/// the class again with the file's indexes when they differ (``RealmCore/keepingStoredIndexes(_:_:)``).
struct StoredIndexCheck {
    /// The version of the transaction the checksum was read in (-1: none yet).
    var version = -1
    var checksum: UInt64?
    /// The catalog of `checksum`, once needed.
    var catalog: SchemaCatalog?
    /// The classes (by model type) whose table keeps the catalog's indexes.
    var checked: Set<ObjectIdentifier> = []
    /// The classes bound again with the catalog's indexes.
    var rebound: [ObjectIdentifier: Table] = [:]
    /// Whether a write transaction bound a class again: its handles may end with the write.
    var reboundInWrite = false
    /// The version this core's own commit made when it changed no schema and `checksum` was read
    /// (or known) in its write: a snapshot there has the same catalog (-1: none).
    var ownCommit = -1

    /// After a write: what was bound in it is forgotten, and the next lookup reads the checksum
    /// again (a cancelled write's version is taken by the next commit, perhaps another catalog's).
    mutating func endWrite() {
        if reboundInWrite {
            self = StoredIndexCheck()
        } else {
            version = -1
        }
    }
}

extension RealmCore {
    /// `found`, this process's table of the model class `id`, when it keeps the indexes the file
    /// has as of this core's transaction; else the class bound again with the file's indexes.
    ///
    /// Costs a comparison of versions and a set lookup when the snapshot did not move, and one
    /// read of the catalog's checksum when it did; each class is compared with the catalog, and
    /// the catalog itself read, only when the checksum changed.
    func keepingStoredIndexes(_ found: Table, _ id: ObjectIdentifier) -> Table {
        // Frozen cores are read by many threads at once; a Realm with no transaction yet checks
        // when it has one (beginning it moves the change stamp, so nothing stays cached).
        guard !isFrozen, let txn = currentTransactionIfAny else { return found }
        if storedIndexCheck.version != txn.version {
            let base = txn.isReadOnly ? txn.version : txn.version - 1
            if base != storedIndexCheck.ownCommit {
                let checksum = file.storedCatalogChecksum(txn)
                if checksum != storedIndexCheck.checksum {
                    storedIndexCheck = StoredIndexCheck(checksum: checksum)
                }
            }
            storedIndexCheck.version = txn.version
        }
        if storedIndexCheck.checked.contains(id) { return found }
        if let rebound = storedIndexCheck.rebound[id] { return rebound }
        // A file of catalog format 1 has no checksum: it is read as opened.
        guard let checksum = storedIndexCheck.checksum, let catalog = storedIndexCatalog(txn, checksum: checksum),
              let stored = catalog.storedClass(named: found.info.className), stored.tableId == found.tableId
        else {
            storedIndexCheck.checked.insert(id)
            noteTableInUse(found, checkedAt: storedIndexCheck.checksum)
            return found
        }
        // The snapshot may have moved without a check (a lookup is the first use since).
        verifyStoredLayouts(txn)
        verifyLayout(of: found, stored: stored)
        let indexed = SchemaCatalog.indexedColumns(of: stored)
        if found.keepsIndexes(indexed) {
            storedIndexCheck.checked.insert(id)
            noteTableInUse(found, checkedAt: checksum)
            return found
        }
        guard let table = try? Table.open(found.info, tableId: found.tableId, in: txn, create: false,
                                          columnShift: catalog.keptColumnShift, indexedColumns: indexed)
        else { return found }
        Logger.log(.debug, Category.Storage.all, "Binding '\(found.info.className)' of '\(environmentPath)' with the "
            + "indexes another Realm gave it")
        file.keep(table)
        noteTableInUse(table, checkedAt: checksum)
        storedIndexCheck.rebound[id] = table
        if !txn.isReadOnly { storedIndexCheck.reboundInWrite = true }
        return table
    }

    /// The catalog of `storedIndexCheck`'s checksum, read once (``storedCatalog(_:checksum:)``).
    private func storedIndexCatalog(_ txn: Transaction, checksum: UInt64) -> SchemaCatalog? {
        if let catalog = storedIndexCheck.catalog { return catalog }
        let catalog = storedCatalog(txn, checksum: checksum)
        storedIndexCheck.catalog = catalog
        return catalog
    }

    /// The catalog whose stored checksum is `checksum`: the one this process knows, or read
    /// from `txn`.
    func storedCatalog(_ txn: Transaction, checksum: UInt64) -> SchemaCatalog? {
        let known = file.catalogWithChecksum
        return known.checksum == checksum
            ? known.catalog : try? FileState.readCatalog(txn, meta: file.meta, path: environmentPath)
    }
}

import Foundation

/// The tables a core has handed out, and the snapshot their row layout was last checked in.
///
/// A class's rows are laid out in its model's property order (``Table``). A writable Realm that
/// opens the file with the properties declared in another order stores the class again in its
/// order (``SchemaBinder``), and a migration run by another program changes the layout too.
/// A Realm bound before that, in another process or with another model class of the same name,
/// would read the new rows with the old layout (wrong values, silently) and write rows the other
/// Realms misread. So when this core's snapshot moves to a version whose stored catalog changed,
/// every table it handed out is compared with the stored class, and a table whose layout is no
/// longer the file's traps (realm-core: "Unsupported schema changes were made by another client
/// or process"), before any of its rows is read or written.
struct StoredLayoutCheck {
    /// The version of the last snapshot checked (the base version of a write).
    var version = -1
    /// The stored catalog checksum the tables were last compared with.
    var checksum: UInt64?
    /// Every table this core handed out, by identity.
    var tables: [ObjectIdentifier: Table] = [:]
    /// The version this core's own commit made, when it changed no schema: its snapshot there
    /// needs no check.
    var ownCommit = -1
}

extension RealmCore {
    /// Remembers a table this core hands out, as checked against the catalog of `checksum`.
    func noteTableInUse(_ table: Table, checkedAt checksum: UInt64?) {
        if storedLayoutCheck.tables.isEmpty { storedLayoutCheck.checksum = checksum }
        storedLayoutCheck.tables[ObjectIdentifier(table)] = table
    }

    /// Checks the tables in use against the catalog `txn` sees when the snapshot moved to a
    /// version this core has not checked; traps when another Realm changed a class's layout.
    ///
    /// Costs one comparison when the version did not move or this core's own commit moved it,
    /// one read of the catalog's checksum otherwise, and a comparison per table in use only when
    /// the checksum changed.
    func verifyStoredLayouts(_ txn: Transaction) {
        guard !storedLayoutCheck.tables.isEmpty, !isFrozen else { return }
        let base = txn.isReadOnly ? txn.version : txn.version - 1
        if base == storedLayoutCheck.version { return }
        storedLayoutCheck.version = base
        if base == storedLayoutCheck.ownCommit { return }
        // A file of catalog format 1 has no checksum: it is read as opened.
        guard let checksum = file.storedCatalogChecksum(txn), checksum != storedLayoutCheck.checksum else { return }
        guard let catalog = storedCatalog(txn, checksum: checksum) else { return }
        // By class name: the trap names the same class whatever the order tables were used in.
        for table in storedLayoutCheck.tables.values.sorted(by: { $0.info.className < $1.info.className }) {
            guard let stored = catalog.storedClass(named: table.info.className) else { continue }
            verifyLayout(of: table, stored: stored)
        }
        storedLayoutCheck.checksum = checksum
    }

    /// Traps when `table`'s rows can no longer be read with the layout the file stores `stored` in.
    func verifyLayout(of table: Table, stored: SchemaCatalog.StoredClass) {
        let changes = Self.layoutChanges(stored: stored, table: table)
        if changes.isEmpty { return }
        throwRealmException("Unsupported schema changes were made by another client or process: "
            + "'\(table.info.className)' in '\(environmentPath)' is now stored in another layout than this Realm reads "
            + "and writes it with.\n" + changes.map { "- \($0)" }.joined(separator: "\n")
            + "\nOpen the file with the same model in every program (and Realm) that uses it at the same time: "
            + "declare the properties in the same order and migrate with the same schema version.")
    }

    /// What makes `table`'s rows unreadable with the stored class's layout: added, removed or
    /// retyped properties, or the same properties stored in another order (empty: none).
    static func layoutChanges(stored: SchemaCatalog.StoredClass, table: Table) -> [String] {
        if stored.tableId != table.tableId { return [] }
        let differences = SchemaCatalog.differences(stored: stored, model: table.info)
        if !differences.isEmpty { return differences }
        let declared = table.info.objectSchema.properties.map(\.columnName)
        if stored.properties.map(\.name) != declared {
            return ["The properties of '\(stored.name)' are now stored in the order "
                + stored.properties.map(\.name).joined(separator: ", ") + "; this Realm declares them in the order "
                + declared.joined(separator: ", ") + "."]
        }
        return []
    }

    /// After this core committed `version`: when its snapshot is there and the commit changed no
    /// schema, nothing another Realm did needs checking, the catalog checksum its write checked
    /// the indexes against still holds, and the object-key counters, the change log's header and
    /// the column deltas' states it stored are the file's.
    ///
    /// Only a commit that wrote something made `version` (a change record or a counter is a
    /// write): after a write that changed nothing, the next commit, perhaps another process's,
    /// takes that version, so nothing is known of it.
    func noteOwnCommit(_ version: Int, changedSchema: Bool) {
        let madeVersion = !keyCounters.isEmpty || (file.changes != nil && !recordedChanges.isEmpty)
        let isOwn = madeVersion && !changedSchema
        storedLayoutCheck.ownCommit = isOwn ? version : -1
        storedIndexCheck.ownCommit = isOwn && storedIndexCheck.version == version ? version : -1
        noteCommittedKeyCounters(isOwn ? version : nil)
        columnLog.noteCommit(isOwn ? version : nil)
        committedLogHeader = isOwn ? pendingLogHeader.map { (version, $0) } : nil
    }
}

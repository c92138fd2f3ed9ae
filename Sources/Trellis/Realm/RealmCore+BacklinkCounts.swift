/// Reading and writing the stored backlink counts (see ``BacklinkCountBlockKey``).
extension RealmCore {
    /// Writes the count changes recorded so far in the write transaction to their blocks.
    func flushBacklinkCounts(_ txn: Transaction) throws {
        guard let counts = file.backlinkCounts, !backlinkCountLog.isEmpty else { return }
        try backlinkCountLog.flush(into: counts, txn)
    }

    /// The stored number of times `origin`'s `column` links `key` of `table`; nil when the file
    /// keeps no counts (a file of format 3 or older opened read-only).
    ///
    /// Outside a write transaction the block read last is kept while the snapshot stays, so
    /// counting the links of objects in key order reads one block per 256 objects.
    func storedBacklinkCount(to table: Table, key: ObjectKey, from origin: Table, column: Int) -> Int? {
        storedBacklinkCount(to: table, key: key, from: origin, column: column, cache: &cachedCountBlock)
    }

    /// ``storedBacklinkCount(to:key:from:column:)`` keeping the block read in `cache` (a
    /// `LinkingObjects` value's source keeps its own, so that counting the objects of a class in
    /// key order goes straight to the block).
    func storedBacklinkCount(to table: Table, key: ObjectKey, from origin: Table, column: Int,
                             cache: inout CachedCountBlock?) -> Int?
    {
        guard let counts = file.backlinkCounts else { return nil }
        let txn = transaction
        let blockKey = BacklinkCountBlockKey(targetTable: table.tableId, targetKey: key, originTable: origin.tableId,
                                             originColumn: UInt16(truncatingIfNeeded: column))
        let slot = BacklinkCountBlockKey.slot(key)
        let cacheable = writeTransaction == nil && !isFrozen
        if cacheable, let cached = cache, cached.stamp == changeStamp, cached.key == blockKey {
            return BacklinkCountBlockKey.count(in: cached.bytes, slot: slot)
        }
        if writeTransaction != nil, !backlinkCountLog.isEmpty {
            do {
                try flushBacklinkCounts(txn)
            } catch {
                throwRealmException("Trellis could not write to '\(environmentPath)': \(error)")
            }
            // Pointers into pages read before the flush may have moved with them.
            noteChange()
        }
        let bytes = blockKey.withBytes { txn.get(counts, key: $0) }
        guard let bytes else {
            if cacheable { cache = nil }
            return 0
        }
        if cacheable { cache = CachedCountBlock(stamp: changeStamp, key: blockKey, bytes: bytes) }
        return BacklinkCountBlockKey.count(in: bytes, slot: slot)
    }
}

/// The count block a read outside a write transaction read last, valid while the change stamp
/// (which changes with the snapshot) is the same.
struct CachedCountBlock {
    let stamp: UInt64
    let key: BacklinkCountBlockKey
    let bytes: UnsafeRawBufferPointer
}

/// Reading and writing the stored backlink counts (see ``BacklinkCountBlockKey``).
extension RealmCore {
    /// Writes the count changes recorded so far in the write transaction to their blocks.
    func flushBacklinkCounts(_ txn: Transaction) throws {
        guard let counts = file.backlinkCounts, !backlinkCountLog.isEmpty else { return }
        try backlinkCountLog.flush(into: counts, txn)
    }

    /// Inside a write transaction, writes the count changes recorded so far, so that reads see
    /// them (before a count is read, and before the checker compares the blocks).
    func flushBacklinkCountsForReading() throws {
        guard let txn = writeTransaction, !backlinkCountLog.isEmpty else { return }
        try flushBacklinkCounts(txn)
        // Pointers into pages read before the flush may have moved with them.
        noteChange()
    }

    /// The stored number of times `origin`'s `column` links `key` of `table`; nil when the file
    /// keeps no counts (a file of format 3 or older opened read-only).
    ///
    /// Outside a write transaction the block read is kept in `cache` while the snapshot stays,
    /// so counting the links of objects in key order reads one block per 256 objects (the core
    /// keeps one cache; a `LinkingObjects` value's source keeps its own).
    func storedBacklinkCount(to table: Table, key: ObjectKey, from origin: Table, column: Int,
                             cache: inout CachedCountBlock?) -> Int?
    {
        guard let counts = file.backlinkCounts else { return nil }
        let txn = transaction
        let blockKey = BacklinkCountBlockKey(targetTable: table.tableId, targetKey: key, originTable: origin.tableId,
                                             originColumn: UInt16(truncatingIfNeeded: column))
        let slot = BacklinkCountBlockKey.slot(key)
        let cacheable = writeTransaction == nil && !isFrozen
        if cacheable, let cached = cache, cached.key == blockKey, let count = cached.count(of: key, at: changeStamp) {
            return isPlausibleLinkCount(count) ? count : nil
        }
        do {
            try flushBacklinkCountsForReading()
        } catch {
            throwRealmException("Trellis could not write to '\(environmentPath)': \(error)")
        }
        let bytes = blockKey.withBytes { txn.get(counts, key: $0) }
        guard let bytes else {
            if cacheable { cache = nil }
            return 0
        }
        if cacheable { cache = CachedCountBlock(stamp: changeStamp, key: blockKey, bytes: bytes) }
        let count = BacklinkCountBlockKey.count(in: bytes, slot: slot)
        // A count no file of this size could hold (a damaged block): the backlink index is asked.
        return isPlausibleLinkCount(count) ? count : nil
    }

    /// Whether a count of links read from the file (a stored backlink count, a backlink entry's
    /// count) is one to believe: at most one link per 64 bytes of the file. Every link takes at
    /// least 16 bytes of the file (its element or slot and its backlink entry), and reading the
    /// objects of a count takes 24 bytes of memory per link, so a believed count never makes an
    /// allocation larger than the file; a larger one (only a damaged file has it) must not size an
    /// allocation or a loop. Up to 4,096 without asking the file's size.
    @inline(__always)
    func isPlausibleLinkCount(_ count: Int) -> Bool {
        count <= 4096 || count <= file.environment.usedBytes() / 64
    }
}

/// The count block a read outside a write transaction read last, valid while the change stamp
/// (which changes with the snapshot) is the same.
struct CachedCountBlock {
    let stamp: UInt64
    let key: BacklinkCountBlockKey
    let bytes: UnsafeRawBufferPointer

    /// The count of `objectKey` when this block holds it and the change stamp is still `stamp`.
    @inline(__always)
    func count(of objectKey: ObjectKey, at stamp: UInt64) -> Int? {
        guard self.stamp == stamp, key.block == objectKey &>> 8 else { return nil }
        return BacklinkCountBlockKey.count(in: bytes, slot: BacklinkCountBlockKey.slot(objectKey))
    }
}

/// Object keys: each table hands out increasing keys, counted in the write transaction and
/// stored in the file's `meta` database (`seq.<table>`) when it commits.
extension RealmCore {
    func allocateKey(in table: Table) -> ObjectKey {
        keyCounters.update(table.tableId, default: storedKeyCounter(table.tableId)) { counter in
            let next = counter ?? 1
            counter = next + 1
            return next
        }
    }

    /// The next key of a table as the last commit stored it (1 for a table with none yet).
    private func storedKeyCounter(_ tableId: UInt32) -> ObjectKey {
        let stored = counterKey(tableId).withUnsafeBytes { transaction.get(file.meta, key: $0) }
        return stored.map { $0.load(orZeroAt: 0, as: UInt64.self) } ?? 1
    }

    private func counterKey(_ tableId: UInt32) -> [UInt8] { Array("seq.\(tableId)".utf8) }

    /// Writes into the open write transaction what a commit would add to it before
    /// committing (the object-key counters, the column copies of the rows written), so that a
    /// copy of it (`writeCopy` inside a write) hands out new keys after the ones it holds and
    /// its columns hold its rows.
    func writePendingStateForCopy() throws {
        guard let txn = writeTransaction else { return }
        try persistKeyCounters(txn)
        try columnLog.flush(in: txn)
        try flushBacklinkCounts(txn)
        noteChange()
    }

    func persistKeyCounters(_ txn: Transaction) throws {
        // By table number alone: every counter must be kept, or a later write would hand out
        // the same keys again.
        for (tableId, next) in keyCounters.sorted {
            var value = next
            let key = counterKey(tableId)
            try key.withUnsafeBytes { (k) in
                _ = try withUnsafeBytes(of: &value) { (v) in try txn.put(file.meta, key: k, value: v) }
            }
        }
    }
}

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

    /// The next key of a table as the last commit stored it (1 for a table with none yet): as
    /// this core stored it when the last commit is its own, else read from `meta`.
    private func storedKeyCounter(_ tableId: UInt32) -> ObjectKey {
        if committedKeyCounters.version == transaction.version - 1, let next = committedKeyCounters.counters[tableId] {
            return next
        }
        let stored = Self.withCounterKey(tableId) { transaction.get(file.meta, key: $0) }
        return stored.map { $0.load(orZeroAt: 0, as: UInt64.self) } ?? 1
    }

    /// Calls `body` with the key of a table's counter in `meta`: `seq.<table number>` in UTF-8,
    /// formatted on the stack (a string made twice per write cost more than the counter's read).
    static func withCounterKey<R>(_ tableId: UInt32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        // "seq." and at most 10 digits.
        try withUnsafeTemporaryAllocation(byteCount: 14, alignment: 1) { buffer in
            buffer[0] = UInt8(ascii: "s")
            buffer[1] = UInt8(ascii: "e")
            buffer[2] = UInt8(ascii: "q")
            buffer[3] = UInt8(ascii: ".")
            var digits = 1, rest = tableId / 10
            while rest > 0 {
                digits += 1
                rest /= 10
            }
            var value = tableId
            for index in stride(from: 4 + digits - 1, through: 4, by: -1) {
                buffer[index] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
            return try body(UnsafeRawBufferPointer(rebasing: buffer[0..<(4 + digits)]))
        }
    }

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

    /// After this core's commit made `version` (nil: a commit that changed a schema, or made no
    /// version): the counters it stored are the file's there (no other writer comes between a
    /// commit and the version it makes), so the next write based on `version` takes them from
    /// here instead of reading `meta`. A schema change may have written counters of its own.
    func noteCommittedKeyCounters(_ version: Int?) {
        committedKeyCounters.counters.removeAll()
        committedKeyCounters.version = version ?? -1
        // The stored counters move over; `keyCounters` is emptied for the next write.
        if version != nil { swap(&committedKeyCounters.counters, &keyCounters) }
    }

    func persistKeyCounters(_ txn: Transaction) throws {
        // By table number alone: every counter must be kept, or a later write would hand out
        // the same keys again.
        try keyCounters.forEachSorted { tableId, next in
            var value = next
            try Self.withCounterKey(tableId) { (k) in
                _ = try withUnsafeBytes(of: &value) { (v) in try txn.put(file.meta, key: k, value: v) }
            }
        }
    }
}

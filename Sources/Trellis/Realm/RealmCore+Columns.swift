/// Reading the column copies (see ``ColumnStorage``).
extension RealmCore {
    /// The column copy of `table`, up to date with this Realm's snapshot: in a write
    /// transaction, the rows written so far are brought into it first. Nil when the file keeps
    /// none (a file of format 2 opened read-only): the caller then reads the rows.
    func readableColumns(of table: Table) -> ColumnStorage? {
        guard let storage = table.columns else { return nil }
        if let txn = writeTransaction, !columnLog.isEmpty {
            // Flushed even when not read, so that rows read next stay where they are.
            do {
                try columnLog.flush(in: txn)
            } catch {
                throwRealmException("Trellis could not write to '\(environmentPath)': \(error)")
            }
            // Pointers into the rows read before the flush may have moved with its pages.
            noteChange()
        }
        return readsColumnCopies ? storage : nil
    }

    /// The rows of `keys`, looked up with a cursor that steps when the keys come in order. Keys
    /// whose object is gone are dropped, so the two arrays stay parallel.
    func rows(of table: Table, keys: [ObjectKey]) -> ([ObjectKey], [UnsafeRawBufferPointer]) {
        var found = [ObjectKey](), rows = [UnsafeRawBufferPointer]()
        found.reserveCapacity(keys.count)
        rows.reserveCapacity(keys.count)
        guard let cursor = transaction.existingCursor(table.rows) else { return (found, rows) }
        for key in keys {
            guard let row = cursor.value(forIntegerKey: key) else { continue }
            found.append(key)
            rows.append(row)
        }
        return (found, rows)
    }
}

/// Runs a ``ChunkTest`` over a whole column copy.
enum ColumnScan {
    /// The keys of the objects that match, in key order.
    static func keys(matching test: ChunkTest, in storage: ColumnStorage, _ txn: Transaction) -> [ObjectKey] {
        var keys = [ObjectKey]()
        let words = ChunkFormat.words(storage.slotCount)
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: words) { buffer in
            guard let mask = buffer.baseAddress else { return }
            storage.forEachChunk(in: txn) { chunk, base in
                test.fill(chunk, mask)
                var matches = 0
                for word in 0..<chunk.wordCount { matches &+= mask[word].nonzeroBitCount }
                // Grown geometrically, so appending never copies the keys more than twice over.
                if keys.capacity < keys.count + matches {
                    keys.reserveCapacity(Swift.max(keys.count + matches, keys.capacity * 2))
                }
                for word in 0..<chunk.wordCount {
                    var bits = mask[word]
                    let wordBase = base &+ UInt64(word &<< 6)
                    while bits != 0 {
                        keys.append(wordBase &+ UInt64(bits.trailingZeroBitCount))
                        bits &= bits &- 1
                    }
                }
                return true
            }
        }
        return keys
    }

    /// How many objects match, counted in the match bitmaps (no key is kept).
    static func count(matching test: ChunkTest, in storage: ColumnStorage, _ txn: Transaction) -> Int {
        var count = 0
        let words = ChunkFormat.words(storage.slotCount)
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: words) { buffer in
            guard let mask = buffer.baseAddress else { return }
            storage.forEachChunk(in: txn) { chunk, _ in
                test.fill(chunk, mask)
                for word in 0..<chunk.wordCount { count &+= mask[word].nonzeroBitCount }
                return true
            }
        }
        return count
    }
}

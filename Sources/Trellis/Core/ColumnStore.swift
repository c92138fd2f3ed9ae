/// Where one class's column copy lives: chunks of `1 << shift` consecutive object keys, one
/// LMDB value each, in the integer-keyed database `c.<Class>` (chunk number → chunk).
///
/// Rows stay the home of every object (an object read is one lookup); the chunks hold the same
/// values column by column, so that a scan, an aggregate or a sort reads one packed array per
/// column instead of decoding every row. They are derived data, rewritten from the rows each
/// write changed when the write transaction commits (see ``ColumnLog``); the consistency
/// checker compares them with the rows.
struct ColumnStorage {
    let database: DatabaseHandle
    /// log2 of the slots per chunk (8 in files Trellis makes; tests make it small).
    let shift: Int
    /// The kind of each row column, in row order.
    let kinds: [ColumnKind]

    var slotCount: Int { 1 << shift }

    static func name(_ className: String) -> String { "c.\(className)" }

    /// The chunk stored under `number`, if any and well formed.
    func chunk(_ number: UInt64, in txn: Transaction) -> ColumnChunk? {
        txn.get(database, integerKey: number).flatMap { ColumnChunk($0, slotCount: slotCount) }
    }

    /// Calls `body` with each chunk in key order and the object key of its first slot; stops when
    /// `body` returns false. A chunk that is not well formed (a damaged file) is skipped.
    func forEachChunk(in txn: Transaction, _ body: (ColumnChunk, ObjectKey) -> Bool) {
        guard let cursor = txn.existingCursor(database) else { return }
        var entry = cursor.first()
        while let (key, bytes) = entry {
            if let chunk = ColumnChunk(bytes, slotCount: slotCount) {
                if !body(chunk, Cursor.integerKey(key) << UInt64(shift)) { return }
            }
            entry = cursor.next()
        }
    }

    /// Writes the chunks of every row in `rows` (an upgraded file, or a table whose column copy
    /// was emptied); the column database must be empty.
    func build(fromRows rows: DatabaseHandle, in txn: Transaction) throws {
        guard let cursor = txn.existingCursor(rows) else { return }
        var builder: ChunkBuilder?
        var current: UInt64 = 0
        var entry = cursor.first()
        while let (rawKey, bytes) = entry {
            let key = Cursor.integerKey(rawKey)
            let number = key >> UInt64(shift)
            if let finished = builder, number != current {
                try put(finished, number: current, in: txn)
                builder = nil
            }
            current = number
            if builder == nil { builder = ChunkBuilder(slotCount: slotCount, kinds: kinds) }
            builder?.set(Int(key & UInt64(slotCount - 1)), row: RowView(bytes: bytes))
            entry = cursor.next()
        }
        if let cursorFailure = cursor.failure { throw cursorFailure }
        if let builder { try put(builder, number: current, in: txn) }
    }

    /// Stores `builder` under `number`, or deletes the chunk when no object is left in it.
    func put(_ builder: ChunkBuilder, number: UInt64, in txn: Transaction) throws {
        if builder.isEmpty {
            try txn.delete(database, integerKey: number)
        } else {
            try builder.encoded().withUnsafeBytes { try txn.put(database, integerKey: number, value: $0) }
        }
    }
}

/// The rows a write transaction wrote or deleted, in order, for the column copies of their
/// classes. Recording costs an append per row; ``flush(in:)`` brings each chunk that holds one
/// of them up to date (decoded once, changed, encoded once), before a commit and before a scan
/// in the write transaction reads the columns.
final class ColumnLog {
    private struct Entry {
        let table: Table
        let key: ObjectKey
        /// The row as written; nil for a deleted object.
        let row: [UInt8]?
    }

    private var entries: [Entry] = []
    /// Entries kept before a flush, so that one huge transaction does not hold every row twice.
    private static let flushThreshold = 1 << 16

    var isEmpty: Bool { entries.isEmpty }

    @inline(__always)
    func recordWrite(_ table: Table, key: ObjectKey, row: [UInt8], in txn: Transaction) throws {
        guard table.columns != nil else { return }
        entries.append(Entry(table: table, key: key, row: row))
        if entries.count >= Self.flushThreshold { try flush(in: txn) }
    }

    func recordDelete(_ table: Table, key: ObjectKey, in txn: Transaction) throws {
        guard table.columns != nil else { return }
        entries.append(Entry(table: table, key: key, row: nil))
        if entries.count >= Self.flushThreshold { try flush(in: txn) }
    }

    /// Forgets what was recorded (the transaction ended, or its rows were all removed).
    func reset() { entries = [] }

    /// Writes every chunk the recorded rows fall in.
    func flush(in txn: Transaction) throws {
        guard !entries.isEmpty else { return }
        let recorded = entries
        entries = []
        var byTable: [ObjectIdentifier: [Int]] = [:]
        var order: [ObjectIdentifier] = []
        for index in recorded.indices {
            let id = ObjectIdentifier(recorded[index].table)
            if byTable[id] == nil { order.append(id) }
            byTable[id, default: []].append(index)
        }
        for id in order {
            guard let indices = byTable[id], let first = indices.first,
                  let storage = recorded[first].table.columns
            else { continue }
            let shift = UInt64(storage.shift), mask = UInt64(storage.slotCount - 1)
            // Stable: the entries of one chunk keep their order, so the last write wins.
            let sorted = indices.sorted { (recorded[$0].key >> shift, $0) < (recorded[$1].key >> shift, $1) }
            var position = 0
            while position < sorted.count {
                let number = recorded[sorted[position]].key >> shift
                var builder = storage.chunk(number, in: txn).map { ChunkBuilder($0, kinds: storage.kinds) }
                    ?? ChunkBuilder(slotCount: storage.slotCount, kinds: storage.kinds)
                while position < sorted.count, recorded[sorted[position]].key >> shift == number {
                    let entry = recorded[sorted[position]]
                    let slot = Int(entry.key & mask)
                    if let row = entry.row {
                        row.withUnsafeBytes { builder.set(slot, row: RowView(bytes: $0)) }
                    } else {
                        builder.remove(slot)
                    }
                    position += 1
                }
                try storage.put(builder, number: number, in: txn)
            }
        }
    }
}

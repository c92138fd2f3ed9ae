/// Some rows changed in a stored chunk, in a copy of its bytes: fixed-width slots and null
/// bits are overwritten where they are, a new variable-width value is appended after the tail
/// (the old one stays as unused bytes). Changing up to half a chunk's objects then costs a copy
/// of the chunk instead of decoding and encoding it (``ChunkBuilder``, which the column log
/// uses for new chunks, for larger changes, and to drop the unused bytes once they outweigh the
/// rest). Readers use it too, to apply the delta to a chunk (``ColumnDelta``).
struct ChunkPatch {
    private(set) var bytes: [UInt8]
    let slotCount: Int
    let kinds: [ColumnKind]
    private let words: Int
    /// Where each column's block starts in `bytes` (0: the column has none).
    private let blockOffsets: [Int]
    /// Tail bytes no slot points at any more.
    private(set) var unusedBytes: Int

    /// Nil when the chunk is not laid out for `kinds` (the schema changed since it was written):
    /// it must be rebuilt.
    init?(_ chunk: ColumnChunk, kinds: [ColumnKind]) {
        guard chunk.columnCount == kinds.count else { return nil }
        var offsets: [Int] = []
        for (column, kind) in kinds.enumerated() {
            let block = chunk.block(column)
            guard (block == nil) == (kind == .none) else { return nil }
            offsets.append(block.map { $0.nulls - chunk.base } ?? 0)
        }
        // Copied as typed bytes: an `UnsafeRawBufferPointer` would be copied byte by byte.
        bytes = Array(UnsafeBufferPointer(start: chunk.base.assumingMemoryBound(to: UInt8.self), count: chunk.byteCount))
        slotCount = chunk.slotCount
        self.kinds = kinds
        words = chunk.wordCount
        blockOffsets = offsets
        unusedBytes = chunk.unusedBytes
    }

    var isEmpty: Bool {
        for word in 0..<words where load(at: 8 + 8 * word) != 0 { return false }
        return true
    }

    /// Stores the values of `row` in slot `index`.
    mutating func set(_ index: Int, row: RowView) {
        let word = index >> 6, bit: UInt64 = 1 << UInt64(index & 63)
        update(word: 8 + 8 * word) { $0 | bit }
        for (column, kind) in kinds.enumerated() where kind != .none {
            let nulls = blockOffsets[column] + 8 * word, slot = blockOffsets[column] + 8 * (words + index)
            forgetTail(at: slot, kind)
            if row.isNull(column) {
                update(word: nulls) { $0 | bit }
                store(0, at: slot)
                continue
            }
            update(word: nulls) { $0 & ~bit }
            if kind == .fixed {
                store(row.slot(column), at: slot)
            } else {
                let value = row.tail(column)
                if value.count > ChunkFormat.inlineLimit {
                    store(ChunkFormat.inRow, at: slot)
                    continue
                }
                store(value.isEmpty ? 0 : UInt64(bytes.count) | UInt64(value.count) << 32, at: slot)
                bytes.append(contentsOf: value.bindMemory(to: UInt8.self))
            }
        }
    }

    /// Empties slot `index` (its object was deleted).
    mutating func remove(_ index: Int) {
        let word = index >> 6, bit: UInt64 = 1 << UInt64(index & 63)
        update(word: 8 + 8 * word) { $0 & ~bit }
        for (column, kind) in kinds.enumerated() where kind != .none {
            let slot = blockOffsets[column] + 8 * (words + index)
            forgetTail(at: slot, kind)
            update(word: blockOffsets[column] + 8 * word) { $0 | bit }
            store(0, at: slot)
        }
    }

    /// Whether unused bytes make up more than half of the chunk: time to rebuild it.
    var wantsCompacting: Bool { unusedBytes * 2 > bytes.count }

    private mutating func forgetTail(at slot: Int, _ kind: ColumnKind) {
        guard kind == .variable else { return }
        unusedBytes += Int(load(at: slot) >> 32)
        let recorded = UInt32(clamping: unusedBytes)
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: recorded, toByteOffset: 4, as: UInt32.self) }
    }

    private func load(at offset: Int) -> UInt64 {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
    }

    private mutating func store(_ value: UInt64, at offset: Int) {
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: value, toByteOffset: offset, as: UInt64.self) }
    }

    private mutating func update(word offset: Int, _ change: (UInt64) -> UInt64) {
        store(change(load(at: offset)), at: offset)
    }
}

/// A chunk being changed object by object: rebuilt (``ChunkBuilder``) or patched
/// (``ChunkPatch``). The column log and the delta change both the same way.
protocol ChunkChanges {
    /// Stores the values of `row` in slot `index`. With `external`, the row lies in that buffer,
    /// which outlives the changes, and values may point into it instead of being copied.
    mutating func set(_ index: Int, row: RowView, external: UnsafeRawPointer?)
    /// Empties slot `index` (its object was deleted).
    mutating func remove(_ index: Int)
}

extension ChunkChanges {
    /// Gives `key`'s slot the object's row as it is now in `rows`, or empties it when the
    /// object is gone.
    mutating func refresh(_ key: ObjectKey, slotMask: UInt64, rows: DatabaseHandle, in txn: Transaction) {
        if let row = txn.get(rows, integerKey: key) {
            set(Int(key & slotMask), row: RowView(bytes: row), external: nil)
        } else {
            remove(Int(key & slotMask))
        }
    }
}

extension ChunkBuilder: ChunkChanges {}

extension ChunkPatch: ChunkChanges {
    /// A patch copies every value into its bytes, so `external` is not needed.
    mutating func set(_ index: Int, row: RowView, external: UnsafeRawPointer?) { set(index, row: row) }
}

/// The delta of a column copy: the keys of objects that small write transactions changed since
/// their chunks were last written, in the integer-keyed database `cd.<Class>` (object key →
/// nothing).
///
/// A transaction that changes a few objects of a class records their keys here instead of
/// rewriting their chunks (one small put instead of a chunk of several KB). Readers apply the
/// delta to the chunks they read, taking the objects' values from their rows; once the delta
/// holds more than ``limit`` keys, the next write folds it into the chunks and empties it.
/// The copies stay exact at every commit: a chunk plus its delta is what the rows hold.
enum ColumnDelta {
    /// A transaction that logged at most this many rows of a class goes to the delta.
    static let smallTransaction = 8
    /// The most keys the delta holds before it is folded into the chunks.
    static let limit = 64

    static func name(_ className: String) -> String { "cd.\(className)" }
}

/// A chunk with the delta applied: its bytes are owned here, and the view stays valid while
/// this object lives.
final class DeltaChunk {
    private let bytes: UnsafeMutableRawBufferPointer
    let chunk: ColumnChunk?

    init(_ encoded: [UInt8], slotCount: Int, baseKey: ObjectKey) {
        let owned = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(encoded.count, 1), alignment: 8)
        encoded.withUnsafeBytes { source in
            if let from = source.baseAddress, let to = owned.baseAddress {
                to.copyMemory(from: from, byteCount: source.count)
            }
        }
        bytes = owned
        chunk = ColumnChunk(UnsafeRawBufferPointer(rebasing: owned[..<encoded.count]), slotCount: slotCount,
                            baseKey: baseKey)
    }

    deinit { bytes.deallocate() }
}

/// A chunk as a reader sees it: the stored one, or one with the delta applied (kept alive by
/// `owner`).
struct ReadChunk {
    let chunk: ColumnChunk
    let owner: DeltaChunk?
}

extension ColumnStorage {
    /// The delta's keys, in order (usually none).
    func deltaKeys(in txn: Transaction) -> [ObjectKey] {
        guard let delta, let cursor = txn.existingCursor(delta) else { return [] }
        var keys: [ObjectKey] = []
        var entry = cursor.first()
        while let (key, _) = entry {
            keys.append(Cursor.integerKey(key))
            entry = cursor.next()
        }
        return keys
    }

    /// The delta's keys that fall in chunk `number`, in order.
    private func deltaKeys(inChunk number: UInt64, in txn: Transaction) -> [ObjectKey] {
        guard let delta, let cursor = txn.existingCursor(delta) else { return [] }
        var first = number << UInt64(shift)
        let end = first &+ UInt64(slotCount)
        var keys: [ObjectKey] = []
        var entry = withUnsafeBytes(of: &first) { cursor.seek(atLeast: $0) }
        while let (rawKey, _) = entry {
            let key = Cursor.integerKey(rawKey)
            guard key < end else { break }
            keys.append(key)
            entry = cursor.next()
        }
        return keys
    }

    /// Chunk `number` as readers see it: the stored chunk with the delta applied. Nil when it
    /// holds no object.
    func chunk(_ number: UInt64, in txn: Transaction) -> ReadChunk? {
        let stored = storedChunk(number, in: txn)
        let pending = delta == nil ? [] : deltaKeys(inChunk: number, in: txn)
        if pending.isEmpty { return stored.map { ReadChunk(chunk: $0, owner: nil) } }
        return applying(pending[...], to: stored, number: number, in: txn)
    }

    /// Calls `body` with each chunk as readers see it, in key order, and the object key of its
    /// first slot; stops when `body` returns false. A chunk that is not well formed (a damaged
    /// file) is skipped.
    func forEachChunk(in txn: Transaction, _ body: (ColumnChunk, ObjectKey) -> Bool) {
        let pending = deltaKeys(in: txn)
        var next = 0  // the first pending key not yet applied
        /// Pending keys of chunk `number` (and of no earlier chunk).
        func pendingKeys(upTo number: UInt64) -> ArraySlice<ObjectKey> {
            let start = next
            while next < pending.count, pending[next] >> UInt64(shift) <= number { next += 1 }
            return pending[start..<next]
        }
        /// Chunks that exist only in the delta (their objects are newer than every stored chunk
        /// before `number`).
        func deltaOnlyChunks(before number: UInt64) -> Bool {
            while next < pending.count, pending[next] >> UInt64(shift) < number {
                let only = pending[next] >> UInt64(shift)
                let keys = pendingKeys(upTo: only)
                if let read = applying(keys, to: nil, number: only, in: txn), !body(read.chunk, read.chunk.baseKey) {
                    return false
                }
            }
            return true
        }
        if let cursor = txn.existingCursor(database) {
            var entry = cursor.first()
            while let (key, bytes) = entry {
                let number = Cursor.integerKey(key), base = number << UInt64(shift)
                guard deltaOnlyChunks(before: number) else { return }
                let keys = pendingKeys(upTo: number)
                if let stored = ColumnChunk(bytes, slotCount: slotCount, baseKey: base) {
                    if keys.isEmpty {
                        if !body(stored, base) { return }
                    } else if let read = applying(keys, to: stored, number: number, in: txn) {
                        if !body(read.chunk, base) { return }
                    }
                }
                entry = cursor.next()
            }
        }
        _ = deltaOnlyChunks(before: .max)
    }

    /// `stored` (or an empty chunk) with the current rows of `keys` applied; nil when no object
    /// is left in it.
    private func applying(_ keys: ArraySlice<ObjectKey>, to stored: ColumnChunk?, number: UInt64,
                          in txn: Transaction) -> ReadChunk?
    {
        let base = number << UInt64(shift), mask = UInt64(slotCount - 1)
        let encoded: [UInt8]
        if let stored, var patch = ChunkPatch(stored, kinds: kinds) {
            for key in keys {
                if let row = txn.get(rows, integerKey: key) {
                    patch.set(Int(key & mask), row: RowView(bytes: row))
                } else {
                    patch.remove(Int(key & mask))
                }
            }
            if patch.isEmpty { return nil }
            encoded = patch.bytes
        } else {
            let builder = stored.map { ChunkBuilder($0, kinds: kinds) } ?? ChunkBuilder(slotCount: slotCount, kinds: kinds)
            for key in keys {
                if let row = txn.get(rows, integerKey: key) {
                    builder.set(Int(key & mask), row: RowView(bytes: row))
                } else {
                    builder.remove(Int(key & mask))
                }
            }
            if builder.isEmpty { return nil }
            encoded = builder.encoded()
        }
        let owner = DeltaChunk(encoded, slotCount: slotCount, baseKey: base)
        return owner.chunk.map { ReadChunk(chunk: $0, owner: owner) }
    }
}

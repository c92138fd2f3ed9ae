/// The delta of a column copy: what small write transactions changed since the chunks were last
/// written, in the integer-keyed database `cd.<Class>`:
/// - the keys of existing objects they changed or deleted (object key → nothing);
/// - under the key ``coveredKey``, the first object key the chunks do not cover: objects made
///   since (keys only grow) are read from the rows past it, so a small insert writes nothing
///   for the column copy at all.
///
/// A transaction that changes a few objects of a class records their keys here instead of
/// rewriting their chunks (one small put instead of a chunk of several KB). Readers apply the
/// delta to the chunks they read, taking the objects' values from their rows; once the delta
/// holds more than ``limit`` keys (or objects past the covered key), the next write folds it
/// into the chunks. The copies stay exact at every commit: the chunks plus the delta are what
/// the rows hold.
enum ColumnDelta {
    /// A transaction that logged at most this many rows of a class goes to the delta.
    static let smallTransaction = 8
    /// The most keys the delta stands for before it is folded into the chunks.
    static let limit = 64
    /// The delta's entry holding the first key the chunks do not cover (u64, native order).
    static let coveredKey = UInt64.max

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
    /// The first object key the chunks do not cover (0 when the delta does not say), and at
    /// most how many keys the delta records: read in one lookup on every small write.
    func deltaState(in txn: Transaction) -> (covered: ObjectKey, count: Int) {
        guard let delta, let value = txn.get(delta, integerKey: ColumnDelta.coveredKey) else { return (0, 0) }
        return (value.load(orZeroAt: 0, as: UInt64.self), Int(clamping: value.load(orZeroAt: 8, as: UInt64.self)))
    }

    func coveredUpTo(in txn: Transaction) -> ObjectKey { deltaState(in: txn).covered }

    /// At most how many keys the delta records (its covered key aside).
    func deltaCount(in txn: Transaction) -> Int { deltaState(in: txn).count }

    /// Records the delta's covered key and key count.
    func setDeltaState(covered: ObjectKey, count: Int, in txn: Transaction) throws {
        guard let delta else { return }
        var value = (covered, UInt64(count))
        try withUnsafeBytes(of: &value) { try txn.put(delta, integerKey: ColumnDelta.coveredKey, value: $0) }
    }

    /// The first key after every object of the class (0 without objects).
    func keyAfterLastObject(in txn: Transaction) -> ObjectKey {
        guard let cursor = txn.existingCursor(rows), let (key, _) = cursor.last() else { return 0 }
        return Cursor.integerKey(key) &+ 1
    }

    /// The keys readers take from the rows, in order (usually none): the delta's, then those
    /// of the objects past the covered key.
    func deltaKeys(in txn: Transaction) -> [ObjectKey] {
        deltaKeys(from: 0, to: .max, in: txn)
    }

    /// The keys readers take from the rows in `[start, end)`, in order; objects past the covered
    /// key count only below `rowsBelow`.
    func deltaKeys(from start: ObjectKey, to end: ObjectKey, rowsBelow: ObjectKey = .max, in txn: Transaction)
        -> [ObjectKey]
    {
        guard let delta else { return [] }
        var keys: [ObjectKey] = []
        if let cursor = txn.existingCursor(delta) {
            var first = start
            var entry = withUnsafeBytes(of: &first) { cursor.seek(atLeast: $0) }
            while let (rawKey, _) = entry {
                let key = Cursor.integerKey(rawKey)
                guard key < end, key != ColumnDelta.coveredKey else { break }
                keys.append(key)
                entry = cursor.next()
            }
        }
        var first = Swift.max(start, coveredUpTo(in: txn))
        let last = Swift.min(end, rowsBelow)
        guard first < last, let cursor = txn.existingCursor(rows) else { return keys }
        var entry = withUnsafeBytes(of: &first) { cursor.seek(atLeast: $0) }
        while let (rawKey, _) = entry {
            let key = Cursor.integerKey(rawKey)
            guard key < last else { break }
            keys.append(key)
            entry = cursor.next()
        }
        return keys
    }

    /// The keys readers take from the rows that fall in chunk `number`, in order.
    private func deltaKeys(inChunk number: UInt64, in txn: Transaction) -> [ObjectKey] {
        let first = number << UInt64(shift)
        return deltaKeys(from: first, to: first &+ UInt64(slotCount), in: txn)
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
            for key in keys { patch.refresh(key, slotMask: mask, rows: rows, in: txn) }
            if patch.isEmpty { return nil }
            encoded = patch.bytes
        } else {
            var builder = stored.map { ChunkBuilder($0, kinds: kinds) } ?? ChunkBuilder(slotCount: slotCount, kinds: kinds)
            for key in keys { builder.refresh(key, slotMask: mask, rows: rows, in: txn) }
            if builder.isEmpty { return nil }
            encoded = builder.encoded()
        }
        let owner = DeltaChunk(encoded, slotCount: slotCount, baseKey: base)
        return owner.chunk.map { ReadChunk(chunk: $0, owner: owner) }
    }
}

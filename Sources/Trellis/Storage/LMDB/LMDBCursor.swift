// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import Foundation
import CLMDB

/// A position in a named database, for ordered scans and range lookups.
final class Cursor {
    private let handle: OpaquePointer
    /// The database the cursor walks.
    let database: DatabaseHandle
    // Keeps the transaction alive while the cursor exists; nil for the cursor a transaction
    // keeps for reuse (``Transaction/withReusableCursor(_:_:)``), which it closes itself.
    private let transaction: Transaction?
    /// The transaction's environment, read on every step without retaining it: the
    /// transaction keeps it alive, and a retain would cost two atomic operations per step,
    /// slow ones, since the environment registry's weak reference gives it a side table.
    let environment: Unmanaged<Environment>

    init(transaction: Transaction, txn: OpaquePointer, database: DatabaseHandle, ownedByTransaction: Bool = false)
        throws
    {
        var cursor: OpaquePointer?
        try lmdbCheck(mdb_cursor_open(txn, database, &cursor), "opening a cursor")
        guard let cursor else { throw StorageError(code: EINVAL, operation: "opening a cursor") }
        self.handle = cursor
        self.database = database
        self.transaction = ownedByTransaction ? nil : transaction
        self.environment = Unmanaged.passUnretained(transaction.environment)
    }

    deinit {
        mdb_cursor_close(handle)
    }

    typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

    /// The error that ended the last walk early, if it was not the end of the data.
    private(set) var failure: StorageError?

    func move(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil) -> Entry? {
        var k = MDB_val(mv_size: key?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: key?.baseAddress))
        var v = MDB_val()
        let code = mdb_cursor_get(handle, &k, &v, op)
        // Anything else is a damaged page (MDB_CORRUPTED, MDB_PAGE_NOTFOUND): the walk ends there
        // rather than stopping the process; `failure` says why for the callers that check.
        if code != 0 {
            if code != MDB_NOTFOUND { failure = StorageError(code: code, operation: "moving a cursor") }
            return nil
        }
        let readable = environment._withUnsafeGuaranteedRef {
            $0.isReadable(v.mv_data, count: v.mv_size) && $0.isReadable(k.mv_data, count: k.mv_size)
        }
        guard readable
        else {
            failure = StorageError(code: MDB_CORRUPTED, operation: "reading a value past the end of the file")
            return nil
        }
        return (UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
                UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// The value stored under an integer key (see ``entry(forIntegerKey:)``).
    func value(forIntegerKey key: UInt64) -> UnsafeRawBufferPointer? { entry(forIntegerKey: key)?.value }

    /// The entry stored under an integer key, positioning the cursor there. When the cursor
    /// already sits on the page holding `key`, LMDB searches only that page, so a run of
    /// nearby keys costs far less than one `get` each.
    func entry(forIntegerKey key: UInt64) -> Entry? {
        lastCounted = nil
        if let last = lastIntegerKey, key == last &+ 1, let (nextKey, value) = move(MDB_NEXT), nextKey.count == 8,
           Cursor.integerKey(nextKey) == key
        {
            // Links made in order point at consecutive keys: stepping is cheaper than searching.
            lastIntegerKey = key
            return (nextKey, value)
        }
        var keyValue = key
        let entry = withUnsafeBytes(of: &keyValue) { raw in move(MDB_SET_KEY, key: raw) }
        lastIntegerKey = entry == nil ? nil : key
        return entry
    }

    /// The object key of an entry of an integer-keyed database (`MDB_INTEGERKEY`: native byte
    /// order, as `Transaction` writes them).
    static func integerKey(_ raw: UnsafeRawBufferPointer) -> UInt64 { raw.load(orZeroAt: 0, as: UInt64.self) }

    /// The entry stored under `key`, positioning the cursor there.
    func entry(forKey key: UnsafeRawBufferPointer) -> Entry? {
        lastIntegerKey = nil
        lastCounted = nil
        return move(MDB_SET_KEY, key: key)
    }

    /// The key `entry(forIntegerKey:)` last found, where the cursor now sits.
    private var lastIntegerKey: UInt64?

    func first() -> Entry? {
        lastIntegerKey = nil
        lastCounted = nil
        return move(MDB_FIRST)
    }

    func last() -> Entry? {
        lastIntegerKey = nil
        lastCounted = nil
        return move(MDB_LAST)
    }

    func next() -> Entry? {
        lastIntegerKey = nil
        lastCounted = nil
        return move(MDB_NEXT)
    }

    /// Positions at the first key greater than or equal to `key`.
    func seek(atLeast key: UnsafeRawBufferPointer) -> Entry? {
        lastIntegerKey = nil
        lastCounted = nil
        return move(MDB_SET_RANGE, key: key)
    }

    /// The sum of the native `UInt32` values of the entries whose key starts with `prefix`,
    /// read in place (backlink counts: nothing is copied or allocated).
    ///
    /// When the previous call's prefix was smaller (the same length) and the cursor has not moved
    /// since, the entries of `prefix` cannot start before the entry where that walk stopped, so
    /// the walk starts there instead of searching the tree: counting the backlinks of objects in
    /// key order steps through the database once.
    func sumOfCounts(withPrefix prefix: UnsafeRawBufferPointer) -> Int {
        var entry: Entry?
        if let counted = lastCounted, counted.prefix.precedes(prefix) {
            guard let stop = counted.stop else {
                // The last walk reached the end: nothing is greater than its prefix's entries.
                lastCounted = CountedPrefix(prefix, stop: nil)
                return 0
            }
            entry = ShortKey.compare(stop.key, prefix, length: prefix.count) < 0 ? move(MDB_SET_RANGE, key: prefix) : stop
        } else {
            entry = move(MDB_SET_RANGE, key: prefix)
        }
        lastIntegerKey = nil
        var sum = 0
        while let current = entry, current.key.count >= prefix.count,
              ShortKey.compare(current.key, prefix, length: prefix.count) == 0
        {
            sum += Int(current.value.load(orZeroAt: 0, as: UInt32.self))
            entry = move(MDB_NEXT)
        }
        // A walk that stopped on a fault starts over next time.
        lastCounted = failure == nil ? CountedPrefix(prefix, stop: entry) : nil
        return sum
    }

    /// The prefix ``sumOfCounts(withPrefix:)`` counted last and the entry where its walk stopped
    /// (nil: the end), while the cursor has not moved otherwise. The entry's pointers stay valid
    /// because only read transactions reuse cursors (``Transaction/withReusableCursor(_:_:)``).
    private var lastCounted: CountedPrefix?

    private struct CountedPrefix {
        let prefix: ShortKey
        let stop: Entry?

        init(_ prefix: UnsafeRawBufferPointer, stop: Entry?) {
            self.prefix = ShortKey(prefix)
            self.stop = stop
        }
    }

    /// Every entry whose key starts with `prefix` (every entry for an empty prefix), in key
    /// order. The pointers are valid until the transaction changes or ends.
    func entries(withPrefix prefix: [UInt8]) -> [Entry] {
        var out = [Entry]()
        var entry = prefix.isEmpty ? first() : prefix.withUnsafeBytes { seek(atLeast: $0) }
        while let current = entry, current.key.starts(with: prefix) {
            out.append(current)
            entry = next()
        }
        return out
    }
}

/// A key of up to 24 bytes kept inline (no allocation), compared as bytes.
struct ShortKey {
    private var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
    private let count: Int

    /// `bytes` truncated to 24 bytes; a longer key never ``precedes(_:)`` anything.
    init(_ bytes: UnsafeRawBufferPointer) {
        count = bytes.count <= 24 ? bytes.count : -1
        guard count > 0, let base = bytes.baseAddress else { return }
        withUnsafeMutableBytes(of: &words) { $0.baseAddress?.copyMemory(from: base, byteCount: count) }
    }

    /// Whether this key is smaller than `other`, which has the same length.
    func precedes(_ other: UnsafeRawBufferPointer) -> Bool {
        guard count >= 0, count == other.count else { return false }
        var words = self.words
        return withUnsafeBytes(of: &words) { Self.compare($0, other, length: count) < 0 }
    }

    /// Compares the first `length` bytes of `a` (fewer if it is shorter: then it is smaller when
    /// they agree) with `b`, which has at least `length` bytes: negative, zero or positive.
    @inline(__always)
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, length: Int) -> Int32 {
        let common = Swift.min(a.count, length)
        guard common > 0, let left = a.baseAddress, let right = b.baseAddress else { return common < length ? -1 : 0 }
        // Eight bytes at a time, compared as big-endian words (byte order): cheaper than a call
        // to memcmp for the short keys counted here (backlink prefixes are 12 and 18 bytes).
        var offset = 0
        while offset + 8 <= common {
            let x = left.loadUnaligned(fromByteOffset: offset, as: UInt64.self).bigEndian
            let y = right.loadUnaligned(fromByteOffset: offset, as: UInt64.self).bigEndian
            if x != y { return x < y ? -1 : 1 }
            offset += 8
        }
        while offset < common {
            let x = left.load(fromByteOffset: offset, as: UInt8.self)
            let y = right.load(fromByteOffset: offset, as: UInt8.self)
            if x != y { return x < y ? -1 : 1 }
            offset += 1
        }
        return common < length ? -1 : 0
    }
}
#endif

// The TrellisStorage build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=trellis, see Package.swift).
#if !TRELLIS_LMDB
import Foundation
import TrellisStorage

/// A position in a named database, for ordered scans and range lookups.
///
/// Keys and values are lent in place, with the lifetime of ``Transaction/get(_:key:)``'s.
final class Cursor {
    private let cursor: TrellisStorage.Cursor
    /// The tree as the transaction sees it (leaf pages read in place).
    private let access: TreeAccess
    /// The database the cursor walks.
    let database: DatabaseHandle
    /// Keeps the transaction alive while the cursor exists.
    private let transaction: Transaction

    init(transaction: Transaction, access: TreeAccess, database: DatabaseHandle) {
        self.cursor = access.makeCursor()
        self.access = access
        self.database = database
        self.transaction = transaction
    }

    typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

    /// The error that ended the last walk early, if it was not the end of the data.
    private(set) var failure: StorageError?

    /// The entry the cursor stands on after `move` (nil: it moved past the end, or failed).
    @inline(__always)
    private func entry(after move: () throws -> Bool) -> Entry? {
        do {
            guard try move() else { return nil }
            let key = try cursor.withKey { $0 }
            let value = try cursor.withValue { $0 }
            return (key, value)
        } catch {
            failure = StorageError.wrapping(error, operation: "moving a cursor")
            return nil
        }
    }

    /// The value stored under an integer key (see ``entry(forIntegerKey:)``).
    func value(forIntegerKey key: UInt64) -> UnsafeRawBufferPointer? { entry(forIntegerKey: key)?.value }

    /// The entry stored under an integer key, positioning the cursor there.
    func entry(forIntegerKey key: UInt64) -> Entry? {
        lastCounted = nil
        var keyValue = key.littleEndian
        return withUnsafeBytes(of: &keyValue) { raw in entry { try cursor.seek(exactly: raw) } }
    }

    /// The object key of an entry of an integer-keyed database (native byte order, as
    /// `Transaction` writes them).
    static func integerKey(_ raw: UnsafeRawBufferPointer) -> UInt64 { raw.load(orZeroAt: 0, as: UInt64.self) }

    /// The entry stored under `key`, positioning the cursor there.
    func entry(forKey key: UnsafeRawBufferPointer) -> Entry? {
        lastCounted = nil
        return entry { try cursor.seek(exactly: key) }
    }

    func first() -> Entry? {
        lastCounted = nil
        return entry { try cursor.first() }
    }

    func last() -> Entry? {
        lastCounted = nil
        return entry { try cursor.last() }
    }

    func next() -> Entry? {
        lastCounted = nil
        return entry { try cursor.next() }
    }

    /// Positions at the first key greater than or equal to `key`.
    func seek(atLeast key: UnsafeRawBufferPointer) -> Entry? {
        lastCounted = nil
        return entry { try cursor.seek(atLeast: key) }
    }

    /// The sum of the native `UInt32` values of the entries whose key starts with `prefix`,
    /// read in place (backlink counts).
    ///
    /// When the previous call's prefix was smaller (the same length) and the cursor has not moved
    /// since, the walk starts where that one stopped instead of searching the tree.
    func sumOfCounts(withPrefix prefix: UnsafeRawBufferPointer) -> Int {
        var current: Entry?
        if let counted = lastCounted, counted.prefix.precedes(prefix) {
            guard let stop = counted.stop else {
                lastCounted = CountedPrefix(prefix, stop: nil)
                return 0
            }
            current = ShortKey.compare(stop.key, prefix, length: prefix.count) < 0
                ? entry { try cursor.seek(atLeast: prefix) } : stop
        } else {
            current = entry { try cursor.seek(atLeast: prefix) }
        }
        var sum = 0
        while let found = current, found.key.count >= prefix.count,
              ShortKey.compare(found.key, prefix, length: prefix.count) == 0
        {
            sum += Int(found.value.load(orZeroAt: 0, as: UInt32.self))
            current = entry { try cursor.next() }
        }
        lastCounted = failure == nil ? CountedPrefix(prefix, stop: current) : nil
        return sum
    }

    /// The prefix ``sumOfCounts(withPrefix:)`` counted last and the entry where its walk stopped
    /// (nil: the end), while the cursor has not moved otherwise.
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
        var current = prefix.isEmpty ? first() : prefix.withUnsafeBytes { seek(atLeast: $0) }
        while let found = current, found.key.starts(with: prefix) {
            out.append(found)
            current = next()
        }
        return out
    }

    /// Appends every entry's key and value, in key order (a class's rows); returns how many
    /// leaf pages were read in place.
    ///
    /// In a read snapshot the leaf pages are walked in place (no cursor step per entry); a write
    /// transaction's trees change, so there the cursor steps.
    @discardableResult
    func appendAllIntegerKeyed(keys: inout [UInt64], values: inout [UnsafeRawBufferPointer]) -> Int {
        lastCounted = nil
        var pages = 0
        do {
            let access = access
            let walked = try access.forEachLeaf { leaf in
                pages += 1
                // A value in an overflow run: the tree lends it in place too.
                try leaf.appendIntegerKeyedEntries(keys: &keys, values: &values) { try access.value(forKey: $0) }
            }
            if walked { return pages }
        } catch {
            failure = StorageError.wrapping(error, operation: "reading a database's pages")
            return pages
        }
        var current = first()
        while let (key, value) = current {
            keys.append(Cursor.integerKey(key))
            values.append(value)
            current = next()
        }
        return 0
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

// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import Foundation

/// A database's B-tree as one read snapshot holds it: its root page and depth, from the
/// database's record in the main database (`MDB_db`, the record LMDB itself reads for the
/// snapshot), and its key order.
struct TreeRoot {
    /// The root page's number; ``emptyTree`` for a database with no entries.
    let page: UInt64
    /// The levels from the root to the leaves, both included.
    let depth: Int
    /// Keys compared as native unsigned integers (`MDB_INTEGERKEY`); else byte-wise.
    let integerKeys: Bool
    /// The root branch's keys, read into memory once a snapshot searched the tree often
    /// (``KnownRoot``); nil until then, for a leaf root, or for keys without numbers.
    var index: RootIndex?

    /// LMDB's `P_INVALID`: the root of an empty tree.
    static let emptyTree = UInt64.max
    /// The deepest tree searched in place; LMDB's own cursors stop at 32 levels.
    static let maximumDepth = 32

    private static let integerKeyFlag: UInt16 = 0x08

    /// The tree a 48-byte database record describes; nil for a kind ``TreeSearch`` does not
    /// read (duplicates, reversed keys: any flag but `MDB_INTEGERKEY`) or a record that is not
    /// sound.
    init?(record: UnsafeRawBufferPointer) {
        guard record.count == 48 else { return nil }
        let flags = record.loadUnaligned(fromByteOffset: 4, as: UInt16.self)
        guard flags & ~Self.integerKeyFlag == 0 else { return nil }
        let depth = Int(record.loadUnaligned(fromByteOffset: 6, as: UInt16.self))
        page = record.loadUnaligned(fromByteOffset: 40, as: UInt64.self)
        guard page == Self.emptyTree ? depth == 0 : (1...Self.maximumDepth).contains(depth) else { return nil }
        self.depth = depth
        integerKeys = flags & Self.integerKeyFlag != 0
    }
}

/// Finding a key by reading a read snapshot's B-tree pages in place, as `mdb_get` would find
/// it, without LMDB's cursor set-up and its comparison calls through a function pointer, and
/// guessing the place of numbered keys: about a third of `mdb_get`'s instructions (a
/// primary-key lookup is two such searches).
///
/// The pages are LMDB 0.9's (``PageFormat``). Nothing is trusted: every page must lie in the
/// map and the file, name itself, be a branch above the leaf level and a plain leaf at it, and
/// every node must lie inside its page. Anything else sends the lookup back to LMDB, which
/// reads the same snapshot. Used only in read snapshots, whose pages never change.
enum TreeSearch {
    /// The value stored under `key`: `.some(value)`, `.some(nil)` when the tree has no such
    /// key, nil when LMDB must answer.
    static func value(forKey key: UnsafeRawBufferPointer, in root: TreeRoot, layout: PageLayout)
        -> UnsafeRawBufferPointer??
    {
        if root.page == TreeRoot.emptyTree { return .some(nil) }
        if root.integerKeys, key.count != 8 { return nil }
        var number = root.page
        var levelsAbove = root.depth &- 1
        if let index = root.index, let child = index.child(coveringKey: key, integerKeys: root.integerKeys) {
            number = child
            levelsAbove &-= 1
        }
        while levelsAbove > 0 {
            guard let page = layout.page(numbered: number), let child = page.child(coveringKey: key, root: root)
            else { return nil }
            number = child
            levelsAbove &-= 1
        }
        guard let leaf = layout.page(numbered: number) else { return nil }
        return leaf.leafValue(forKey: key, root: root, layout: layout)
    }

    /// A number that grows with the key, for guessing its place among numbered keys: an
    /// integer key's value; for a byte key of a tag byte and an 8-byte big-endian number (an
    /// integer primary key), the number, with the tag (keys compare as numbers only under the
    /// same tag). Nil for any other key.
    @inline(__always)
    static func ordinal(of key: UnsafeRawBufferPointer, integerKeys: Bool)
        -> (tag: UInt8, number: UInt64)?
    {
        if integerKeys { return key.count == 8 ? (0, key.loadUnaligned(as: UInt64.self)) : nil }
        guard key.count == 9 else { return nil }
        return (key[0], UInt64(bigEndian: key.loadUnaligned(fromByteOffset: 1, as: UInt64.self)))
    }

    /// How the key `found` sorts against `key` in the tree's order (negative, zero, positive);
    /// nil for an integer key that is not 8 bytes long.
    @inline(__always)
    static func order(_ found: UnsafeRawBufferPointer, _ key: UnsafeRawBufferPointer, integerKeys: Bool)
        -> Int?
    {
        guard integerKeys else { return KeyOrder.compareBytes(found, key) }
        guard found.count == 8 else { return nil }
        let left = found.loadUnaligned(as: UInt64.self), right = key.loadUnaligned(as: UInt64.self)
        return left < right ? -1 : (left == right ? 0 : 1)
    }
}

extension PageLayout {
    /// The page numbered `number`, if it lies in the map and the file.
    @inline(__always)
    func page(numbered number: UInt64) -> TreePage? {
        let mapSize = UInt64(mapEnd &- mapStart)
        let (offset, overflow) = number.multipliedReportingOverflow(by: UInt64(pageSize))
        guard !overflow, offset < mapSize, mapSize &- offset >= UInt64(pageSize),
              let start = UnsafeRawPointer(bitPattern: mapStart &+ UInt(offset)),
              isReadable(start, count: pageSize)
        else { return nil }
        return TreePage(start: start, number: number, size: pageSize)
    }
}

extension TreePage {
    /// On a branch page: the number of the child whose subtree holds `key` (the last node whose
    /// key is not after it; the first node's key stands for every key before the second's).
    @inline(__always)
    fileprivate func child(coveringKey key: UnsafeRawBufferPointer, root: TreeRoot) -> UInt64? {
        guard let (count, upper) = checkedHeader(kind: PageFormat.branchFlag) else { return nil }
        // The first node from 1 on whose key is after `key`, in low...high.
        var low = 1, high = count
        if let guess = guessedChild(coveringKey: key, count: count, upper: upper, integerKeys: root.integerKeys) {
            (low, high) = (guess &+ 1, guess &+ 1)
        }
        while low < high {
            let middle = (low &+ high) >> 1
            guard let (found, _) = keyBytes(middle, upper: upper),
                  let order = TreeSearch.order(found, key, integerKeys: root.integerKeys)
            else { return nil }
            if order > 0 { high = middle } else { low = middle &+ 1 }
        }
        return childNumber(low &- 1, upper: upper)
    }

    /// On a branch page: the page number of node `index`'s child, if the node lies in the page.
    @inline(__always)
    func childNumber(_ index: Int, upper: Int) -> UInt64? {
        guard let offset = nodeOffset(index, upper: upper) else { return nil }
        // A branch node keeps its child's page number in its first six bytes, low words first.
        let page = UnsafeRawBufferPointer(start: start, count: size)
        return UInt64(page.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            | UInt64(page.loadUnaligned(fromByteOffset: offset &+ 2, as: UInt16.self)) << 16
            | UInt64(page.loadUnaligned(fromByteOffset: offset &+ 4, as: UInt16.self)) << 32
    }

    /// On a leaf page: the value stored under `key`, as ``TreeSearch/value(forKey:in:layout:)``.
    @inline(__always)
    fileprivate func leafValue(forKey key: UnsafeRawBufferPointer, root: TreeRoot, layout: PageLayout)
        -> UnsafeRawBufferPointer??
    {
        guard let (count, upper) = checkedHeader() else { return nil }
        // Numbered keys made in order (object keys, integer primary keys) are dense: the key's
        // place is its distance from the first key.
        if let wanted = TreeSearch.ordinal(of: key, integerKeys: root.integerKeys),
           let (firstKey, _) = keyBytes(0, upper: upper),
           let first = TreeSearch.ordinal(of: firstKey, integerKeys: root.integerKeys), first.tag == wanted.tag,
           wanted.number >= first.number, wanted.number &- first.number < UInt64(count)
        {
            let guess = Int(wanted.number &- first.number)
            guard let (found, offset) = keyBytes(guess, upper: upper) else { return nil }
            if TreeSearch.order(found, key, integerKeys: root.integerKeys) == 0 {
                return value(ofNodeAt: offset, keySize: found.count, layout: layout).map { .some($0) }
            }
        }
        guard let search = node(holding: key, count: count, upper: upper, integerKeys: root.integerKeys) else {
            return nil
        }
        guard let found = search else { return .some(nil) }
        return value(ofNodeAt: found.offset, keySize: found.keySize, layout: layout).map { .some($0) }
    }

    /// On a leaf page of `count` nodes: the node whose key is `key`, found by a binary search
    /// (keys compared as integers or in LMDB's byte order); `.some(nil)` when the page has no
    /// such key, nil for a node that is not sound. Shared with ``CachedBytesLeaf``.
    @inline(__always)
    func node(holding key: UnsafeRawBufferPointer, count: Int, upper: Int, integerKeys: Bool)
        -> (index: Int, offset: Int, keySize: Int)??
    {
        var low = 0, high = count &- 1
        while low <= high {
            let middle = (low &+ high) >> 1
            guard let (found, offset) = keyBytes(middle, upper: upper),
                  let order = TreeSearch.order(found, key, integerKeys: integerKeys)
            else { return nil }
            if order == 0 { return .some((middle, offset, found.count)) }
            if order < 0 { low = middle &+ 1 } else { high = middle &- 1 }
        }
        return .some(nil)
    }

    /// On a branch page: the child covering `key` found by guessing its place from the numbers
    /// of the second and last nodes' keys (``TreeSearch/ordinal(of:integerKeys:)``; leaves of
    /// keys made in order hold equal runs of them), checked against the keys either side; nil
    /// for keys without numbers, or when the guess is off.
    @inline(__always)
    private func guessedChild(coveringKey key: UnsafeRawBufferPointer, count: Int, upper: Int, integerKeys: Bool)
        -> Int?
    {
        guard count > 2, let wanted = TreeSearch.ordinal(of: key, integerKeys: integerKeys),
              let (secondKey, _) = keyBytes(1, upper: upper), let (lastKey, _) = keyBytes(count &- 1, upper: upper),
              let second = TreeSearch.ordinal(of: secondKey, integerKeys: integerKeys),
              let last = TreeSearch.ordinal(of: lastKey, integerKeys: integerKeys),
              second.tag == wanted.tag, last.tag == wanted.tag,
              wanted.number >= second.number, wanted.number < last.number
        else { return nil }
        // (key - second) / (last - second) of the way from node 1 to the last: below it.
        let scaled = (wanted.number &- second.number).multipliedFullWidth(by: UInt64(count &- 2))
        let guess = 1 &+ Int((last.number &- second.number).dividingFullWidth((scaled.high, scaled.low)).quotient)
        guard let (atGuess, _) = keyBytes(guess, upper: upper),
              let orderAt = TreeSearch.order(atGuess, key, integerKeys: integerKeys), orderAt <= 0,
              let (afterGuess, _) = keyBytes(guess &+ 1, upper: upper),
              let orderAfter = TreeSearch.order(afterGuess, key, integerKeys: integerKeys), orderAfter > 0
        else { return nil }
        return guess
    }
}
#endif

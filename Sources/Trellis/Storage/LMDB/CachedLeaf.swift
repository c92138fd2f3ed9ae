// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import Foundation

// Leaf pages kept by a read snapshot for the lookups that follow: a B-tree leaf holds every key
// from its first to its last, so a key in that range is on it or nowhere, and nearby lookups
// (links made in order, list elements, the collections of consecutive objects) read it in
// place instead of descending the tree again. A read snapshot's pages never change; a node
// that is not sound sends the lookup back to LMDB.

/// A leaf page LMDB just landed on, in the map, with a sound header: what both kinds of cached
/// leaf read their nodes from.
struct CheckedLeaf {
    let page: TreePage
    let layout: PageLayout
    let count: Int
    let upper: Int

    init?(holding keyAddress: UnsafeRawPointer?, layout: PageLayout?) {
        guard let layout, let page = layout.page(holding: keyAddress), let (count, upper) = page.checkedHeader()
        else { return nil }
        self.page = page
        self.layout = layout
        self.count = count
        self.upper = upper
    }
}

/// The leaf page a lookup by integer key landed on last (``Transaction/get(_:nearIntegerKey:)``):
/// a key in its range is found by a guess at its place (keys made in order are dense), else a
/// binary search.
struct CachedLeaf {
    let leaf: CheckedLeaf
    let firstKey: UInt64
    let lastKey: UInt64

    /// The leaf holding `keyAddress` (a key LMDB just returned), if its first and last nodes
    /// are sound too.
    init?(holding keyAddress: UnsafeRawPointer?, layout: PageLayout?) {
        guard let leaf = CheckedLeaf(holding: keyAddress, layout: layout),
              let first = leaf.page.key(0, upper: leaf.upper), let last = leaf.page.key(leaf.count &- 1, upper: leaf.upper),
              first <= last
        else { return nil }
        self.leaf = leaf
        firstKey = first
        lastKey = last
    }

    /// `.some(value)` for a key on this page, `.some(nil)` for a key in its range it does not
    /// hold (so no page does), nil when LMDB must answer (outside the range, or a node that is
    /// not sound).
    @inline(__always)
    func value(forKey key: UInt64) -> UnsafeRawBufferPointer?? {
        guard key >= firstKey, key <= lastKey else { return nil }
        let page = leaf.page, upper = leaf.upper, layout = leaf.layout, count = leaf.count
        let guess = key &- firstKey
        if guess < UInt64(count), let found = page.entry(Int(guess), upper: upper, layout: layout), found.key == key {
            return .some(found.value)
        }
        var low = 0, high = count &- 1
        while low <= high {
            let middle = (low &+ high) >> 1
            guard let found = page.key(middle, upper: upper) else { return nil }
            if found == key {
                guard let entry = page.entry(middle, upper: upper, layout: layout) else { return nil }
                return .some(entry.value)
            }
            if found < key { low = middle &+ 1 } else { high = middle &- 1 }
        }
        return .some(nil)
    }
}

/// The leaf page a lookup by byte key landed on last (``Transaction/get(_:nearKey:)``), for a
/// database in LMDB's default key order (``KeyOrder/compareBytes(_:_:)``): the collections'
/// headers and chunks, keyed by class, object and property.
struct CachedBytesLeaf {
    let leaf: CheckedLeaf
    let firstKey: UnsafeRawBufferPointer
    let lastKey: UnsafeRawBufferPointer

    /// The leaf holding `keyAddress` (a key LMDB just returned), if its first and last nodes
    /// are sound too.
    init?(holding keyAddress: UnsafeRawPointer?, layout: PageLayout?) {
        guard let leaf = CheckedLeaf(holding: keyAddress, layout: layout),
              let first = leaf.page.keyBytes(0, upper: leaf.upper),
              let last = leaf.page.keyBytes(leaf.count &- 1, upper: leaf.upper),
              KeyOrder.compareBytes(first.key, last.key) <= 0
        else { return nil }
        self.leaf = leaf
        firstKey = first.key
        lastKey = last.key
    }

    /// The node a lookup found last: lookups often ask for the keys that follow it (a list's
    /// header, then its chunk, then the next object's header).
    private var lastFound = -1

    /// As ``CachedLeaf/value(forKey:)``; tries the two nodes after the last one found first.
    mutating func value(forKey key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer?? {
        guard KeyOrder.compareBytes(key, firstKey) >= 0, KeyOrder.compareBytes(key, lastKey) <= 0 else { return nil }
        let page = leaf.page, upper = leaf.upper, layout = leaf.layout, count = leaf.count
        var guess = lastFound &+ 1
        while guess > 0, guess <= lastFound &+ 2, guess < count {
            guard let (found, offset) = page.keyBytes(guess, upper: upper) else { return nil }
            let order = KeyOrder.compareBytes(found, key)
            if order > 0 { break }
            if order == 0 {
                guard let value = page.value(ofNodeAt: offset, keySize: found.count, layout: layout) else { return nil }
                lastFound = guess
                return .some(value)
            }
            guess &+= 1
        }
        guard let search = page.node(holding: key, count: count, upper: upper, integerKeys: false) else { return nil }
        guard let node = search else { return .some(nil) }
        guard let value = page.value(ofNodeAt: node.offset, keySize: node.keySize, layout: layout) else { return nil }
        lastFound = node.index
        return .some(value)
    }
}
#endif

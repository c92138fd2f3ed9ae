/// Leaf pages read in place, for an embedder's hot paths (Trellis): a read transaction keeps the
/// leaf its last lookup landed on and answers the next nearby keys from it, and a scan walks
/// leaves page by page instead of stepping a cursor entry by entry.
///
/// A `LeafPage` is a committed page of the file, already verified against its checksum when it
/// was reached: a read transaction's pages never change, so it stays valid (and its bytes
/// unchanged) until that transaction ends. Every read from it is still bounds-checked; a cell
/// that does not fit its page reads as "ask the tree" (`LeafLookup.elsewhere`) or throws
/// `corruptFile`, never traps.
public struct LeafPage {
    let view: PageView
    /// The number of entries on the page (at least one).
    public let count: Int

    init(_ view: PageView) {
        self.view = view
        count = view.count
    }

    /// The key of entry `index`, in place.
    @inline(__always)
    public func key(at index: Int) throws -> UnsafeRawBufferPointer { try view.key(at: index) }

    /// The value of entry `index` in place, or nil when it is kept in an overflow run (read it
    /// through the tree: `TreeAccess.withValue(forKey:)`).
    @inline(__always)
    public func inlineValue(at index: Int) throws -> UnsafeRawBufferPointer? { try entry(at: index).inlineValue }

    /// Entry `index` in place: its key, and its value unless an overflow run holds it (nil: read
    /// it through the tree, `TreeAccess.withValue(forKey:)`). One read of the cell where
    /// `key(at:)` and `inlineValue(at:)` take two.
    @inline(__always)
    public func entry(at index: Int) throws -> (key: UnsafeRawBufferPointer, inlineValue: UnsafeRawBufferPointer?) {
        let entry = try view.leafEntry(at: index)
        guard case .inline(let bytes) = entry.value else { return (entry.key, nil) }
        return (entry.key, bytes)
    }

    /// Appends every entry of the page, in key order, to `keys` (each key's first 8 bytes as a
    /// native integer, 0 for a shorter key: integer-keyed trees) and `values` (in place): one
    /// call per page for an embedder's scans, where `entry(at:)` is one call per entry. A value
    /// kept in an overflow run is asked of `overflowValue` with its key (nil: the entry is left
    /// out). Throws `corruptFile` for a damaged cell, as `entry(at:)` does.
    public func appendIntegerKeyedEntries(keys: inout [UInt64], values: inout [UnsafeRawBufferPointer],
                                          overflowValue: (UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer?) throws {
        keys.reserveCapacity(keys.count &+ count)
        values.reserveCapacity(values.count &+ count)
        for index in 0..<count {
            let entry = try view.leafEntry(at: index)
            switch entry.value {
            case .inline(let bytes):
                values.append(bytes)
            case .overflow:
                guard let bytes = try overflowValue(entry.key) else { continue }
                values.append(bytes)
            }
            keys.append(entry.key.count >= 8 ? entry.key.loadUnaligned(as: UInt64.self) : 0)
        }
    }

    /// The index of the first key >= `key`, and whether it is equal.
    @inline(__always)
    public func lowerBound(_ key: UnsafeRawBufferPointer, order: KeyOrder) throws -> (index: Int, found: Bool) {
        try view.lowerBound(key, order: order)
    }
}

/// What a kept leaf knows about a key.
public enum LeafLookup {
    /// The key is on the page; its value, in place.
    case found(UnsafeRawBufferPointer)
    /// The key lies between the page's first and last keys and is not on it: no page holds it.
    case absent
    /// The page cannot answer (the key is outside its range, the value is in an overflow run,
    /// or a cell is damaged): ask the tree.
    case elsewhere
}

/// A leaf page of an integer-keyed tree (8-byte keys) with its first and last keys, for lookups
/// of keys made in order (links, list elements): a key in its range is found at its guessed place
/// (dense keys) or by a binary search.
public struct KeptIntegerLeaf {
    public let page: LeafPage
    public let firstKey: UInt64
    public let lastKey: UInt64

    /// The page, if its first and last keys are sound 8-byte keys in order.
    public init?(_ page: LeafPage) {
        guard let first = try? page.key(at: 0), first.count == 8,
              let last = try? page.key(at: page.count &- 1), last.count == 8
        else { return nil }
        let firstKey = first.loadUnaligned(as: UInt64.self), lastKey = last.loadUnaligned(as: UInt64.self)
        guard firstKey <= lastKey else { return nil }
        self.page = page
        self.firstKey = firstKey
        self.lastKey = lastKey
    }

    /// The value of `key` (native byte order, as the tree orders it) if this page can tell.
    @inline(__always)
    public func lookup(_ key: UInt64) -> LeafLookup {
        guard key >= firstKey, key <= lastKey else { return .elsewhere }
        let guess = key &- firstKey
        if guess < UInt64(page.count), let found = try? page.entry(at: Int(guess)), found.key.count == 8,
           found.key.loadUnaligned(as: UInt64.self) == key
        {
            guard let value = found.inlineValue else { return .elsewhere }
            return .found(value)
        }
        var search = key
        return withUnsafeBytes(of: &search) { bytes in
            guard let (index, found) = try? page.lowerBound(bytes, order: .integer) else { return .elsewhere }
            return found ? value(at: index) : .absent
        }
    }

    @inline(__always)
    private func value(at index: Int) -> LeafLookup {
        guard let value = try? page.entry(at: index).inlineValue else { return .elsewhere }
        return .found(value)
    }
}

/// A leaf page of a byte-ordered tree with its first and last keys in place, and the entry its
/// last lookup found: lookups often ask for the keys that follow it (a list's header, then its
/// chunk, then the next object's header).
public struct KeptBytesLeaf {
    public let page: LeafPage
    private let firstKey: UnsafeRawBufferPointer
    private let lastKey: UnsafeRawBufferPointer
    private var lastFound = -1

    public init?(_ page: LeafPage) {
        guard let first = try? page.key(at: 0), let last = try? page.key(at: page.count &- 1),
              KeyOrder.compareBytes(first, last) <= 0
        else { return nil }
        self.page = page
        firstKey = first
        lastKey = last
    }

    /// The value of `key` if this page can tell: the two entries after the one found last are
    /// compared first, then the page is searched.
    @inline(__always)
    public mutating func lookup(_ key: UnsafeRawBufferPointer) -> LeafLookup {
        guard KeyOrder.compareBytes(key, firstKey) >= 0, KeyOrder.compareBytes(key, lastKey) <= 0 else { return .elsewhere }
        var next = lastFound &+ 1
        while next > 0, next <= lastFound &+ 2, next < page.count {
            guard let entry = try? page.entry(at: next) else { return .elsewhere }
            let order = KeyOrder.compareBytes(entry.key, key)
            if order > 0 { break }
            if order == 0 {
                lastFound = next
                guard let value = entry.inlineValue else { return .elsewhere }
                return .found(value)
            }
            next &+= 1
        }
        guard let (index, found) = try? page.lowerBound(key, order: .bytes) else { return .elsewhere }
        guard found else { return .absent }
        lastFound = index
        guard let value = try? page.entry(at: index).inlineValue else { return .elsewhere }
        return .found(value)
    }
}

extension TreeAccess {
    /// Whether the tree's pages are all committed and stay so while the transaction lives (a
    /// read transaction): then `leaf(containing:)` and `forEachLeaf` read them in place.
    @inline(__always)
    public var readsLeavesInPlace: Bool { !tracksChanges }

    /// The leaf page where `key` is or would be, in a read transaction; nil for an empty tree or
    /// in a write transaction (whose trees change). Throws `corruptFile` for a damaged page.
    public func leaf(containing key: UnsafeRawBufferPointer) throws -> LeafPage? {
        guard !tracksChanges else { return nil }
        guard isAlive else { throw StorageError.misuse("a transaction was used after it ended") }
        guard case .clean(var reference) = tree.root else { return nil }
        let depth = tree.depth, order = tree.order
        var levelNumber = 1
        while true {
            let view = try snapshot.treePage(reference, level: levelNumber, depth: depth)
            if levelNumber == depth { return LeafPage(view) }
            let (index, found) = try view.lowerBound(key, order: order)
            reference = try view.child(at: found ? index : index &- 1)
            levelNumber &+= 1
        }
    }

    /// Calls `body` with every leaf page of the tree in key order, in a read transaction, and
    /// returns true; returns false (calling nothing) in a write transaction, whose trees a cursor
    /// walks instead. Throws `corruptFile` for a damaged page.
    public func forEachLeaf(_ body: (LeafPage) throws -> Void) throws -> Bool {
        guard !tracksChanges else { return false }
        guard isAlive else { throw StorageError.misuse("a transaction was used after it ended") }
        guard case .clean(let root) = tree.root else { return true }
        try visit(root, level: 1, body)
        return true
    }

    private func visit(_ reference: PageReference, level: Int, _ body: (LeafPage) throws -> Void) throws {
        let depth = tree.depth
        let view = try snapshot.treePage(reference, level: level, depth: depth)
        if level == depth {
            try body(LeafPage(view))
            return
        }
        for index in 0..<view.count { try visit(try view.child(at: index), level: level &+ 1, body) }
    }
}

/// A position in a tree, moved forwards and backwards in key order.
///
/// In a read transaction the key and value are read in place from the memory map. In a write
/// transaction a cursor survives changes to its tree: after a change it finds its key again
/// (`next()` then goes to the first key after it, `previous()` to the last key before it).
/// A cursor is valid until its transaction ends.
public final class Cursor {
    private let tree: TreeState
    private let snapshot: Snapshot
    private let isAlive: () -> Bool
    // Not checked for exclusive access at run time: a cursor is used by one thread at a time
    // and hands out no reference to these.
    @exclusivity(unchecked) private var stack: [(level: TreeLevel, index: Int)] = []
    @exclusivity(unchecked) private var version: Int
    /// The key the cursor stands on, kept in a write transaction to find its place again after a
    /// change: in place in a committed page (whose bytes stay as they are until the write
    /// transaction ends: pages are written only at commit), or copied into `savedKey` from a
    /// dirty page (whose bytes move when the page changes).
    @exclusivity(unchecked) private var positionKey: SavedKey?
    /// The cursor's copy of a dirty page's key (allocated on first use, keys <= 511 bytes).
    @exclusivity(unchecked) private var savedKey: UnsafeMutableRawPointer?

    private struct SavedKey {
        let bytes: UnsafeRawBufferPointer

        @inline(__always)
        func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try body(bytes) }
    }
    private let tracksChanges: Bool

    init(tree: TreeState, snapshot: Snapshot, tracksChanges: Bool, isAlive: @escaping () -> Bool) {
        self.tree = tree
        self.snapshot = snapshot
        self.tracksChanges = tracksChanges
        self.isAlive = isAlive
        version = tree.version
    }

    deinit { savedKey?.deallocate() }

    private var reader: TreeReader { TreeReader(snapshot: snapshot, order: tree.order, depth: tree.depth) }

    private enum Target {
        case first
        case last
        case atLeast(UnsafeRawBufferPointer)
    }

    private func checkAlive() throws {
        guard isAlive() else { throw StorageError.misuse("a cursor was used after its transaction ended") }
    }

    /// Walks from the root to a leaf, toward `target`; the index may be one past the leaf's end.
    private func descend(_ target: Target) throws {
        stack.removeAll(keepingCapacity: true)
        version = tree.version
        guard var current = tree.root else { return }
        let reader = reader
        var levelNumber = 1
        while true {
            let level = try reader.level(current, atDepth: levelNumber)
            let index: Int
            switch target {
            case .first: index = 0
            case .last: index = level.count - 1
            case .atLeast(let key):
                let (bound, found) = try level.lowerBound(key, order: tree.order)
                index = level.isLeaf || found ? bound : bound - 1
            }
            stack.append((level, index))
            if level.isLeaf { return }
            current = try level.child(at: index)
            levelNumber += 1
        }
    }

    private var isPositioned: Bool {
        guard let top = stack.last else { return false }
        return top.index >= 0 && top.index < top.level.count
    }

    private func remember() throws -> Bool {
        guard isPositioned else {
            positionKey = nil
            return false
        }
        if tracksChanges, let top = stack.last {
            switch top.level {
            case .page(let view): positionKey = SavedKey(bytes: try view.key(at: top.index))
            case .buffer(let page): positionKey = SavedKey(bytes: copyKey(try page.view.key(at: top.index)))
            }
        }
        return true
    }

    /// `key` copied into the cursor's own buffer.
    private func copyKey(_ key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let buffer = savedKey ?? UnsafeMutableRawPointer.allocate(byteCount: StorageLimits.maximumKeyLength, alignment: 8)
        savedKey = buffer
        let count = min(key.count, StorageLimits.maximumKeyLength)
        if let source = key.baseAddress { buffer.copyMemory(from: source, byteCount: count) }
        return UnsafeRawBufferPointer(start: buffer, count: count)
    }

    /// Moves to the next leaf entry from the current stack (which may point one past a leaf).
    private func stepForward() throws -> Bool {
        guard !stack.isEmpty else { return false }
        stack[stack.count - 1].index += 1
        if isPositioned { return true }
        // Climb to a level with a next child, then take the leftmost path below it.
        var depth = stack.count - 1
        while depth > 0 {
            depth -= 1
            if stack[depth].index + 1 < stack[depth].level.count {
                stack[depth].index += 1
                stack.removeSubrange((depth + 1)...)
                let reader = reader
                var current = try stack[depth].level.child(at: stack[depth].index)
                while true {
                    let level = try reader.level(current, atDepth: stack.count + 1)
                    stack.append((level, 0))
                    if level.isLeaf { break }
                    current = try level.child(at: 0)
                }
                return isPositioned
            }
        }
        return false
    }

    private func stepBackward() throws -> Bool {
        guard !stack.isEmpty else { return false }
        stack[stack.count - 1].index -= 1
        if isPositioned { return true }
        var depth = stack.count - 1
        while depth > 0 {
            depth -= 1
            if stack[depth].index > 0 {
                stack[depth].index -= 1
                stack.removeSubrange((depth + 1)...)
                let reader = reader
                var current = try stack[depth].level.child(at: stack[depth].index)
                while true {
                    let level = try reader.level(current, atDepth: stack.count + 1)
                    stack.append((level, level.count - 1))
                    if level.isLeaf { break }
                    current = try level.child(at: level.count - 1)
                }
                return isPositioned
            }
        }
        return false
    }

    // MARK: - Moving

    /// Moves to the first key; false when the tree is empty.
    @discardableResult
    public func first() throws -> Bool {
        try checkAlive()
        try descend(.first)
        return try remember()
    }

    /// Moves to the last key; false when the tree is empty.
    @discardableResult
    public func last() throws -> Bool {
        try checkAlive()
        try descend(.last)
        return try remember()
    }

    /// Moves to the first key >= `key` (LMDB's `MDB_SET_RANGE`); false when there is none.
    @discardableResult
    public func seek(atLeast key: [UInt8]) throws -> Bool {
        try checkAlive()
        try key.withUnsafeBytes { try descend(.atLeast($0)) }
        if !isPositioned && !stack.isEmpty { _ = try stepForward() }
        return try remember()
    }

    /// Moves to the first key >= `key`, given as bytes the caller holds; false when there is none.
    @discardableResult
    public func seek(atLeast key: UnsafeRawBufferPointer) throws -> Bool {
        try checkAlive()
        try descend(.atLeast(key))
        if !isPositioned && !stack.isEmpty { _ = try stepForward() }
        return try remember()
    }

    /// Moves to `key` exactly, given as bytes the caller holds; false (and unpositioned) when it
    /// is not in the tree.
    @discardableResult
    public func seek(exactly key: UnsafeRawBufferPointer) throws -> Bool {
        guard try seek(atLeast: key) else { return false }
        let equal = try withKeyUnchecked { tree.order.compare($0, key) == 0 }
        if !equal {
            stack.removeAll()
            positionKey = nil
        }
        return equal
    }

    /// Moves to `key` exactly; false (and unpositioned) when it is not in the tree.
    @discardableResult
    public func seek(exactly key: [UInt8]) throws -> Bool {
        guard try seek(atLeast: key) else { return false }
        let equal = try withKeyUnchecked { current in key.withUnsafeBytes { tree.order.compare(current, $0) == 0 } }
        if !equal {
            stack.removeAll()
            positionKey = nil
        }
        return equal
    }

    /// Moves to the next key; false (and unpositioned) past the last.
    @discardableResult
    public func next() throws -> Bool {
        try checkAlive()
        if tracksChanges && version != tree.version {
            guard let key = positionKey else { return false }
            try key.withUnsafeBytes { try descend(.atLeast($0)) }
            if !isPositioned { _ = try stepForward() }
            guard isPositioned else { return try remember() }
            let same = try withKeyUnchecked { current in key.withUnsafeBytes { tree.order.compare(current, $0) == 0 } }
            if !same { return try remember() }
        }
        guard isPositioned else { return false }
        _ = try stepForward()
        return try remember()
    }

    /// Moves to the previous key; false (and unpositioned) before the first.
    @discardableResult
    public func previous() throws -> Bool {
        try checkAlive()
        if tracksChanges && version != tree.version {
            guard let key = positionKey else { return false }
            try key.withUnsafeBytes { try descend(.atLeast($0)) }
            if stack.isEmpty { return try remember() }
            if !isPositioned {
                // Past the end of its leaf: the key before is the leaf's last.
                stack[stack.count - 1].index = stack[stack.count - 1].level.count
            }
        }
        guard !stack.isEmpty, stack[stack.count - 1].index <= stack[stack.count - 1].level.count,
              stack[stack.count - 1].index >= 0 else { return false }
        _ = try stepBackward()
        return try remember()
    }

    // MARK: - Reading

    private func withKeyUnchecked<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard let top = stack.last, isPositioned else {
            throw StorageError.misuse("the cursor is not on an entry")
        }
        return try top.level.withKey(at: top.index, body)
    }

    private func ensureCurrent() throws {
        try checkAlive()
        if tracksChanges && version != tree.version {
            guard let key = positionKey else { throw StorageError.misuse("the cursor is not on an entry") }
            // A copy: seeking remembers the key it lands on in `savedKey`, which may hold `key`.
            _ = try seek(exactly: Array(key.bytes))
        }
    }

    /// The current key, lent to `body` (in place in a read transaction).
    public func withKey<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try ensureCurrent()
        return try withKeyUnchecked(body)
    }

    /// The current value, lent to `body` (in place in a read transaction).
    public func withValue<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try ensureCurrent()
        guard let top = stack.last, isPositioned else { throw StorageError.misuse("the cursor is not on an entry") }
        return try reader.withValue(of: top.level, at: top.index) { bytes in
            guard let bytes else { throw StorageError.misuse("the cursor is not on an entry") }
            return try body(bytes)
        }
    }

    /// A copy of the current key.
    public func key() throws -> [UInt8] { try withKey { Array($0) } }

    /// A copy of the current value.
    public func value() throws -> [UInt8] { try withValue { Array($0) } }
}

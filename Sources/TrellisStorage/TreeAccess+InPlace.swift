/// Reads for an embedder that keeps its own handle per tree (Trellis): a `TreeAccess` taken once
/// per transaction and tree, then point reads and cursors with keys it already holds as bytes,
/// without naming the tree or copying the key into an array for each read.
extension TreeAccess {
    /// The number of entries of the tree as its transaction sees it (O(1)).
    public var entryCount: UInt64 { tree.count }

    /// The tree's key order.
    public var keyOrder: KeyOrder { tree.order }

    /// The value under `key`, lent to `body` (nil when absent).
    ///
    /// In a read transaction the bytes are the file's, in place in the memory map: they stay
    /// valid (unchanged) until the transaction ends, not only inside `body`. In a write
    /// transaction they may be the transaction's own copy of a page, valid until the tree next
    /// changes. Throws `corruptFile` for a page that fails its checksum.
    @inline(__always)
    public func withValue<R>(forKey key: UnsafeRawBufferPointer,
                             _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        guard isAlive else { throw StorageError.misuse("a transaction was used after it ended") }
        let reader = TreeReader(snapshot: snapshot, order: tree.order, depth: tree.depth)
        return try reader.withValue(root: tree.root, key: key, body)
    }

    /// The value under `key` in place, or nil: what ``withValue(forKey:_:)`` lends, without a
    /// generic closure (an embedder's point reads call it across the module boundary, where a
    /// generic method is not specialized). Same lifetime rules.
    public func value(forKey key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        guard isAlive else { throw StorageError.misuse("a transaction was used after it ended") }
        return try TreeReader(snapshot: snapshot, order: tree.order, depth: tree.depth).value(root: tree.root, key: key)
    }

    /// A cursor over the tree, valid until the transaction ends (what `TreeReading.cursor(_:)`
    /// gives, without looking the tree up by name).
    public func makeCursor() -> Cursor {
        Cursor(tree: tree, snapshot: snapshot, tracksChanges: tracksChanges) { [self] in isAlive }
    }
}

extension WriteTransaction {
    /// The names of all trees as this transaction sees them (trees it created included, trees it
    /// dropped left out), in byte order.
    public func treeNames() throws -> [String] {
        var names = Set<String>()
        let catalogState = TreeState(name: "", descriptor: TreeDescriptor(
            root: snapshot.meta.catalog, count: 0, order: .bytes, depth: Int(snapshot.meta.catalogDepth)))
        let cursor = Cursor(tree: catalogState, snapshot: snapshot, tracksChanges: false) { true }
        var more = try cursor.first()
        while more {
            names.insert(String(decoding: try cursor.key(), as: UTF8.self))
            more = try cursor.next()
        }
        var present: [String] = []
        for name in names.union(createdOrChangedTreeNames) where try tree(name) != nil { present.append(name) }
        return present.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }
}

/// What an embedder reports about a file: its size in pages and who still reads old commits.
public struct StorageStatus: Sendable, Equatable {
    /// The newest commit.
    public var txnID: UInt64
    /// The oldest commit a live read transaction of any process reads (nil: none).
    public var oldestReader: UInt64?
    /// The pages the newest commit counts (its high-water mark), header and meta slots included.
    public var pageCount: UInt64
}

extension StorageEnvironment {
    /// The newest commit, the oldest one still read, and the file's high-water mark.
    public func status() throws -> StorageStatus {
        let meta = try currentMeta()
        let oldest = try readers.withLock { readers.oldestReader() }
        return StorageStatus(txnID: meta.txnID, oldestReader: oldest, pageCount: meta.pageCount)
    }
}

/// What read and write transactions share: point reads and cursors on their named trees.
public protocol TreeReading: AnyObject {
    /// The tree `name` as this transaction sees it; throws `treeNotFound` when there is none and
    /// `misuse` after the transaction ended. The engine's hook for the methods below.
    func access(_ name: String) throws -> TreeAccess
}

/// A tree as one transaction reads it (opaque outside the engine). A class, kept by the
/// transaction for the tree it used last: a point read then costs one reference, not three.
public final class TreeAccess {
    let tree: TreeState
    let snapshot: Snapshot
    /// A write transaction's liveness; nil for a read transaction's access, which its
    /// transaction ends itself (`end()`), sparing an object per read transaction.
    private let liveness: Liveness?
    /// Set by the read transaction that made the access when it ends.
    var isEnded = false
    /// Write transactions' cursors follow later changes to the tree.
    let tracksChanges: Bool
    /// `searchedValue(forKey:indexing:)`'s searches of the tree, and its root read into memory
    /// once searched often (RootIndex.swift). Changed only by the one thread using the read
    /// transaction (`indexing`): not checked for exclusive access at run time.
    @exclusivity(unchecked) var searches = 0
    @exclusivity(unchecked) var rootIndex: RootIndex?

    init(tree: TreeState, snapshot: Snapshot, liveness: Liveness?, tracksChanges: Bool) {
        self.tree = tree
        self.snapshot = snapshot
        self.liveness = liveness
        self.tracksChanges = tracksChanges
    }

    deinit { rootIndex?.deallocate() }

    /// Whether the transaction that made the access is still open.
    @inline(__always)
    var isAlive: Bool { !isEnded && (liveness?.isAlive ?? true) }
}

extension TreeReading {
    /// The value under `key` in tree `name`, lent in place to `body` (nil when absent). The bytes
    /// are valid only inside `body`.
    public func withValue<R>(_ name: String, key: [UInt8], _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        let access = try access(name)
        let reader = TreeReader(snapshot: access.snapshot, order: access.tree.order, depth: access.tree.depth)
        return try key.withUnsafeBytes { try reader.withValue(root: access.tree.root, key: $0, body) }
    }

    /// A copy of the value under `key` in tree `name`, or nil.
    public func get(_ name: String, key: [UInt8]) throws -> [UInt8]? {
        try withValue(name, key: key) { $0.map { Array($0) } }
    }

    /// A cursor over tree `name`, valid until the transaction ends. In a write transaction it
    /// follows the tree through later changes.
    public func cursor(_ name: String) throws -> Cursor {
        let access = try access(name)
        return Cursor(tree: access.tree, snapshot: access.snapshot, tracksChanges: access.tracksChanges) {
            access.isAlive
        }
    }
}

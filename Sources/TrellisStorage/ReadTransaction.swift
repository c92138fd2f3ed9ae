/// Facts about a named tree.
public struct TreeInfo: Sendable, Equatable {
    /// The tree's name.
    public var name: String
    /// Its key order.
    public var order: KeyOrder
    /// Its number of entries.
    public var count: UInt64
    /// Its depth (0 for an empty tree).
    public var depth: Int
}

/// Lookups shared by read and write transactions: the catalog and the trees it names.
struct CatalogReader {
    let snapshot: Snapshot

    /// The descriptor of `name` in the catalog rooted at `root`, or nil.
    func descriptor(_ name: String, root: Child?, depth: Int) throws -> TreeDescriptor? {
        let reader = TreeReader(snapshot: snapshot, order: .bytes, depth: depth)
        let key = Array(name.utf8)
        return try key.withUnsafeBytes { keyBytes in
            try reader.withValue(root: root, key: keyBytes) { value in
                guard let value else { return nil }
                return try TreeDescriptor.decode(value, page: snapshot.meta.catalog?.page ?? 0)
            }
        }
    }
}

/// A snapshot of one commit. It sees nothing committed after it began, and never blocks the
/// writer. Values are read in place from the memory map and stay valid until `end()`.
public final class ReadTransaction: TreeReading {
    let snapshot: Snapshot
    /// The reader table holding this transaction's slot (kept alive until the slot is released,
    /// even past the environment's `close()`), and the environment's tree descriptors.
    private let readers: ReaderTable
    private let descriptors: DescriptorCache
    private let slot: Int
    // The properties below are not checked for exclusive access at run time (~250 instructions
    // per read transaction): a transaction is used by one thread at a time, and no method of
    // this type hands out a reference to them that could overlap another access.

    /// The trees read before the last one.
    @exclusivity(unchecked) private var trees: [String: TreeState] = [:]
    /// The tree read last: most reads name the same tree as the one before.
    @exclusivity(unchecked) private var lastTree: TreeState?
    /// The access `access(_:)` returned last, and the ones before it (ended with the transaction).
    @exclusivity(unchecked) private var lastAccess: TreeAccess?
    @exclusivity(unchecked) private var olderAccesses: [TreeAccess] = []
    @exclusivity(unchecked) private var isAlive = true

    /// This transaction's use of decrypted pages (Pager.beginUse; 0 for a plain file).
    private let epoch: UInt64

    init(readers: ReaderTable, descriptors: DescriptorCache, snapshot: Snapshot, slot: Int, epoch: UInt64) {
        self.epoch = epoch
        self.readers = readers
        self.descriptors = descriptors
        self.snapshot = snapshot
        self.slot = slot
    }

    deinit { end() }

    /// The commit this transaction reads.
    public var txnID: UInt64 { snapshot.meta.txnID }

    /// Whether ``end()`` was called (its snapshot may then be reused by writers).
    var hasEnded: Bool { !isAlive }

    /// Ends the transaction, releasing its snapshot. Its cursors and lent bytes become invalid.
    public func end() {
        guard isAlive else { return }
        isAlive = false
        lastAccess?.isEnded = true
        for access in olderAccesses { access.isEnded = true }
        readers.release(slot)
        snapshot.pager.endUse(epoch)
    }

    private func tree(_ name: String) throws -> TreeState? {
        guard isAlive else { throw StorageError.misuse("a read transaction was used after it ended") }
        if let lastTree, lastTree.name == name { return lastTree }
        if let state = trees[name] ?? snapshot.readTree(name) {
            remember(state)
            return state
        }
        let snapshot = snapshot
        let lookUp = {
            try CatalogReader(snapshot: snapshot).descriptor(name, root: snapshot.meta.catalog.map { .clean($0) },
                                                             depth: Int(snapshot.meta.catalogDepth))
        }
        let found = try descriptors.descriptor(name, catalog: snapshot.meta.catalog, load: lookUp)
        guard let descriptor = found else { return nil }
        let state = TreeState(name: name, descriptor: descriptor)
        snapshot.rememberReadTree(state)
        remember(state)
        return state
    }

    /// Makes `state` the last tree used; the one before goes to `trees` (a transaction reading
    /// one tree never builds the dictionary).
    private func remember(_ state: TreeState) {
        if let lastTree, lastTree !== state { trees[lastTree.name] = lastTree }
        lastTree = state
    }

    private func existingTree(_ name: String) throws -> TreeState {
        guard let state = try tree(name) else {
            throw StorageError(.treeNotFound(name), "TrellisStorage: there is no tree named '\(name)' in commit \(txnID).")
        }
        return state
    }

    /// Facts about the tree `name`, or nil if there is none.
    public func info(_ name: String) throws -> TreeInfo? {
        try tree(name).map { TreeInfo(name: $0.name, order: $0.order, count: $0.count, depth: $0.depth) }
    }

    /// The tree `name` for `withValue`, `get` and `cursor` (`TreeReading`).
    public func access(_ name: String) throws -> TreeAccess {
        if let lastAccess, lastAccess.tree.name == name, isAlive { return lastAccess }
        let tree = try existingTree(name)
        if let lastAccess { olderAccesses.append(lastAccess) }
        let access: TreeAccess
        if let index = olderAccesses.firstIndex(where: { $0.tree === tree }) {
            access = olderAccesses.remove(at: index)
        } else {
            access = TreeAccess(tree: tree, snapshot: snapshot, liveness: nil, tracksChanges: false)
        }
        lastAccess = access
        return access
    }

    /// The names of all trees, in byte order.
    public func treeNames() throws -> [String] {
        guard isAlive else { throw StorageError.misuse("a read transaction was used after it ended") }
        let catalog = TreeState(name: "", descriptor: TreeDescriptor(root: snapshot.meta.catalog, count: 0, order: .bytes,
                                                                      depth: Int(snapshot.meta.catalogDepth)))
        let cursor = Cursor(tree: catalog, snapshot: snapshot, tracksChanges: false) { true }
        var names: [String] = []
        var more = try cursor.first()
        while more {
            names.append(String(decoding: try cursor.key(), as: UTF8.self))
            more = try cursor.next()
        }
        return names
    }
}

/// Whether a transaction is still open (shared with its cursors).
final class Liveness {
    var isAlive = true
}

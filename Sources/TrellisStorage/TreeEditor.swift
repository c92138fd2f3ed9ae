/// The state of one tree during a transaction: its root (committed or copied), its size and
/// order, and a version that changes with every edit (cursors re-find their place by it).
final class TreeState {
    let name: String
    let order: KeyOrder
    // Not checked for exclusive access at run time (as `Node`'s): changed by one write
    // transaction on one thread; read transactions' trees never change.
    @exclusivity(unchecked) var root: Child?
    @exclusivity(unchecked) var count: UInt64
    @exclusivity(unchecked) var depth: Int
    @exclusivity(unchecked) var version = 0
    @exclusivity(unchecked) var isChanged = false
    /// A write transaction's copies of the keys and values put into this tree (made on the first
    /// put). One per tree: compacting it moves only this tree's bytes, so a value read from
    /// another tree stays valid ("until the tree next changes").
    @exclusivity(unchecked) private var storedBytes: ByteArena?

    /// The arena new keys and values of this tree are copied into.
    var arena: ByteArena {
        if let storedBytes { return storedBytes }
        let arena = ByteArena()
        storedBytes = arena
        return arena
    }

    init(name: String, descriptor: TreeDescriptor) {
        self.name = name
        order = descriptor.order
        root = descriptor.root.map { .clean($0) }
        count = descriptor.count
        depth = descriptor.depth
    }
}

/// Pages a write transaction stopped using (copied or deleted), to be recorded in the free list.
final class FreedPages {
    @exclusivity(unchecked) var pages: [UInt64] = []

    func free(_ reference: PageReference, pages count: Int = 1) {
        for offset in 0..<UInt64(count) { pages.append(reference.page + offset) }
    }
}

/// How `put` treats an existing key.
public enum PutMode: Sendable {
    /// Replace the value of an existing key.
    case upsert
    /// Fail with `keyExists` if the key is there (LMDB's `MDB_NOOVERWRITE`).
    case noOverwrite
    /// The key must sort after every key of the tree, else `keyExists` (LMDB's `MDB_APPEND`).
    case append
}

/// Copy-on-write edits of a tree: insert, replace and remove, with splits, merges and root
/// changes. Committed pages are copied into `Node`s the first time they change.
struct TreeEditor {
    let snapshot: Snapshot
    let freed: FreedPages

    /// The node for a child, copying a committed page (whose page is then free).
    func dirty(_ child: Child) throws -> Node {
        switch child {
        case .dirty(let node):
            return node
        case .clean(let reference):
            let node = try Node(copying: try snapshot.treePage(reference))
            freed.free(reference)
            return node
        }
    }

    private func release(_ value: NodeValue) {
        if case .overflow(let reference, let length) = value {
            freed.free(reference, pages: Layout.overflowPages(valueLength: length))
        }
    }

    /// Stores `value` under `key` (both copied into the tree's arena). Returns whether the key
    /// is new.
    func put(_ tree: TreeState, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, mode: PutMode) throws -> Bool {
        let isNew = try insert(tree, key: key, value: value, mode: mode)
        // The caller's key and value were copied; the tree changed, so its bytes may move.
        if tree.arena.needsCompaction, let root = tree.root { tree.arena.rewrite([root]) }
        return isNew
    }

    private func insert(_ tree: TreeState, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                        mode: PutMode) throws -> Bool {
        let arena = tree.arena
        guard let root = tree.root else {
            tree.root = .dirty(Node(isLeaf: true, keys: [arena.copy(key)], values: [.bytes(arena.copy(value))]))
            tree.depth = 1
            tree.count += 1
            tree.version += 1
            tree.isChanged = true
            return true
        }
        let node = try dirty(root)
        tree.root = .dirty(node)
        tree.isChanged = true
        tree.version += 1
        let added = try insert(into: node, key: key, value: value, mode: mode, order: tree.order, arena: arena)
        if let pieces = added.pieces, pieces.count > 1 {
            let newRoot = Node(isLeaf: false)
            for (index, piece) in pieces.enumerated() {
                newRoot.insertChild(at: index, key: index == 0 ? Node.noKey : piece.separator, child: .dirty(piece.node))
            }
            tree.root = .dirty(newRoot)
            tree.depth += 1
        }
        if added.isNew { tree.count += 1 }
        return added.isNew
    }

    private func insert(into node: Node, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, mode: PutMode,
                        order: KeyOrder, arena: ByteArena)
        throws -> (isNew: Bool, pieces: [(separator: UnsafeRawBufferPointer, node: Node)]?)
    {
        var isNew = true
        var atEnd = false
        if node.isLeaf {
            let (index, found): (Int, Bool)
            if mode == .append {
                // The key must sort after every key of the tree: this is the rightmost leaf
                // (see below), so after its last key. Checked before this leaf changes.
                guard let last = node.keys.last, order.compare(last, key) < 0 else {
                    throw StorageError(.keyExists, "TrellisStorage: append needs a key after the tree's last key.")
                }
                (index, found) = (node.count, false)
            } else {
                (index, found) = node.lowerBound(key, order: order)
            }
            if found {
                if mode != .upsert {
                    throw StorageError(.keyExists, "TrellisStorage: the key is already in the tree")
                }
                release(node.values[index])
                node.replaceValue(at: index, with: .bytes(arena.copy(value)))
                isNew = false
            } else {
                node.insertLeaf(at: index, key: arena.copy(key), value: .bytes(arena.copy(value)))
                atEnd = index == node.count - 1
            }
        } else {
            // Appending goes down the rightmost path: a key after the last one is in its range.
            let index = mode == .append ? node.count - 1 : node.childIndex(for: key, order: order)
            let child = try dirty(node.children[index])
            node.children[index] = .dirty(child)
            let result = try insert(into: child, key: key, value: value, mode: mode, order: order, arena: arena)
            isNew = result.isNew
            let pieceCount = result.pieces?.count ?? 1
            for (offset, piece) in (result.pieces ?? []).enumerated().dropFirst() {
                node.insertChild(at: index + offset, key: piece.separator, child: .dirty(piece.node))
            }
            atEnd = index + pieceCount == node.count
        }
        if node.size > Layout.usable {
            return (isNew, node.split(appendedAtEnd: atEnd))
        }
        return (isNew, nil)
    }

    /// Removes `key` (which must be in the tree: the caller looked it up).
    func remove(_ tree: TreeState, key: UnsafeRawBufferPointer) throws {
        guard let root = tree.root else { return }
        let node = try dirty(root)
        tree.root = .dirty(node)
        tree.isChanged = true
        tree.version += 1
        try remove(from: node, key: key, order: tree.order)
        if tree.count > 0 { tree.count -= 1 }
        // Shrink the root: an empty tree has no pages, a branch with one child gives way to it.
        var current = node
        while true {
            if current.count == 0 {
                tree.root = nil
                tree.depth = 0
                return
            }
            if current.isLeaf || current.count > 1 { break }
            let only = try dirty(current.children[0])
            current = only
            tree.root = .dirty(only)
            tree.depth -= 1
        }
    }

    private func remove(from node: Node, key: UnsafeRawBufferPointer, order: KeyOrder) throws {
        if node.isLeaf {
            let (index, found) = node.lowerBound(key, order: order)
            guard found else { return }
            release(node.values[index])
            node.removeEntry(at: index)
            return
        }
        let index = node.childIndex(for: key, order: order)
        let child = try dirty(node.children[index])
        node.children[index] = .dirty(child)
        try remove(from: child, key: key, order: order)
        if child.count == 0 {
            node.removeEntry(at: index)
        } else if child.size < Layout.underfull || (!child.isLeaf && child.count < 2) {
            try rebalance(node, at: index)
        }
    }

    /// Merges the child at `index` with a neighbour, or shares their entries when both do not
    /// fit one page.
    private func rebalance(_ parent: Node, at index: Int) throws {
        guard parent.count >= 2 else { return }
        let leftIndex = index > 0 ? index - 1 : index
        let rightIndex = leftIndex + 1
        let left = try dirty(parent.children[leftIndex])
        let right = try dirty(parent.children[rightIndex])
        parent.children[leftIndex] = .dirty(left)
        parent.children[rightIndex] = .dirty(right)
        let merged = Node(isLeaf: left.isLeaf)
        if left.isLeaf {
            merged.keys = left.keys + right.keys
            merged.values = left.values + right.values
        } else {
            var rightKeys = right.keys
            if !rightKeys.isEmpty { rightKeys[0] = parent.keys[rightIndex] }
            merged.keys = left.keys + rightKeys
            merged.children = left.children + right.children
        }
        merged.recomputeSize()
        if merged.size <= Layout.usable {
            parent.children[leftIndex] = .dirty(merged)
            parent.removeEntry(at: rightIndex)
            return
        }
        let pieces = merged.split(appendedAtEnd: false)
        parent.children[leftIndex] = .dirty(pieces[0].node)
        parent.children[rightIndex] = .dirty(pieces[1].node)
        parent.setKey(at: rightIndex, pieces[1].separator)
        for (offset, piece) in pieces.enumerated().dropFirst(2) {
            parent.insertChild(at: leftIndex + offset, key: piece.separator, child: .dirty(piece.node))
        }
    }

    /// Frees every page of a tree (when it is dropped or emptied).
    func freeAll(_ child: Child, depth: Int) throws {
        guard depth <= 64 else { throw StorageError.corrupt(page: 0, "a tree deeper than 64 levels") }
        switch child {
        case .dirty(let node):
            if node.isLeaf {
                for value in node.values { release(value) }
            } else {
                for child in node.children { try freeAll(child, depth: depth + 1) }
            }
        case .clean(let reference):
            let view = try snapshot.treePage(reference)
            freed.free(reference)
            for index in 0..<view.count {
                if view.isLeaf {
                    if case .overflow(let run, let length) = try view.value(at: index) {
                        freed.free(run, pages: Layout.overflowPages(valueLength: length))
                    }
                } else {
                    try freeAll(.clean(try view.child(at: index)), depth: depth + 1)
                }
            }
        }
    }
}

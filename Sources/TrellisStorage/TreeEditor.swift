/// The state of one tree during a transaction: its root (committed or copied), its size and
/// order, and a version that changes with every edit (cursors re-find their place by it).
final class TreeState {
    let name: String
    let order: KeyOrder
    // Not checked for exclusive access at run time (as `TreePages`'): changed by one write
    // transaction on one thread; read transactions' trees never change.
    @exclusivity(unchecked) var root: Child?
    @exclusivity(unchecked) var count: UInt64
    @exclusivity(unchecked) var depth: Int
    @exclusivity(unchecked) var version = 0
    @exclusivity(unchecked) var isChanged = false
    /// Set when the write transaction drops the tree (`dropTree`): a tree of the same name made
    /// later is another state (see `WriteTransaction.put(_:key:value:mode:)` through an access).
    @exclusivity(unchecked) var isDropped = false
    /// Whether the last put landed after the last key of its leaf: the next put then first
    /// compares its key with the last key of each page on its way down (ascending keys, as a
    /// bulk insert's primary keys and backlinks are, skip the searches). Only a hint: the
    /// comparison decides, and a key not past a page's last key is searched for as before.
    @exclusivity(unchecked) var lastPutAtEnd = false
    /// A write transaction's dirty pages and kept values of this tree (made on the first change).
    @exclusivity(unchecked) private var storedPages: TreePages?

    /// The memory this tree's changes live in until commit.
    var pages: TreePages {
        if let storedPages { return storedPages }
        let pages = TreePages()
        storedPages = pages
        return pages
    }

    init(name: String, descriptor: TreeDescriptor) {
        self.name = name
        order = descriptor.order
        root = descriptor.root.map { .clean($0) }
        count = descriptor.count
        depth = descriptor.depth
    }

    /// After the commit that wrote the tree's root as `written` published: the state is the
    /// committed tree's, for the next write transaction (`CarriedTrees`).
    func settle(root written: PageReference?) {
        root = written.map { .clean($0) }
        version += 1
        isChanged = false
        storedPages?.settle(keeping: CarriedTrees.keptBuffers)
    }
}

/// Pages a write transaction stopped using (copied or deleted), to be recorded in the free list.
final class FreedPages {
    @exclusivity(unchecked) var pages: [UInt64] = []

    func free(_ reference: PageReference, pages count: Int = 1) {
        // Room for a small commit's freed pages, without regrowing from one.
        if pages.capacity == 0 { pages.reserveCapacity(16) }
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
/// changes. A committed page is copied into a `DirtyPage` the first time it changes, and edited
/// there in place (docs/STORAGE.md 3).
struct TreeEditor {
    let snapshot: Snapshot
    let freed: FreedPages

    /// The dirty page for a child, copying a committed page (whose page is then free): from
    /// the buffer this process's commit wrote it from when the tree still has it
    /// (`CommittedBuffer`), else from the map.
    func dirty(_ child: Child, in tree: TreeState) throws -> DirtyPage {
        switch child {
        case .dirty(let page):
            return page
        case .clean(let reference):
            let pages = tree.pages
            if let page = pages.takeCommitted(reference) {
                page.reopen()
                freed.free(reference)
                return page
            }
            let view = try snapshot.treePage(reference)
            let page = pages.newPage()
            do {
                try page.copy(view)
            } catch {
                pages.recycle(page)
                throw error
            }
            freed.free(reference)
            return page
        }
    }

    /// Frees what the value of leaf entry `index` references: an overflow run in the file, or a
    /// value the tree kept for commit.
    private func release(_ page: DirtyPage, at index: Int, in tree: TreeState) {
        let start = page.offset(index)
        guard page.base.loadLE(UInt16.self, at: start &+ 2) == Layout.overflowMarker else { return }
        let reference = start &+ Layout.leafCellHeader &+ Int(page.base.loadLE(UInt16.self, at: start))
        let run = page.base.loadLE(UInt64.self, at: reference)
        let length = Int(page.base.loadLE(UInt32.self, at: reference &+ 16))
        if run & DirtyPage.marker != 0 {
            tree.pages.retire(run, length: length)
        } else {
            freed.free(PageReference(page: run, checksum: page.base.loadLE(UInt64.self, at: reference &+ 8)),
                       pages: Layout.overflowPages(valueLength: length))
        }
    }

    /// The leaf cell for a key and value put into `page`: inline, or referencing a copy of the
    /// value kept until commit writes its overflow run.
    @inline(__always)
    private func leafCell(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, for page: DirtyPage,
                          in tree: TreeState) -> NewCell {
        guard Layout.isOverflow(keyLength: key.count, valueLength: value.count) else { return .leaf(key: key, value: value) }
        page.base.storeBytes(of: 1, toByteOffset: DirtyPage.pendingFlagOffset, as: UInt8.self)
        return .leafOverflow(key: key, page: tree.pages.keep(value), checksum: 0, length: value.count)
    }

    /// The child of a branch whose range holds `key`.
    @inline(__always)
    private func childIndex(_ page: DirtyPage, for key: UnsafeRawBufferPointer, order: KeyOrder) throws -> Int {
        let (index, found) = try page.view.lowerBound(key, order: order)
        return found ? index : index &- 1
    }

    // MARK: - Putting

    /// Stores `value` under `key` (both copied into the tree's pages). Returns whether the key is new.
    func put(_ tree: TreeState, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, mode: PutMode) throws -> Bool {
        guard let root = tree.root else {
            let page = tree.pages.newPage()
            page.initialize(isLeaf: true)
            _ = page.splice(at: 0, removing: 0, inserting: CollectionOfOne(leafCell(key, value, for: page, in: tree)))
            tree.root = .dirty(page)
            tree.depth = 1
            tree.count += 1
            tree.version += 1
            tree.isChanged = true
            return true
        }
        let page = try dirty(root, in: tree)
        tree.root = .dirty(page)
        tree.isChanged = true
        tree.version += 1
        let added = try insert(into: page, key: key, value: value, mode: mode, tree: tree)
        if let pieces = added.pieces { growRoot(tree, pieces) }
        if added.isNew { tree.count += 1 }
        return added.isNew
    }

    private func insert(into page: DirtyPage, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, mode: PutMode,
                        tree: TreeState) throws -> (isNew: Bool, pieces: Pieces?) {
        let order = tree.order
        if page.isLeaf {
            let count = page.count
            let (index, found): (Int, Bool)
            if mode == .append {
                // The key must sort after every key of the tree: this is the rightmost leaf
                // (see below), so after its last key. Checked before this leaf changes.
                guard count > 0, order.compare(page.key(at: count &- 1), key) < 0 else {
                    throw StorageError(.keyExists, "TrellisStorage: append needs a key after the tree's last key.")
                }
                (index, found) = (count, false)
            } else if tree.lastPutAtEnd, count > 0, order.compare(page.key(at: count &- 1), key) < 0 {
                (index, found) = (count, false)
            } else {
                (index, found) = try page.view.lowerBound(key, order: order)
                tree.lastPutAtEnd = index == count
            }
            if found && mode != .upsert {
                throw StorageError(.keyExists, "TrellisStorage: the key is already in the tree")
            }
            // Bytes the caller read from this page move as it changes: put a copy of them.
            if page.holds(key) || page.holds(value) {
                let keyCopy = Array(key), valueCopy = Array(value)
                return keyCopy.withUnsafeBytes { key in
                    valueCopy.withUnsafeBytes { putIntoLeaf(page, at: index, replacing: found, key: key, value: $0, tree: tree) }
                }
            }
            return putIntoLeaf(page, at: index, replacing: found, key: key, value: value, tree: tree)
        }
        // Appending goes down the rightmost path: a key after the last one is in its range.
        let index: Int
        let count = page.count
        if mode == .append {
            index = count &- 1
        } else if tree.lastPutAtEnd, count >= 2, order.compare(page.key(at: count &- 1), key) < 0 {
            // Past the last separator: the last child's range.
            index = count &- 1
        } else {
            tree.lastPutAtEnd = false
            index = try childIndex(page, for: key, order: order)
        }
        let child = try dirty(page.child(at: index), in: tree)
        page.setChild(at: index, .dirty(child))
        let result = try insert(into: child, key: key, value: value, mode: mode, tree: tree)
        guard let pieces = result.pieces else { return (result.isNew, nil) }
        let atEnd = index &+ 1 == page.count
        return (result.isNew, pieces.withCells { edit(page, at: index &+ 1, removing: 0, inserting: $0, appendedAtEnd: atEnd, tree: tree) })
    }

    private func putIntoLeaf(_ page: DirtyPage, at index: Int, replacing: Bool, key: UnsafeRawBufferPointer,
                             value: UnsafeRawBufferPointer, tree: TreeState) -> (isNew: Bool, pieces: Pieces?) {
        let cell = leafCell(key, value, for: page, in: tree)
        if replacing {
            release(page, at: index, in: tree)
            return (false, edit(page, at: index, removing: 1, inserting: CollectionOfOne(cell), appendedAtEnd: false, tree: tree))
        }
        let atEnd = index == page.count
        return (true, edit(page, at: index, removing: 0, inserting: CollectionOfOne(cell), appendedAtEnd: atEnd, tree: tree))
    }

    /// Makes the pieces of a split root the children of a new root (again while it splits).
    private func growRoot(_ tree: TreeState, _ pieces: Pieces) {
        var pieces = pieces
        while pieces.pages.count > 1 {
            let root = tree.pages.newPage()
            let first = pieces.pages[0].reference
            pieces = pieces.withCells { cells in
                let entries = [NewCell.branch(key: DirtyPage.noKey, page: first, checksum: 0)] + cells
                return distribute(entries, isLeaf: false, appendedAtEnd: false, into: [root], tree: tree)
            }
            tree.root = .dirty(root)
            tree.depth += 1
        }
    }

    // MARK: - Removing

    /// Removes `key` (which must be in the tree: the caller looked it up).
    func remove(_ tree: TreeState, key: UnsafeRawBufferPointer) throws {
        guard let root = tree.root else { return }
        let page = try dirty(root, in: tree)
        tree.root = .dirty(page)
        tree.isChanged = true
        tree.version += 1
        if let pieces = try remove(from: page, key: key, tree: tree) { growRoot(tree, pieces) }
        if tree.count > 0 { tree.count -= 1 }
        // Shrink the root: an empty tree has no pages, a branch with one child gives way to it.
        guard case .dirty(var current) = tree.root else { return }
        while true {
            if current.count == 0 {
                tree.pages.recycle(current)
                tree.root = nil
                tree.depth = 0
                return
            }
            if current.isLeaf || current.count > 1 { break }
            let only = try dirty(current.child(at: 0), in: tree)
            tree.pages.recycle(current)
            current = only
            tree.root = .dirty(only)
            tree.depth -= 1
        }
    }

    private func remove(from page: DirtyPage, key: UnsafeRawBufferPointer, tree: TreeState) throws -> Pieces? {
        if page.isLeaf {
            let (index, found) = try page.view.lowerBound(key, order: tree.order)
            guard found else { return nil }
            release(page, at: index, in: tree)
            _ = page.splice(at: index, removing: 1, inserting: EmptyCollection())
            return nil
        }
        let index = try childIndex(page, for: key, order: tree.order)
        let child = try dirty(page.child(at: index), in: tree)
        page.setChild(at: index, .dirty(child))
        // A child that took a longer separator from a rebalance below may have split.
        if let pieces = try remove(from: child, key: key, tree: tree) {
            return pieces.withCells { edit(page, at: index &+ 1, removing: 0, inserting: $0, appendedAtEnd: false, tree: tree) }
        }
        if child.count == 0 {
            tree.pages.recycle(child)
            page.removeBranchEntry(at: index)
            return nil
        }
        if child.size < Layout.underfull || (!child.isLeaf && child.count < 2) {
            return try rebalance(page, at: index, tree: tree)
        }
        return nil
    }

    /// Merges the child at `index` with a neighbour, or shares their entries when both do not
    /// fit one page. Returns the parent's pieces if its new separators made it split.
    private func rebalance(_ parent: DirtyPage, at index: Int, tree: TreeState) throws -> Pieces? {
        guard parent.count >= 2 else { return nil }
        let leftIndex = index > 0 ? index &- 1 : index
        let rightIndex = leftIndex &+ 1
        let left = try dirty(parent.child(at: leftIndex), in: tree)
        let right = try dirty(parent.child(at: rightIndex), in: tree)
        parent.setChild(at: leftIndex, .dirty(left))
        parent.setChild(at: rightIndex, .dirty(right))
        // Both pages are laid out again: their cells are read from copies.
        let source = UnsafeMutableRawPointer.allocate(byteCount: 2 * Layout.pageSize, alignment: 16)
        defer { source.deallocate() }
        source.copyMemory(from: left.base, byteCount: left.used)
        (source + Layout.pageSize).copyMemory(from: right.base, byteCount: right.used)
        let leftCopy = DirtyPage(base: source), rightCopy = DirtyPage(base: source + Layout.pageSize)
        var entries: [NewCell] = []
        entries.reserveCapacity(leftCopy.count &+ rightCopy.count)
        for entry in 0..<leftCopy.count { entries.append(leftCopy.cell(entry)) }
        for entry in 0..<rightCopy.count {
            if entry == 0 && !left.isLeaf {
                // The right page's first child takes the parent's separator as its key.
                let cell = rightCopy.base + rightCopy.offset(0)
                entries.append(.branch(key: parent.key(at: rightIndex), page: cell.loadLE(UInt64.self, at: 8),
                                       checksum: cell.loadLE(UInt64.self, at: 16)))
            } else {
                entries.append(rightCopy.cell(entry))
            }
        }
        let pieces = distribute(entries, isLeaf: left.isLeaf, appendedAtEnd: false, into: [left, right], tree: tree)
        if pieces.pages.count == 1 {
            parent.removeBranchEntry(at: rightIndex)
            return nil
        }
        return pieces.withCells { edit(parent, at: rightIndex, removing: 1, inserting: $0, appendedAtEnd: false, tree: tree) }
    }

    // MARK: - Splitting

    /// Replaces entries `index..<index + removing` of `page` with `cells`; when they do not fit,
    /// lays the entries out over `page` and new pages and returns them (nil: they fit).
    private func edit<C: Collection>(_ page: DirtyPage, at index: Int, removing: Int, inserting cells: C,
                                     appendedAtEnd: Bool, tree: TreeState) -> Pieces? where C.Element == NewCell {
        if page.splice(at: index, removing: removing, inserting: cells) { return nil }
        let source = PageBufferPool.shared.take()
        defer { PageBufferPool.shared.give(source) }
        source.copyMemory(from: page.base, byteCount: page.used)
        let copy = DirtyPage(base: source)
        var entries: [NewCell] = []
        entries.reserveCapacity(copy.count &+ cells.count)
        for entry in 0..<index { entries.append(copy.cell(entry)) }
        entries.append(contentsOf: cells)
        for entry in (index &+ removing)..<copy.count { entries.append(copy.cell(entry)) }
        let pieces = distribute(entries, isLeaf: page.isLeaf, appendedAtEnd: appendedAtEnd, into: [page], tree: tree)
        return pieces.pages.count > 1 ? pieces : nil
    }

    /// Lays `entries` out over `targets` (then new pages): on one page when they fit, else cut
    /// where the larger side is smallest, or into greedy pieces when no single cut fits. When the
    /// entries grew by one at their end (sequential inserts), a leaf is cut before that entry so
    /// that the left page stays full. Targets left over are recycled. No entry may be in a target.
    private func distribute(_ entries: [NewCell], isLeaf: Bool, appendedAtEnd: Bool, into targets: [DirtyPage],
                            tree: TreeState) -> Pieces {
        let count = entries.count
        var sizes: [Int] = []
        sizes.reserveCapacity(count)
        var total = 0
        for entry in entries {
            sizes.append(Layout.slotSize &+ entry.size)
            total &+= Layout.slotSize &+ entry.size
        }
        var cuts: [Int] = []
        if total > Layout.usable && count >= 2 {
            if appendedAtEnd && isLeaf && total - sizes[count - 1] <= Layout.usable && sizes[count - 1] <= Layout.usable {
                cuts = [count - 1]
            } else {
                var best = 1, bestLarger = Int.max, left = 0
                for cut in 1..<count {
                    left += sizes[cut - 1]
                    let larger = max(left, total - left)
                    if larger < bestLarger { bestLarger = larger; best = cut }
                }
                if bestLarger <= Layout.usable {
                    cuts = [best]
                } else {
                    var used = 0
                    for index in 0..<count {
                        if used + sizes[index] > Layout.usable && index > 0 { cuts.append(index); used = 0 }
                        used += sizes[index]
                    }
                }
            }
        }
        let bounds = [0] + cuts + [count]
        var pieces = Pieces()
        // The separators first: they are read from the entries, which writing no target changes.
        for piece in 1..<max(1, bounds.count - 1) {
            pieces.separators.append(contentsOf: entries[bounds[piece]].key(isLeaf: isLeaf))
            pieces.ends.append(pieces.separators.count)
        }
        for piece in 0..<(bounds.count - 1) {
            let page = piece < targets.count ? targets[piece] : tree.pages.newPage()
            var cells = entries[bounds[piece]..<bounds[piece + 1]]
            if !isLeaf, let first = cells.first { cells[cells.startIndex] = first.withoutKey() }
            page.fill(isLeaf: isLeaf, cells)
            if isLeaf { page.base.storeBytes(of: 1, toByteOffset: DirtyPage.pendingFlagOffset, as: UInt8.self) }
            pieces.pages.append(page)
        }
        for unused in targets.dropFirst(pieces.pages.count) { tree.pages.recycle(unused) }
        return pieces
    }

    // MARK: - Dropping

    /// Frees every page of a tree (when it is dropped or emptied).
    func freeAll(_ child: Child, depth: Int, in tree: TreeState) throws {
        guard depth <= 64 else { throw StorageError.corrupt(page: 0, "a tree deeper than 64 levels") }
        switch child {
        case .dirty(let page):
            for index in 0..<page.count {
                if page.isLeaf {
                    release(page, at: index, in: tree)
                } else {
                    try freeAll(page.child(at: index), depth: depth + 1, in: tree)
                }
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
                    try freeAll(.clean(try view.child(at: index)), depth: depth + 1, in: tree)
                }
            }
        }
    }
}

/// The pages a split laid entries out on (the first is the page that was edited), with the
/// separator each later one needs in its parent.
struct Pieces {
    var pages: [DirtyPage] = []
    /// The separators of `pages[1...]`, one after another; `ends[k]` is where that of `pages[k + 1]` ends.
    var separators: [UInt8] = []
    var ends: [Int] = []

    /// The branch cells naming `pages[1...]` with their separators, lent to `body`.
    func withCells<R>(_ body: ([NewCell]) throws -> R) rethrows -> R {
        try separators.withUnsafeBytes { bytes in
            var cells: [NewCell] = []
            cells.reserveCapacity(ends.count)
            var start = 0
            for (index, end) in ends.enumerated() {
                cells.append(.branch(key: UnsafeRawBufferPointer(rebasing: bytes[start..<end]),
                                     page: pages[index + 1].reference, checksum: 0))
                start = end
            }
            return try body(cells)
        }
    }
}

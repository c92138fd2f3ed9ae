/// The one write transaction of the file. Changes are private until `commit()`, which makes them
/// visible to new read transactions (and durable when the environment syncs on commit).
/// `abort()`, or dropping the transaction, discards them.
public final class WriteTransaction: TreeReading {
    let snapshot: Snapshot
    private let environment: StorageEnvironment
    let freed: FreedPages
    /// When free pages may be reused (docs/STORAGE.md, 2.9).
    private let reuseBound: ReuseBound
    /// Reusable records, read off the free tree as the commit needs pages.
    private let freeRecords: FreeRecordSource
    /// Pages in hand before the commit: the committed spares, and compaction's pulled records.
    private var pool: [UInt64]
    /// Reusable pages compaction keeps out of this commit's reach (recorded as free again).
    private var heldBack: [UInt64] = []
    /// The pages the commit before listed in its slot that this one may not reuse yet (readers
    /// or the durable commit may reach them): the commit records them in the free tree (2.10).
    private let waiting: FreedInSlot
    private var catalog: TreeState
    /// The well-formed meta slots when the transaction began, newest first (unchanged until it
    /// publishes: it holds the writer lock).
    private let slots: [(slot: Int, meta: MetaSlot)]
    // Not checked for exclusive access at run time: the transaction is used by one thread at a
    // time and hands out no reference to these.
    @exclusivity(unchecked) private var trees = TransactionTrees()
    /// The tree used last (reset when trees are created or dropped).
    @exclusivity(unchecked) private var lastTree: TreeState?
    /// `access(_:)` of `lastTree`.
    @exclusivity(unchecked) private var lastAccess: TreeAccess?
    @exclusivity(unchecked) private var dropped: Set<String> = []
    /// The trees the commit this transaction began on wrote or read (`CarriedTrees`), not used
    /// yet: a tree moves from here to `trees` when first used, so that `trees` holds only this
    /// transaction's trees, in the order it used them (its lookups by name search no others).
    @exclusivity(unchecked) private var carried: [TreeState] = []
    private let liveness = Liveness()
    /// This transaction's use of decrypted pages (Pager.beginUse), ended with it.
    private let epoch: UInt64

    /// In relaxed mode, a commit syncs once more free pages than this wait for a sync.
    static let checkpointPages = 1024

    /// - Parameters:
    ///   - oldestReader: the oldest snapshot a live reader holds (`UInt64.max`: none).
    ///   - durable: the newest durable commit, whose pages stay intact until the next sync.
    ///     The pages this process's commits wrote after it (`StorageEnvironment.pagesWritten`)
    ///     it cannot reach, so once freed they wait only for the readers.
    init(environment: StorageEnvironment, snapshot: Snapshot, slots: [(slot: Int, meta: MetaSlot)], oldestReader: UInt64,
         durable: UInt64, epoch: UInt64) throws
    {
        self.epoch = epoch
        self.slots = slots
        self.environment = environment
        self.snapshot = snapshot
        // The last commit's list, emptied (`WriterSpares`): no object and array made and freed per commit.
        let freed = environment.writerSpares.takeFreedPages()
        self.freed = freed
        editor = TreeEditor(snapshot: snapshot, freed: freed)
        reuseBound = ReuseBound(oldestReader: oldestReader, durable: durable)
        freeRecords = FreeRecordSource(snapshot: snapshot, bound: reuseBound)
        // The spares were reusable by the commit that left them, so by every later one.
        // (Shared, not copied, when every one is inside the file, as they are unless damaged.)
        let spares = snapshot.meta.spares, pageCount = snapshot.meta.pageCount
        let inside = { (page: UInt64) in page >= Layout.firstDataPage && page < pageCount }
        // The pages the commit before freed and listed in its slot (2.10): reused now when the
        // free tree's rule for their section allows it, recorded in the tree otherwise.
        let listed = snapshot.meta.freed
        var waiting = FreedInSlot()
        if listed.isEmpty {
            pool = spares.allSatisfy(inside) ? spares : spares.filter(inside)
        } else {
            // One array sized for all of them (appending a lazy filter grew it page by page:
            // ~4 reallocations a small commit).
            var pages: [UInt64] = []
            pages.reserveCapacity(spares.count + listed.count)
            for page in spares where inside(page) { pages.append(page) }
            let freedBy = snapshot.meta.txnID
            if reuseBound.allows(.ownWrites, freedBy: freedBy, writtenAfter: listed.writtenAfter) {
                for page in listed.own where inside(page) { pages.append(page) }
            } else {
                waiting.own = listed.own.filter(inside)
                waiting.writtenAfter = listed.writtenAfter
            }
            if reuseBound.allows(.durable, freedBy: freedBy, writtenAfter: 0) {
                for page in listed.others where inside(page) { pages.append(page) }
            } else {
                waiting.others = listed.others.filter(inside)
            }
            pool = pages
        }
        self.waiting = waiting
        // Taken whether or not they fit: an aborted transaction must not hand back what it changed.
        let handed = environment.carriedTrees
        environment.carriedTrees = nil
        if let handed, handed.isCommit(of: snapshot) {
            carried = handed.trees
            catalog = handed.catalogState
        } else {
            // Made only when no carried state stands for it (one made and dropped per commit).
            catalog = TreeState(name: "", descriptor: TreeDescriptor(root: snapshot.meta.catalog, count: 0, order: .bytes,
                                                                      depth: Int(snapshot.meta.catalogDepth)))
        }
    }

    deinit { abort() }

    /// The number this transaction's commit will have.
    public var txnID: UInt64 { snapshot.meta.txnID + 1 }

    /// Made once: a put through it then retains neither the snapshot nor the freed pages.
    private let editor: TreeEditor

    private func checkAlive() throws {
        guard liveness.isAlive else { throw StorageError.misuse("a write transaction was used after it ended") }
    }

    // MARK: - Trees

    func tree(_ name: String) throws -> TreeState? {
        try checkAlive()
        if let lastTree, lastTree.name == name { return lastTree }
        if let state = trees[name] {
            lastTree = state
            return state
        }
        if !dropped.isEmpty, dropped.contains(name) { return nil }
        if !carried.isEmpty, let index = carried.firstIndex(where: { $0.name == name }) {
            let state = carried.remove(at: index)
            trees.append(state)
            lastTree = state
            return state
        }
        // The catalog is edited only at commit, so it is still the snapshot's: its descriptors
        // are the ones read transactions (and the previous commit) left in the cache.
        let snapshot = snapshot, catalog = catalog
        let found = try environment.descriptors.descriptor(name, catalog: snapshot.meta.catalog) {
            try CatalogReader(snapshot: snapshot).descriptor(name, root: catalog.root, depth: catalog.depth)
        }
        guard let descriptor = found else { return nil }
        let state = TreeState(name: name, descriptor: descriptor)
        trees.append(state)
        lastTree = state
        return state
    }

    private func existingTree(_ name: String) throws -> TreeState {
        guard let state = try tree(name) else {
            throw StorageError(.treeNotFound(name), "TrellisStorage: there is no tree named '\(name)'. Create it with "
                + "createTree(_:order:) first.")
        }
        return state
    }

    /// Creates the tree `name` if it does not exist (an existing tree keeps its order).
    public func createTree(_ name: String, order: KeyOrder = .bytes) throws {
        guard try tree(name) == nil else { return }
        let length = name.utf8.count
        guard length >= 1 && length <= StorageLimits.maximumTreeNameLength else {
            throw StorageError(.keyTooLarge, "TrellisStorage: a tree name must be 1 to \(StorageLimits.maximumTreeNameLength) "
                + "bytes of UTF-8; '\(name)' is \(length).")
        }
        dropped.remove(name)
        lastTree = nil
        lastAccess = nil
        let state = TreeState(name: name, descriptor: TreeDescriptor(root: nil, count: 0, order: order, depth: 0))
        state.isChanged = true
        trees[name] = state
    }

    /// The names of the trees this transaction has looked up, created or changed.
    var createdOrChangedTreeNames: Set<String> { Set(trees.all.map(\.name)) }

    /// Facts about the tree `name`, or nil if there is none.
    public func info(_ name: String) throws -> TreeInfo? {
        try tree(name).map { TreeInfo(name: $0.name, order: $0.order, count: $0.count, depth: $0.depth) }
    }

    /// Deletes the tree `name` and all its entries. Returns false if there was none.
    @discardableResult
    public func dropTree(_ name: String) throws -> Bool {
        guard let state = try tree(name) else { return false }
        if let root = state.root { try editor.freeAll(root, depth: 1, in: state) }
        trees[name] = nil
        state.isDropped = true
        lastTree = nil
        lastAccess = nil
        dropped.insert(name)
        return true
    }

    /// Removes every entry of the tree `name`, keeping the tree.
    public func clearTree(_ name: String) throws {
        let state = try existingTree(name)
        if let root = state.root { try editor.freeAll(root, depth: 1, in: state) }
        state.root = nil
        state.count = 0
        state.depth = 0
        state.version += 1
        state.isChanged = true
    }

    // MARK: - Reading

    /// The tree `name` for `withValue`, `get` and `cursor` (`TreeReading`).
    public func access(_ name: String) throws -> TreeAccess {
        if let lastAccess, lastAccess.tree.name == name, liveness.isAlive { return lastAccess }
        let access = TreeAccess(tree: try existingTree(name), snapshot: snapshot, liveness: liveness, tracksChanges: true)
        lastAccess = access
        return access
    }

    // MARK: - Writing

    private func validate(_ key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, order: KeyOrder) throws {
        guard !key.isEmpty, key.count <= StorageLimits.maximumKeyLength, value.count <= StorageLimits.maximumValueLength else {
            throw StorageError(.keyTooLarge, "TrellisStorage: keys are 1 to \(StorageLimits.maximumKeyLength) bytes and "
                + "values at most \(StorageLimits.maximumValueLength); got a \(key.count)-byte key and a \(value.count)-byte value.")
        }
        if order == .integer && key.count != 4 && key.count != 8 {
            throw StorageError(.badIntegerKey, "TrellisStorage: an integer-ordered tree takes 4- or 8-byte keys; got \(key.count) bytes.")
        }
    }

    /// Stores `value` under `key` in tree `name`. Returns whether the key is new.
    @discardableResult
    public func put(_ name: String, key: [UInt8], value: [UInt8], mode: PutMode = .upsert) throws -> Bool {
        try key.withUnsafeBytes { key in try value.withUnsafeBytes { try put(name, key: key, value: $0, mode: mode) } }
    }

    /// Stores `value` under `key` in tree `name`, both given as bytes the caller holds (copied:
    /// the caller's buffers may change as soon as this returns). Returns whether the key is new.
    @discardableResult
    public func put(_ name: String, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                    mode: PutMode = .upsert) throws -> Bool {
        let state = try existingTree(name)
        try validate(key, value: value, order: state.order)
        // `.append` is checked on the way down the rightmost path (TreeEditor.insert).
        return try editor.put(state, key: key, value: value, mode: mode)
    }

    /// Removes `key` from tree `name`. Returns whether it was there.
    @discardableResult
    public func delete(_ name: String, key: [UInt8]) throws -> Bool {
        let state = try existingTree(name)
        let present = try withValue(name, key: key) { $0 != nil }
        guard present else { return false }
        try key.withUnsafeBytes { try editor.remove(state, key: $0) }
        return true
    }

    /// Removes the keys `lower <= key < upper` (to the end when `upper` is nil). Returns how many.
    @discardableResult
    public func deleteRange(_ name: String, from lower: [UInt8], to upper: [UInt8]?) throws -> Int {
        let state = try existingTree(name)
        let cursor = try self.cursor(name)
        var keys: [[UInt8]] = []
        var more = try cursor.seek(atLeast: lower)
        while more {
            let key = try cursor.key()
            if let upper, key.withUnsafeBytes({ k in upper.withUnsafeBytes { state.order.compare(k, $0) } }) >= 0 { break }
            keys.append(key)
            more = try cursor.next()
        }
        for key in keys { try key.withUnsafeBytes { try editor.remove(state, key: $0) } }
        return keys.count
    }

    // MARK: - Ending

    /// Discards the transaction's changes and releases the writer lock.
    public func abort() {
        guard liveness.isAlive else { return }
        liveness.isAlive = false
        environment.endWrite(epoch: epoch)
    }

    /// Writes the changes as one commit (one sync when the environment syncs on commit) and
    /// releases the writer lock. On error the file stays at its previous commit and the
    /// transaction is ended.
    public func commit() throws {
        try commit(shrinkingTo: nil)
    }

    /// Commits; `forceSync` syncs even in relaxed mode. With `newPageCount` (compaction,
    /// Compaction.swift) the commit has that high-water mark, drops the free pages at or above
    /// it (none of them may be pinned), syncs, and then cuts the file there.
    func commit(shrinkingTo newPageCount: UInt64?, forceSync: Bool = false) throws {
        try checkAlive()
        defer { abort() }
        let changed = trees.all.filter(\.isChanged).sorted { $0.name < $1.name }
        guard !changed.isEmpty || !dropped.isEmpty || newPageCount != nil else {
            // Nothing to write: the next transaction begins on this one's snapshot.
            carry([], writtenRoots: [], txnID: snapshot.meta.txnID, catalog: snapshot.meta.catalog)
            return
        }
        var writtenRoots: [PageReference?] = []
        writtenRoots.reserveCapacity(changed.count)
        let txnID = self.txnID
        let allocator = PageAllocator(pool: pool, pageCount: snapshot.meta.pageCount, source: freeRecords, limit: newPageCount)
        var serializer = PageSerializer(txnID: txnID, allocator: allocator)
        if newPageCount != nil { serializer.allocator.pullAll() }
        let editor = self.editor
        // The descriptors this commit writes (nil: dropped), for the environment's cache.
        var catalogChanges: [(name: String, descriptor: TreeDescriptor?)]? = []
        for name in dropped.sorted() where trees[name] == nil {
            catalogChanges?.append((name, nil))
            let key = Array(name.utf8)
            let present = try key.withUnsafeBytes { keyBytes in
                try TreeReader(snapshot: snapshot, order: .bytes, depth: catalog.depth).withValue(root: catalog.root, key: keyBytes) { $0 != nil }
            }
            if present { try key.withUnsafeBytes { try editor.remove(catalog, key: $0) } }
        }
        for state in changed {
            let first = serializer.pages.count
            let root = state.root.map { serializer.flush($0) }
            // The pages just written are this tree's: their buffers, kept, stand for them (`carry`).
            if serializer.pages.count > first { state.pages.noteWritten(serializer.pages[first...]) }
            writtenRoots.append(root)
            let descriptor = TreeDescriptor(root: root, count: state.count, order: state.order, depth: state.depth)
            // Key and value on the stack (two arrays a tree cost ~1K instructions a small commit).
            var name = state.name
            try descriptor.withEncoded { value in
                // As a lookup would decode it. One that would not decode (never written by this
                // code: depth <= 32) leaves the cache on the old catalog, so that nothing is cached.
                if let written = try? TreeDescriptor.decode(value, page: 0) {
                    catalogChanges?.append((state.name, written))
                } else {
                    catalogChanges = nil
                }
                _ = try name.withUTF8 { key in
                    try editor.put(catalog, key: UnsafeRawBufferPointer(key), value: value, mode: .upsert)
                }
            }
        }
        let catalogFirst = serializer.pages.count
        let catalogRoot = catalog.root.map { serializer.flush($0) }
        if serializer.pages.count > catalogFirst { catalog.pages.noteWritten(serializer.pages[catalogFirst...]) }
        let freeTree = FreeList.tree(snapshot.meta)
        // Its dirty pages are written from its buffers (writePages below).
        defer { withExtendedLifetime(freeTree) {} }
        let free: FreeTreeUpdate.Result
        do {
            // Scoped: the written pages' set is let go of before `noteWritten` adds to it.
            var update = FreeTreeUpdate(txnID: txnID, editor: editor, tree: freeTree, freed: freed,
                                        ownWrites: environment.pagesWritten(after: reuseBound.durable),
                                        durable: reuseBound.durable)
            if let newPageCount { update.limit = newPageCount }
            update.listsInSlot = environment.listsFreedPagesInSlot
            update.waiting = waiting
            let heldBack = newPageCount.map { limit in self.heldBack.filter { $0 < limit } } ?? self.heldBack
            free = try update.run(serializer: &serializer, source: freeRecords, previousCount: snapshot.meta.freeListCount,
                                  returned: heldBack)
        }
        let durable = try environment.readers.withLock { environment.readers.durableTxnID }
        let meta = MetaSlot(txnID: txnID, durableTxnID: durable, pageCount: serializer.allocator.pageCount,
                            catalog: catalogRoot, freeList: free.root, freeListCount: free.count,
                            catalogDepth: UInt64(catalog.depth), freeTreeDepth: UInt64(free.depth), spares: free.spares,
                            freed: free.freed)
        serializer.sortByPage()
        try writePages(serializer.pages, pageCount: meta.pageCount)
        // Relaxed mode: pages freed since the last sync stay reserved for the durable commit.
        // When they become many, this commit syncs (a checkpoint) so that they can be reused.
        let reserved = environment.pagesAwaitingSync(after: durable) + free.awaitingSync
        let checkpoint = reserved > max(Self.checkpointPages, Int(meta.pageCount) / 4)
        let syncs = environment.syncOnCommit || checkpoint || forceSync || newPageCount != nil
        try environment.publish(meta, sync: syncs, slots: slots)
        if let catalogChanges {
            environment.descriptors.advance(from: snapshot.meta.catalog, to: catalogRoot, changes: catalogChanges)
        }
        // This process hashed the bytes it wrote; the next transactions read them unhashed.
        environment.pager.markWritten(serializer.pages)
        environment.notePagesAwaitingSync(syncs ? nil : (durable, reserved))
        environment.noteWritten(serializer.pages.lazy.map { (first: $0.page, count: $0.pageCount) },
                                by: syncs ? nil : durable)
        let end = environment.pager.offset(ofPage: meta.pageCount)
        if newPageCount != nil, try environment.file.size() > end {
            // The commit that no longer counts the pages past its mark is durable: cut them off.
            try environment.file.truncate(to: end)
        }
        // Compaction moved pages under every tree: its next transaction looks them up again.
        if newPageCount == nil { carry(changed, writtenRoots: writtenRoots, txnID: txnID, catalog: catalogRoot) }
        // Published: the list of freed pages is the next write transaction's (emptied when taken).
        environment.writerSpares.freedPages = freed
    }

    /// Hands the trees this published commit (number `txnID`, catalog root `catalog`) wrote, and
    /// those it only read, to the next write transaction (`CarriedTrees`), as the commit left
    /// them; none when they are many (the next transaction then looks up only its own). Trees
    /// carried to this transaction that it did not use are not carried on.
    private func carry(_ changed: [TreeState], writtenRoots: [PageReference?], txnID: UInt64, catalog: PageReference?) {
        guard trees.all.count <= CarriedTrees.limit else { return }
        for (state, root) in zip(changed, writtenRoots) { state.settle(root: root) }
        self.catalog.settle(root: catalog)
        environment.carriedTrees = CarriedTrees(txnID: txnID, catalog: catalog, catalogState: self.catalog,
                                                trees: trees.all)
        // The transaction has ended: the next one is the trees' only user.
        trees = TransactionTrees()
        carried = []
    }

    /// Compaction: takes every reusable record now; pages at or above `limit` are not reused by
    /// this transaction (they are recorded as free again).
    func limitReuse(below limit: UInt64) throws {
        while let pages = try freeRecords.next() { pool += pages }
        heldBack += pool.filter { $0 >= limit }
        pool.removeAll { $0 >= limit }
    }

    /// The free pages this transaction may reuse (after `limitReuse`: all of them).
    var reusableCount: Int { pool.count }

    /// Free pages that live snapshots (or the last durable commit) may still reach: the free
    /// tree's records this transaction may not reuse and the slot's listed pages it may not
    /// reuse (compaction; reads the whole free tree).
    func pinnedPages() throws -> [UInt64] {
        while let pages = try freeRecords.next() { pool += pages }
        return try freeRecords.remainingPages() + waiting.own + waiting.others
    }

    /// Compaction: rewrites the catalog entry of `name` at commit (moving the catalog's pages
    /// on its path) even though the tree did not change.
    func touch(_ name: String) throws {
        try tree(name)?.isChanged = true
    }

    /// The size a file of `size` bytes grows to when a commit needs `needed`: geometric from
    /// small (by half, at least 16 pages, so that a tiny database is a tiny file) up to steps of
    /// 1 MiB, then of max(1 MiB, 1/8 of the file); whole pages.
    static func grownSize(from size: UInt64, toHold needed: UInt64, pageBytes: Int = Layout.pageSize) -> UInt64 {
        let page = UInt64(pageBytes)
        let step = min(max(size / 2, 16 * page), max(UInt64(1 << 20), size / 8))
        return (max(needed, size + step) + page - 1) / page * page
    }

    private func writePages(_ pages: [WrittenPage], pageCount: UInt64) throws {
        let file = environment.file
        let pager = environment.pager
        let needed = pager.offset(ofPage: pageCount)
        let size = try file.size()
        if size < needed {
            let limit = environment.maximumFileSize ?? UInt64.max
            if needed > limit {
                throw StorageError(.io(operation: "grow", errno: Platform.fileTooLarge),
                                   "TrellisStorage: the commit needs '\(file.name)' to be \(needed) bytes, over its size "
                                       + "limit of \(limit) bytes; the transaction was abandoned and the file is at its "
                                       + "last commit. Raise the limit, or write less in one transaction.")
            }
            try file.truncate(to: min(Self.grownSize(from: size, toHold: needed, pageBytes: pager.stride), max(needed, limit)))
        }
        try pager.writeCoalesced(pages)
    }
}

/// The trees a write transaction looked up, created or changed, by name: a list searched in
/// order while short (a transaction usually touches a handful; comparing a name with a few
/// others costs less than hashing it, and the list grows without rehashing), then also a
/// dictionary.
struct TransactionTrees {
    private static let listedOnly = 16
    private(set) var all: [TreeState] = []
    private var byName: [String: Int] = [:]

    subscript(name: String) -> TreeState? {
        get {
            guard all.count > Self.listedOnly else { return all.first { $0.name == name } }
            return byName[name].map { all[$0] }
        }
        set {
            let index = all.count > Self.listedOnly ? byName[name] : all.firstIndex { $0.name == name }
            switch (index, newValue) {
            case (let index?, let state?):
                all[index] = state
            case (let index?, nil):
                all.remove(at: index)
                if all.count > Self.listedOnly { reindex() } else { byName = [:] }
            case (nil, let state?):
                append(state)
            case (nil, nil):
                break
            }
        }
    }

    /// Adds the state of a tree that has none here yet (`self[name]` is nil) without looking for
    /// it again, with room for the handful of trees a transaction touches (no regrowing).
    mutating func append(_ state: TreeState) {
        if all.capacity == 0 { all.reserveCapacity(8) }
        all.append(state)
        if all.count > Self.listedOnly {
            if byName.isEmpty { reindex() } else { byName[state.name] = all.count - 1 }
        }
    }

    private mutating func reindex() {
        byName = [:]
        for (index, state) in all.enumerated() { byName[state.name] = index }
    }
}

// MARK: - Writing through a tree access (session 36)

extension WriteTransaction {
    /// Stores `value` under `key` in the tree `access` stands for, as `put(_:key:value:mode:)`
    /// does by name: for a caller that keeps the access this transaction gave it
    /// (`access(_:)`), so that each put skips the search of the transaction's trees by name.
    /// An access of another transaction, or one this transaction ended, is `misuse`; the access
    /// of a tree this transaction dropped finds the tree by name again (a tree created since
    /// under the same name is a new one). Returns whether the key is new.
    @discardableResult
    public func put(_ access: TreeAccess, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                    mode: PutMode = .upsert) throws -> Bool {
        try checkAlive()
        // A write transaction's own accesses track changes and read its snapshot; one of an
        // earlier write transaction on the same snapshot (an empty commit's) has ended.
        guard access.tracksChanges, access.snapshot === snapshot, access.isAlive else {
            throw StorageError.misuse("a tree access of another transaction was used to write")
        }
        let tree = access.tree
        if tree.isDropped { return try put(tree.name, key: key, value: value, mode: mode) }
        try validate(key, value: value, order: tree.order)
        return try editor.put(tree, key: key, value: value, mode: mode)
    }
}

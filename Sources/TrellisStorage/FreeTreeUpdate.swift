/// The last part of a commit's step 1 (docs/STORAGE.md, section 4): brings the free tree up to
/// date, editing only what changed, and writes its changed pages.
///
/// The edits are: delete the records the allocator pulled, record the pages the commit before
/// listed in its slot that this one may not reuse yet (under that commit's `freedBy`, 2.10),
/// record the pages this commit freed (including the free tree's own copied pages) under
/// `freedBy = txnID` unless they fit the slot's list, and record again the reusable pages the
/// commit pulled but does not keep as spares. Editing the free tree frees its pages and writing
/// it needs pages, so the edits are repeated until nothing changes: at most a few rounds, each
/// bounded by the tree's depth. A small commit whose pages in hand suffice edits nothing.
struct FreeTreeUpdate {
    let txnID: UInt64
    let editor: TreeEditor
    /// The free tree as this transaction edits it (starting from the committed one).
    let tree: TreeState
    let freed: FreedPages
    /// Pages this process wrote after the durable commit `durable`: once freed, they are
    /// recorded in the `ownWrites` section (they wait only for the readers).
    let ownWrites: PageSet
    let durable: UInt64
    /// Compaction's shrinking commit: freed pages at or past the new end are not recorded.
    var limit = UInt64.max
    /// Whether the pages this commit frees go to its slot's list when they fit (versions 9 and
    /// 10, docs/STORAGE.md 2.10).
    var listsInSlot = false
    /// The pages the commit before listed in its slot (freed by commit `txnID - 1`) that this
    /// commit may not reuse yet: recorded in the free tree.
    var waiting = FreedInSlot()

    /// What the commit records in its meta slot.
    struct Result {
        var root: PageReference?
        var depth: Int
        /// Pages in the free tree's records.
        var count: UInt64
        var spares: [UInt64]
        /// The pages this commit freed, when they are listed in its slot instead of the tree.
        var freed: FreedInSlot
        /// Pages freed in the `durable` section, in the tree or the slot (they wait for a sync).
        var awaitingSync: Int
    }

    /// Applies the edits and writes the tree with `serializer`, whose allocator pulled records
    /// from `source` while the other trees were written. `previousCount`: the committed tree's
    /// page count. `dropped`: pages taken from the pool that must not be reused nor recorded
    /// (compaction's shrinking commit).
    func run(serializer: inout PageSerializer, source: FreeRecordSource?, previousCount: UInt64,
             returned initiallyReturned: [UInt64]) throws -> Result {
        var returned = initiallyReturned
        var deleted = 0
        var recorded: (freed: Int, returned: Int) = (-1, -1)
        var ownCount = 0
        var durableCount = 0
        // Whether this commit's freed pages are (still) meant for its slot.
        var inSlot = listsInSlot
        var slotList = FreedInSlot()
        if !waiting.isEmpty {
            // Freed by the commit before (whose number is txnID - 1); written by this one.
            try record(waiting.own, section: .ownWrites, freedBy: txnID - 1, writtenAfter: waiting.writtenAfter)
            try record(waiting.others, section: .durable, freedBy: txnID - 1, writtenAfter: 0)
        }
        while true {
            if let source {
                for key in source.consumed[deleted...] { try key.withUnsafeBytes { try editor.remove(tree, key: $0) } }
                deleted = source.consumed.count
            }
            let freedNow = recordablePages()
            if inSlot && freedNow.count > MetaSlot.freedCapacity {
                // More than the slot holds: all of them go to the tree (2.10).
                inSlot = false
                recorded = (-1, -1)
            }
            if freedNow.count != recorded.freed || returned.count != recorded.returned {
                let (own, others) = sections(of: freedNow)
                if inSlot {
                    slotList = FreedInSlot(writtenAfter: own.isEmpty ? 0 : durable, own: own, others: others)
                } else {
                    slotList = FreedInSlot()
                    try record(own, section: .ownWrites, freedBy: txnID, writtenAfter: durable)
                    try record(others, section: .durable, freedBy: txnID, writtenAfter: 0)
                }
                // Free for any commit (they were reusable by this one): freedBy 0.
                try record(returned, section: .durable, freedBy: 0, writtenAfter: 0)
                recorded = (freedNow.count, returned.count)
                (ownCount, durableCount) = (own.count, others.count)
            }
            // Recording may have copied more of the tree (its pages are then freed): again.
            if recordablePages().count != recorded.freed { continue }
            let needed = Self.dirtyNodes(tree.root)
            if serializer.allocator.pool.count < needed, serializer.allocator.pull() { continue }
            let excess = serializer.allocator.pool.count - needed - MetaSlot.spareCapacity
            if excess > 0 {
                returned += serializer.allocator.take(excess)
                continue
            }
            break
        }
        if let failure = serializer.allocator.failure { throw failure }
        serializer.allocator.mayPull = false
        let root = tree.root.map { serializer.flush($0) }
        let inTree = inSlot ? 0 : ownCount + durableCount
        let count = previousCount - UInt64(source?.consumedPages ?? 0) + UInt64(inTree + returned.count + waiting.count)
        return Result(root: root, depth: tree.depth, count: count, spares: serializer.allocator.pool, freed: slotList,
                      awaitingSync: durableCount)
    }

    /// `pages` split into those this process wrote after the durable commit (`ownWrites`) and
    /// the others, in their order: one bit tested a page.
    private func sections(of pages: [UInt64]) -> (own: [UInt64], others: [UInt64]) {
        guard !ownWrites.isEmpty else { return ([], pages) }
        var own: [UInt64] = [], others: [UInt64] = []
        own.reserveCapacity(pages.count)
        others.reserveCapacity(pages.count)
        for page in pages {
            if ownWrites.contains(page) { own.append(page) } else { others.append(page) }
        }
        return (own, others)
    }

    /// The pages freed so far that the commit records (all, but past compaction's new end).
    private func recordablePages() -> [UInt64] {
        limit == UInt64.max ? freed.pages : freed.pages.filter { $0 < limit }
    }

    /// Stores `pages` as records `(section, freedBy, txnID, 0...)`, `FreeRecordKey.capacity`
    /// pages each (replacing the records of an earlier round, which were no longer).
    private func record(_ pages: [UInt64], section: FreeRecordKey.Section, freedBy: UInt64, writtenAfter: UInt64) throws {
        var index = 0
        var start = 0
        while start < pages.count {
            let end = min(start + FreeRecordKey.capacity, pages.count)
            let key = FreeRecordKey(section: section, freedBy: freedBy, writer: txnID, index: UInt32(index))
            let value = FreeRecordValue(writtenAfter: writtenAfter, pages: Array(pages[start..<end]))
            let keyBytes = key.encoded(), valueBytes = value.encoded()
            _ = try keyBytes.withUnsafeBytes { key in
                try valueBytes.withUnsafeBytes { try editor.put(tree, key: key, value: $0, mode: .upsert) }
            }
            index += 1
            start = end
        }
    }

    /// The dirty pages of a tree that will be written (one page each: records are never overflow).
    static func dirtyNodes(_ child: Child?) -> Int {
        guard case .dirty(let page)? = child else { return 0 }
        if page.isLeaf { return 1 }
        var total = 1
        for index in 0..<page.count { total += dirtyNodes(page.child(at: index)) }
        return total
    }
}

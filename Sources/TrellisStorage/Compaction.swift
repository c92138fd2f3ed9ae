/// What `StorageEnvironment.compact()` did.
public struct CompactionReport: Sendable, Equatable {
    /// The file's size before, in bytes.
    public var bytesBefore: UInt64
    /// The file's size after, in bytes.
    public var bytesAfter: UInt64
    /// Commits that moved pages toward the start of the file (each one durable).
    public var moveCommits: Int
}

extension StorageEnvironment {
    /// Shrinks the file in place (docs/STORAGE.md, section 7): commits that copy the pages near
    /// the end of the file into free pages near its start, then a commit whose high-water mark
    /// leaves out the free pages past the last used one, after which the file is cut there.
    /// Every step is an ordinary durable commit, so a power cut or a kill at any point leaves
    /// the file at one of them; contents never change.
    ///
    /// Pages seen by live read transactions cannot move or be cut off, so compaction refuses
    /// (throws `compactionBlocked`, changing nothing) while any read transaction is live in any
    /// process, including this one. If one starts during compaction, the file is left smaller
    /// than it was but not as small as it could be, and the same error is thrown; call again
    /// once readers have ended. Other writers wait for each step like for any write.
    @discardableResult
    public func compact() throws -> CompactionReport {
        let before = try file.size()
        try refuseIfReaders()
        // In relaxed mode, pages freed since the last sync are kept for the durable commit
        // (docs/STORAGE.md, section 3): make every commit durable so that all free pages can move.
        try sync()
        var moveCommits = 0
        var liveAboveBoundary = Int.max
        while moveCommits < 10_000 {
            let write = try beginWrite()
            let layout = try PageLayoutScan(snapshot: write.snapshot)
            let boundary = layout.boundary
            let above = layout.livePages(from: boundary)
            // Each move commit lowers the live pages past the boundary; stop when none are left
            // or when one made no progress (readers pinning the pages it would reuse).
            guard above > 0, above < liveAboveBoundary else {
                write.abort()
                break
            }
            liveAboveBoundary = above
            try write.limitReuse(below: boundary)
            let moves = layout.moves(boundary: boundary, budget: write.reusableCount - layout.chainPagesAfterMoves - 1)
            guard !moves.isEmpty else {
                write.abort()
                break
            }
            do {
                for move in moves {
                    if let key = move.key {
                        guard let value = try write.get(move.tree, key: key) else { continue }
                        try write.put(move.tree, key: key, value: value)
                    } else {
                        try write.touch(move.tree)
                    }
                }
                try write.commit(shrinkingTo: nil, forceSync: true)
            } catch {
                write.abort()
                throw error
            }
            moveCommits += 1
        }
        try cutOffFreeEnd()
        return CompactionReport(bytesBefore: before, bytesAfter: try file.size(), moveCommits: moveCommits)
    }

    private func refuseIfReaders() throws {
        let live = try readers.withLock { readers.oldestReader() }
        if let live {
            throw StorageError(.compactionBlocked, "TrellisStorage: compact() cannot move pages while read transactions "
                + "are live (the oldest reads commit \(live)). End every read transaction on '\(file.name)', in "
                + "every process, and call compact() again; the file is unchanged.")
        }
    }

    /// The last step: a commit whose high-water mark is just past the last used page.
    private func cutOffFreeEnd() throws {
        let write = try beginWrite()
        do {
            let layout = try PageLayoutScan(snapshot: write.snapshot)
            // With every record reusable, the commit rewrites the whole free tree below the cut
            // (it takes every record): only the other pages bound it.
            let pinnedPages = try write.pinnedPages()
            let newCount = (pinnedPages.isEmpty ? layout.highestPageOutsideFreeTree : layout.highestUsedPage) + 1
            let size = try file.size()
            guard newCount < write.snapshot.meta.pageCount || size > pager.offset(ofPage: newCount) else {
                write.abort()
                return
            }
            let pinned = pinnedPages.filter { $0 >= newCount }
            guard pinned.isEmpty else {
                write.abort()
                throw StorageError(.compactionBlocked, "TrellisStorage: compact() cannot cut off the end of '\(file.name)': "
                    + "\(pinned.count) of its free pages are still seen by a read transaction that began during "
                    + "compaction. The file is consistent; call compact() again once read transactions have ended.")
            }
            try write.commit(shrinkingTo: newCount, forceSync: true)
        } catch {
            write.abort()
            throw error
        }
    }
}

/// Where a commit's pages are: every page it uses (tree pages, overflow runs, the free tree)
/// and, per leaf, the key whose rewrite moves the leaf and the pages above it.
struct PageLayoutScan {
    /// One way to move pages: rewrite `key` of `tree` (copying its path and, when its value is
    /// an overflow run, the run), or, with no key, rewrite the tree's catalog entry.
    struct Move {
        var tree: String
        var key: [UInt8]?
        var pages: [UInt64]
        var runs: [(start: UInt64, count: Int)]
    }

    private(set) var treePages = 0
    private(set) var highestUsedPage = Layout.firstDataPage - 1
    /// The highest used page that is not the free tree's.
    private(set) var highestPageOutsideFreeTree = Layout.firstDataPage - 1
    private var used: [UInt64] = []
    private var freeTreePages: [UInt64] = []
    private var freeEntries = 0
    private var candidates: [Move] = []
    private var maximumDepth = 0
    private let catalogDepth: Int
    private let snapshot: Snapshot

    init(snapshot: Snapshot) throws {
        self.snapshot = snapshot
        let meta = snapshot.meta
        catalogDepth = Int(meta.catalogDepth)
        freeEntries = Int(meta.freeListCount) + meta.spares.count + meta.freed.count
        if let root = meta.freeList {
            try walkFreeTree(root, level: 1, depth: Int(meta.freeTreeDepth))
        }
        guard let catalog = meta.catalog else {
            used = freeTreePages
            highestUsedPage = used.max() ?? highestUsedPage
            return
        }
        defer { used += freeTreePages; highestUsedPage = used.max() ?? highestUsedPage }
        var trees: [(String, TreeDescriptor)] = []
        try walk(catalog, depth: Int(meta.catalogDepth), tree: nil, path: []) { key, value in
            trees.append((String(decoding: key, as: UTF8.self), try TreeDescriptor.decode(value, page: catalog.page)))
        }
        for (name, descriptor) in trees {
            guard let root = descriptor.root else { continue }
            try walk(root, depth: descriptor.depth, tree: name, path: [], visit: nil)
        }
        maximumDepth += Int(meta.catalogDepth)
        highestPageOutsideFreeTree = used.max() ?? highestPageOutsideFreeTree
    }

    /// The free tree's pages (a move commit rewrites the records it reuses, so their pages move).
    private mutating func walkFreeTree(_ reference: PageReference, level: Int, depth: Int) throws {
        guard level <= depth else { throw StorageError.corrupt(page: reference.page, "the free tree is deeper than \(depth)") }
        let view = try snapshot.treePage(reference)
        freeTreePages.append(reference.page)
        guard !view.isLeaf else { return }
        for index in 0..<view.count { try walkFreeTree(try view.child(at: index), level: level + 1, depth: depth) }
    }

    private mutating func walk(_ reference: PageReference, depth: Int, tree: String?, path: [UInt64],
                               visit: ((_ key: [UInt8], _ value: UnsafeRawBufferPointer) throws -> Void)?) throws {
        let view = try snapshot.treePage(reference)
        let path = path + [reference.page]
        used.append(reference.page)
        treePages += 1
        guard view.isLeaf else {
            for index in 0..<view.count {
                try walk(try view.child(at: index), depth: depth, tree: tree, path: path, visit: visit)
            }
            return
        }
        maximumDepth = max(maximumDepth, path.count)
        let first = Array(try view.key(at: 0))
        var move = Move(tree: tree ?? String(decoding: first, as: UTF8.self), key: tree == nil ? nil : first, pages: path, runs: [])
        for index in 0..<view.count {
            switch try view.value(at: index) {
            case .inline(let bytes):
                try visit?(Array(try view.key(at: index)), bytes)
            case .overflow(let run, let length):
                let pages = Layout.overflowPages(valueLength: length)
                for offset in 0..<UInt64(pages) { used.append(run.page + offset) }
                treePages += pages
                if index == 0 {
                    move.runs.append((run.page, pages))
                } else if let tree {
                    candidates.append(Move(tree: tree, key: Array(try view.key(at: index)), pages: path, runs: [(run.page, pages)]))
                }
            }
        }
        candidates.append(move)
    }

    /// Where the compacted file should end: past the pages in use and a margin that lets every
    /// move commit copy a path of pages and write its free list below it.
    var boundary: UInt64 {
        Layout.firstDataPage + UInt64(used.count + 2 * maximumDepth + 2 * chainPagesAfterMoves + 4)
    }

    /// Free-tree pages a move commit may need (the free list holds about as many entries again).
    var chainPagesAfterMoves: Int {
        FreeList.treePages(holding: freeEntries + used.count)
    }

    /// How many used pages lie at or past `boundary`.
    func livePages(from boundary: UInt64) -> Int { used.filter { $0 >= boundary }.count }

    /// Moves that bring the pages at or past `boundary` below it, highest first, as many as
    /// `budget` new pages allow (a path shared by several moves is counted once).
    func moves(boundary: UInt64, budget: Int) -> [Move] {
        func highest(_ move: Move) -> UInt64 {
            max(move.pages.max() ?? 0, move.runs.map { $0.start + UInt64($0.count) - 1 }.max() ?? 0)
        }
        let wanted = candidates.filter { highest($0) >= boundary }.sorted { highest($0) > highest($1) }
        var chosen: [Move] = []
        var copied: Set<UInt64> = []
        var touchedTrees: Set<String> = []
        var cost = 0
        for move in wanted {
            let newPages = move.pages.filter { !copied.contains($0) }
            // A changed tree also rewrites the catalog's path to its entry.
            let catalogPath = touchedTrees.contains(move.tree) ? 0 : catalogDepth
            let extra = newPages.count + move.runs.reduce(0) { $0 + $1.count } + catalogPath
            guard cost + extra <= budget else { continue }
            cost += extra
            copied.formUnion(newPages)
            touchedTrees.insert(move.tree)
            chosen.append(move)
        }
        return chosen
    }
}

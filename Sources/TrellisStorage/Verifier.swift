/// What `StorageEnvironment.check()` found in a sound file.
public struct CheckReport: Sendable, Equatable {
    /// The commit checked.
    public var txnID: UInt64
    /// Named trees.
    public var trees: Int
    /// Entries in all named trees.
    public var entries: UInt64
    /// Pages reachable from the commit (tree pages, overflow runs, free-tree pages).
    public var pagesInUse: Int
    /// Free pages (in the free tree's records, the meta slot's spares and its list of freed pages).
    public var freePages: Int
    /// The high-water mark.
    public var pageCount: UInt64
}

/// Walks a commit page by page, checking every checksum against its reference (docs/STORAGE.md,
/// section 5). With `full`, it also checks key order within and across pages, equal leaf depth,
/// entry counts, and that every page below the high-water mark is used exactly once or free.
/// Without it (recovery), it stops at pages written by commits not newer than `bound`.
struct Verifier {
    let snapshot: Snapshot
    let bound: UInt64
    let full: Bool
    private var owner: [UInt64: String] = [:]
    /// Pages the recovery walk has checked (it checks each once, so a damaged tree whose
    /// branches share children cannot make it walk an exponential number of paths).
    private var visited: Set<UInt64> = []
    private var report: CheckReport

    init(snapshot: Snapshot, bound: UInt64, full: Bool) {
        self.snapshot = snapshot
        self.bound = bound
        self.full = full
        report = CheckReport(txnID: snapshot.meta.txnID, trees: 0, entries: 0, pagesInUse: 0, freePages: 0,
                             pageCount: snapshot.meta.pageCount)
    }

    private mutating func claim(_ page: UInt64, count: Int = 1, by what: String) throws {
        guard full else { return }
        for offset in 0..<UInt64(count) {
            if let previous = owner[page + offset] {
                throw StorageError.corrupt(page: page + offset, "the page is used by both \(previous) and \(what)")
            }
            owner[page + offset] = what
        }
        report.pagesInUse += count
    }

    /// Walks the whole commit; returns what it found.
    mutating func run() throws -> CheckReport {
        let meta = snapshot.meta
        if let catalog = meta.catalog, try full || snapshot.treePage(catalog).txnID > bound {
            let depth = Int(meta.catalogDepth)
            guard depth >= 1 && depth <= 32 else { throw StorageError.corrupt(page: 1, "the catalog has depth \(depth)") }
            var names: [([UInt8], TreeDescriptor)] = []
            let catalogCount = try walk(catalog, order: .bytes, depth: depth, level: 1, lower: nil, upper: nil,
                                        tree: "the catalog") { key, value in
                // Names are UTF-8 (docs/STORAGE.md, 2.8): other bytes could not be asked for.
                guard key.count <= StorageLimits.maximumTreeNameLength,
                      Array(String(decoding: key, as: UTF8.self).utf8) == key
                else { throw StorageError.corrupt(page: catalog.page, "a tree name is not 1 to 255 bytes of UTF-8") }
                names.append((key, try TreeDescriptor.decode(value, page: catalog.page)))
            }
            report.trees = Int(catalogCount)
            for (name, descriptor) in names {
                guard let root = descriptor.root else { continue }
                let label = "tree '\(String(decoding: name, as: UTF8.self))'"
                let count = try walk(root, order: descriptor.order, depth: descriptor.depth, level: 1, lower: nil,
                                     upper: nil, tree: label, visit: nil)
                if full && count != descriptor.count {
                    throw StorageError.corrupt(page: root.page, "\(label) holds \(count) entries, its catalog entry says \(descriptor.count)")
                }
                report.entries += count
            }
        }
        let listed = meta.freed.own + meta.freed.others
        var free: [UInt64] = meta.spares + listed
        var recorded: UInt64 = 0
        if let root = meta.freeList, try full || snapshot.treePage(root).txnID > bound {
            let depth = Int(meta.freeTreeDepth)
            guard depth >= 1 && depth <= 32 else { throw StorageError.corrupt(page: 1, "the free tree has depth \(depth)") }
            let visit: ((_ key: [UInt8], _ value: UnsafeRawBufferPointer) throws -> Void)? = !full ? nil : { key, value in
                let decodedKey = try key.withUnsafeBytes { try FreeRecordKey.decode($0, page: root.page) }
                let record = try FreeRecordValue.decode(value, key: decodedKey, meta: meta, page: root.page)
                free += record.pages
                recorded += UInt64(record.pages.count)
            }
            _ = try walk(root, order: .bytes, depth: depth, level: 1, lower: nil, upper: nil, tree: "the free tree", visit: visit)
        } else if meta.freeList == nil && meta.freeTreeDepth != 0 {
            throw StorageError.corrupt(page: 1, "an empty free tree has depth \(meta.freeTreeDepth)")
        }
        if full {
            guard recorded == meta.freeListCount else {
                throw StorageError.corrupt(page: meta.freeList?.page ?? 1,
                                           "the free tree holds \(recorded) pages, its meta slot says \(meta.freeListCount)")
            }
            for page in meta.spares where page < Layout.firstDataPage || page >= meta.pageCount {
                throw StorageError.corrupt(page: 1, "a spare page of the meta slot is page \(page)")
            }
            for page in listed where page < Layout.firstDataPage || page >= meta.pageCount {
                throw StorageError.corrupt(page: 1, "a freed page the meta slot lists is page \(page)")
            }
            for page in free { try claim(page, by: "the free list entries") }
            report.pagesInUse -= free.count
            report.freePages = free.count
            let accounted = UInt64(owner.count) + Layout.firstDataPage
            guard accounted == meta.pageCount else {
                let missing = (Layout.firstDataPage..<meta.pageCount).first { owner[$0] == nil } ?? 0
                throw StorageError.corrupt(page: missing, "page \(missing) is neither used nor free (a leak)")
            }
        }
        return report
    }

    /// Walks one subtree; returns its entry count (when walked entirely).
    private mutating func walk(_ reference: PageReference, order: KeyOrder, depth: Int, level: Int,
                               lower: [UInt8]?, upper: [UInt8]?, tree: String,
                               visit: ((_ key: [UInt8], _ value: UnsafeRawBufferPointer) throws -> Void)?) throws -> UInt64 {
        guard level <= depth else { throw StorageError.corrupt(page: reference.page, "\(tree) is deeper than its depth \(depth)") }
        let view = try snapshot.treePage(reference)
        if !full && view.txnID <= bound && visit == nil { return 0 }
        if !full && !visited.insert(reference.page).inserted && visit == nil { return 0 }
        guard view.txnID <= snapshot.meta.txnID else {
            throw view.corrupt("written by commit \(view.txnID), after the commit \(snapshot.meta.txnID) that references it")
        }
        guard view.isLeaf == (level == depth) else {
            throw view.corrupt("a \(view.isLeaf ? "leaf" : "branch") at level \(level) of \(tree) of depth \(depth)")
        }
        try claim(reference.page, by: tree)
        // Keys are compared where they lie in the page (no copy per entry): the previous key of
        // this page, or before the first one the parent's separator `lower` (which may equal it).
        var previous: UnsafeRawBufferPointer?
        var total: UInt64 = 0
        // The keys rise strictly (checked below), so the last one below `upper` is all of them.
        let firstKeyed = view.isLeaf ? 0 : 1
        if full, let upper, view.count > firstKeyed {
            let below = { (index: Int) throws -> Bool in
                try upper.withUnsafeBytes { order.compare(try view.key(at: index), $0) } < 0
            }
            if try !below(view.count - 1) {
                let first = try (firstKeyed..<view.count).first { try !below($0) } ?? view.count - 1
                throw view.corrupt("entry \(first) is not below its parent's next separator")
            }
        }
        for index in 0..<view.count {
            let key: UnsafeRawBufferPointer? = (!view.isLeaf && index == 0) ? nil : try view.key(at: index)
            if full, let key {
                if let previous {
                    guard order.compare(previous, key) < 0 else { throw view.corrupt("keys out of order at entry \(index)") }
                } else if let lower {
                    guard lower.withUnsafeBytes({ order.compare($0, key) }) <= 0 else {
                        throw view.corrupt("keys out of order at entry \(index)")
                    }
                }
                previous = key
            }
            if view.isLeaf {
                total += 1
                let location = try view.value(at: index)
                if case .overflow(let run, let length) = location {
                    let bytes = try snapshot.overflowValue(run, length: length)
                    try claim(run.page, count: Layout.overflowPages(valueLength: length), by: "\(tree) (overflow)")
                    try visit?(key.map(Array.init) ?? [], bytes)
                } else if case .inline(let bytes) = location, let visit {
                    try visit(key.map(Array.init) ?? [], bytes)
                }
            } else {
                let childLower = index == 0 ? lower : key.map(Array.init)
                let childUpper = index + 1 < view.count ? Array(try view.key(at: index + 1)) : upper
                total += try walk(try view.child(at: index), order: order, depth: depth, level: level + 1,
                                  lower: childLower, upper: childUpper, tree: tree, visit: visit)
            }
        }
        return total
    }
}

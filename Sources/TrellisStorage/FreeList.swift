/// The free tree's records (docs/STORAGE.md, 2.9): the pages one commit freed, keyed by what must
/// happen before they may be written again.
struct FreeRecordKey: Equatable {
    /// What a record's pages wait for, besides the readers.
    enum Section: UInt8, CaseIterable {
        /// Pages this process wrote after the durable commit `writtenAfter` (the value's first
        /// field): that commit cannot reach them, so they wait only for the readers, as long as
        /// the durable commit has not moved (or has moved past `freedBy`).
        case ownWrites = 0
        /// Everything else: the pages wait for the readers and for a durable commit at or after
        /// `freedBy`.
        case durable = 1
    }

    static let length = 21
    /// Pages per record, so that a record stays inline in a leaf.
    static let capacity = 128

    var section: Section
    /// The commit after which the pages are unreachable (0: free for any commit).
    var freedBy: UInt64
    /// The commit that wrote the record (several commits may record pages with one `freedBy`).
    var writer: UInt64
    var index: UInt32

    func encoded() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.length)
        bytes[0] = section.rawValue
        for shift in 0..<8 {
            bytes[1 + shift] = UInt8(truncatingIfNeeded: freedBy >> (56 - 8 * shift))
            bytes[9 + shift] = UInt8(truncatingIfNeeded: writer >> (56 - 8 * shift))
        }
        for shift in 0..<4 { bytes[17 + shift] = UInt8(truncatingIfNeeded: index >> (24 - 8 * shift)) }
        return bytes
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, page: UInt64) throws -> FreeRecordKey {
        guard bytes.count == length, let section = Section(rawValue: bytes[0]) else {
            throw StorageError.corrupt(page: page, "a free-tree key is malformed")
        }
        var freedBy: UInt64 = 0
        var writer: UInt64 = 0
        var index: UInt32 = 0
        for offset in 0..<4 { index = index << 8 | UInt32(bytes[17 + offset]) }
        for offset in 0..<8 {
            freedBy = freedBy << 8 | UInt64(bytes[1 + offset])
            writer = writer << 8 | UInt64(bytes[9 + offset])
        }
        return FreeRecordKey(section: section, freedBy: freedBy, writer: writer, index: index)
    }
}

/// A record's value: the durable commit the pages were written after (`ownWrites`; 0 otherwise)
/// and the pages.
struct FreeRecordValue {
    var writtenAfter: UInt64
    var pages: [UInt64]

    func encoded() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 8 + 8 * pages.count)
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            base.storeLE(writtenAfter, at: 0)
            for (index, page) in pages.enumerated() { base.storeLE(page, at: 8 + 8 * index) }
        }
        return bytes
    }

    /// Decodes a record of commit `meta`, checking that every page could be free in it.
    static func decode(_ bytes: UnsafeRawBufferPointer, key: FreeRecordKey, meta: MetaSlot, page: UInt64) throws -> FreeRecordValue {
        let count = (bytes.count - 8) / 8
        guard let base = bytes.baseAddress, bytes.count >= 16, bytes.count % 8 == 0, count <= FreeRecordKey.capacity,
              key.freedBy <= meta.txnID, key.writer <= meta.txnID
        else { throw StorageError.corrupt(page: page, "a free-tree record is malformed") }
        var pages: [UInt64] = []
        pages.reserveCapacity(count)
        for index in 0..<count {
            let number = base.loadLE(UInt64.self, at: 8 + 8 * index)
            guard number >= Layout.firstDataPage, number < meta.pageCount else {
                throw StorageError.corrupt(page: page, "a free-tree record names page \(number)")
            }
            pages.append(number)
        }
        return FreeRecordValue(writtenAfter: base.loadLE(UInt64.self, at: 0), pages: pages)
    }
}

/// When a write transaction may reuse a record's pages (docs/STORAGE.md, section 3).
struct ReuseBound {
    /// The oldest commit a live reader (or a reader about to begin) may see.
    var oldestReader: UInt64
    /// The newest durable commit.
    var durable: UInt64

    func allows(_ key: FreeRecordKey, writtenAfter: UInt64) -> Bool {
        allows(key.section, freedBy: key.freedBy, writtenAfter: writtenAfter)
    }

    /// The same rule for pages of `section` freed by commit `freedBy` (a record's, or those a
    /// meta slot lists, 2.10).
    func allows(_ section: FreeRecordKey.Section, freedBy: UInt64, writtenAfter: UInt64) -> Bool {
        switch section {
        case .durable: return freedBy <= min(oldestReader, durable)
        case .ownWrites: return freedBy <= oldestReader && (writtenAfter == durable || freedBy <= durable)
        }
    }
}

enum FreeList {
    /// The committed free tree of a snapshot, for reading.
    static func tree(_ meta: MetaSlot) -> TreeState {
        TreeState(name: "", descriptor: TreeDescriptor(root: meta.freeList, count: 0, order: .bytes,
                                                       depth: Int(meta.freeTreeDepth)))
    }

    /// Every record of a commit's free tree, in key order.
    static func records(_ snapshot: Snapshot) throws -> [(key: FreeRecordKey, value: FreeRecordValue)] {
        guard snapshot.meta.freeList != nil else { return [] }
        let cursor = Cursor(tree: tree(snapshot.meta), snapshot: snapshot, tracksChanges: false, isAlive: { true })
        var records: [(key: FreeRecordKey, value: FreeRecordValue)] = []
        var more = try cursor.first()
        while more {
            let key = try cursor.withKey { try FreeRecordKey.decode($0, page: snapshot.meta.freeList?.page ?? 0) }
            let value = try cursor.withValue {
                try FreeRecordValue.decode($0, key: key, meta: snapshot.meta, page: snapshot.meta.freeList?.page ?? 0)
            }
            records.append((key, value))
            more = try cursor.next()
        }
        return records
    }

    /// Every free page of a commit: its records' pages, its spares and the pages its slot lists.
    static func pages(_ snapshot: Snapshot) throws -> [UInt64] {
        try records(snapshot).flatMap(\.value.pages) + snapshot.meta.spares + snapshot.meta.freed.own
            + snapshot.meta.freed.others
    }

    /// About how many pages a free tree holding `entries` pages takes (compaction's margin).
    static func treePages(holding entries: Int) -> Int {
        entries / (FreeRecordKey.capacity * 3 / 2) + 4
    }
}

/// Reads reusable records off the left of the committed free tree, one at a time, for the
/// allocator (docs/STORAGE.md, section 4, step 1). The records it hands out are deleted from
/// the free tree by the commit.
final class FreeRecordSource {
    private let snapshot: Snapshot
    private let bound: ReuseBound
    /// Made by the first `next()`: a small commit that reuses the pages in hand reads no record,
    /// and a cursor made and torn down for nothing cost ~1K instructions a commit (issue 37).
    private var cursor: Cursor?
    /// The section being read and whether the cursor is placed in it.
    private var sectionIndex = 0
    private var placed = false
    /// The keys of the records handed out, in order.
    private(set) var consumed: [[UInt8]] = []
    /// Pages in the records handed out.
    private(set) var consumedPages = 0

    init(snapshot: Snapshot, bound: ReuseBound) {
        self.snapshot = snapshot
        self.bound = bound
    }

    /// The pages of the next reusable record, or nil when there is none.
    func next() throws -> [UInt64]? {
        guard snapshot.meta.freeList != nil else { return nil }
        let cursor = self.cursor
            ?? Cursor(tree: FreeList.tree(snapshot.meta), snapshot: snapshot, tracksChanges: false, isAlive: { true })
        self.cursor = cursor
        let sections = FreeRecordKey.Section.allCases
        let treePage = snapshot.meta.freeList?.page ?? 0
        while sectionIndex < sections.count {
            let section = sections[sectionIndex]
            let more = placed ? try cursor.next() : try cursor.seek(atLeast: [section.rawValue])
            placed = true
            if more {
                let keyBytes = try cursor.key()
                let key = try keyBytes.withUnsafeBytes { try FreeRecordKey.decode($0, page: treePage) }
                if key.section == section {
                    let value = try cursor.withValue { try FreeRecordValue.decode($0, key: key, meta: snapshot.meta, page: treePage) }
                    // Records are in `freedBy` order: the first one not yet reusable ends the section.
                    if bound.allows(key, writtenAfter: value.writtenAfter) {
                        consumed.append(keyBytes)
                        consumedPages += value.pages.count
                        return value.pages
                    }
                }
            }
            sectionIndex += 1
            placed = false
        }
        return nil
    }

    /// The pages of every record not handed out (the ones no commit may reuse yet).
    func remainingPages() throws -> [UInt64] {
        let taken = Set(consumed)
        return try FreeList.records(snapshot).filter { !taken.contains($0.key.encoded()) }.flatMap(\.value.pages)
    }
}

/// Hands out page numbers at commit: reusable pages first (the commit's spares, then records
/// pulled from the free tree as they are needed), then the end of the file.
struct PageAllocator {
    /// Reusable pages in hand, sorted ascending (the highest is handed out first).
    private(set) var pool: [UInt64]
    private(set) var pageCount: UInt64
    private let source: FreeRecordSource?
    /// Pages at or above this are dropped from the pool (compaction's shrinking commit).
    private let limit: UInt64
    /// Whether records may still be pulled (not while the free tree itself is written).
    var mayPull = true
    /// The first error met while pulling a record (a damaged free tree); the commit throws it.
    private(set) var failure: Error?

    init(pool: [UInt64], pageCount: UInt64, source: FreeRecordSource?, limit: UInt64? = nil) {
        let below = limit ?? UInt64.max
        self.limit = below
        // Sorted in place, and copied only to drop pages past a limit (issue 37: each array
        // made here was an allocation per commit).
        var sorted = limit == nil ? pool : pool.filter { $0 < below }
        sorted.sort()
        self.pool = sorted
        self.pageCount = limit ?? pageCount
        self.source = source
    }

    /// Pulls one more reusable record into the pool; false when there is none.
    @discardableResult
    mutating func pull() -> Bool {
        guard mayPull, failure == nil, let source else { return false }
        do {
            guard let pages = try source.next() else { return false }
            if limit == UInt64.max {
                pool.append(contentsOf: pages)
            } else {
                let limit = self.limit
                pool.append(contentsOf: pages.lazy.filter { $0 < limit })
            }
            pool.sort()
            return true
        } catch {
            failure = error
            return false
        }
    }

    /// Pulls every reusable record (compaction).
    mutating func pullAll() { while pull() {} }

    /// Takes `count` pages out of the pool (to be recorded as free again).
    mutating func take(_ count: Int) -> [UInt64] {
        let taken = Array(pool.suffix(count))
        pool.removeLast(taken.count)
        return taken
    }

    /// Takes the pages at or above `limit` out of the pool.
    mutating func take(atOrAbove limit: UInt64) -> [UInt64] {
        let taken = pool.filter { $0 >= limit }
        pool.removeAll { $0 >= limit }
        return taken
    }

    /// The first of `count` contiguous pages.
    mutating func allocate(_ count: Int = 1) -> UInt64 {
        if count == 1 {
            if pool.isEmpty { pull() }
            if let page = pool.popLast() { return page }
        } else {
            // A run: a few records at most are pulled looking for one.
            var pulls = 0
            while true {
                if let first = takeRun(count) { return first }
                guard pulls < 4, pull() else { break }
                pulls += 1
            }
        }
        let first = pageCount
        pageCount += UInt64(count)
        return first
    }

    private mutating func takeRun(_ count: Int) -> UInt64? {
        guard pool.count >= count else { return nil }
        var runStart = 0
        for index in 1..<pool.count {
            if pool[index] != pool[index - 1] + 1 { runStart = index }
            if index - runStart + 1 == count {
                let first = pool[runStart]
                pool.removeSubrange(runStart...index)
                return first
            }
        }
        return nil
    }
}

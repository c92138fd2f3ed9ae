/// A page that a commit stopped using, and which commit that was (docs/STORAGE.md, 2.9 and 3).
struct FreeEntry: Equatable {
    var freedBy: UInt64
    var page: UInt64
}

enum FreeList {
    /// Reads the whole chain of a commit, checking every page and the total count.
    static func load(_ snapshot: Snapshot) throws -> [FreeEntry] {
        var entries: [FreeEntry] = []
        var next = snapshot.meta.freeList
        var visited = 0
        while let reference = next {
            visited += 1
            guard visited <= Int(snapshot.meta.pageCount) else {
                throw StorageError.corrupt(page: reference.page, "the free-list chain loops")
            }
            let page = try snapshot.freeListPage(reference)
            let count = Int(page.loadLE(UInt16.self, at: 2))
            for index in 0..<count {
                let offset = Layout.freeListEntriesOffset + index * 16
                let entry = FreeEntry(freedBy: page.loadLE(UInt64.self, at: offset), page: page.loadLE(UInt64.self, at: offset + 8))
                guard entry.page >= Layout.firstDataPage, entry.page < snapshot.meta.pageCount,
                      entry.freedBy <= snapshot.meta.txnID
                else { throw StorageError.corrupt(page: reference.page, "a free-list entry names page \(entry.page)") }
                entries.append(entry)
            }
            let nextPage = page.loadLE(UInt64.self, at: 24)
            next = nextPage == 0 ? nil : PageReference(page: nextPage, checksum: page.loadLE(UInt64.self, at: 32))
        }
        guard UInt64(entries.count) == snapshot.meta.freeListCount else {
            throw StorageError.corrupt(page: snapshot.meta.freeList?.page ?? 0,
                                       "the free list holds \(entries.count) entries, its meta slot says \(snapshot.meta.freeListCount)")
        }
        return entries
    }

    /// The pages of a chain (to free them when the chain is rewritten).
    static func chainPages(_ snapshot: Snapshot) throws -> [UInt64] {
        var pages: [UInt64] = []
        var next = snapshot.meta.freeList
        while let reference = next {
            guard pages.count <= Int(snapshot.meta.pageCount) else {
                throw StorageError.corrupt(page: reference.page, "the free-list chain loops")
            }
            pages.append(reference.page)
            let page = try snapshot.freeListPage(reference)
            let nextPage = page.loadLE(UInt64.self, at: 24)
            next = nextPage == 0 ? nil : PageReference(page: nextPage, checksum: page.loadLE(UInt64.self, at: 32))
        }
        return pages
    }
}

/// Hands out page numbers at commit: pages free for reuse first, then the end of the file.
struct PageAllocator {
    /// Reusable pages, sorted ascending.
    private(set) var reusable: [FreeEntry]
    private(set) var pageCount: UInt64

    init(reusable: [FreeEntry], pageCount: UInt64) {
        self.reusable = reusable.sorted { $0.page < $1.page }
        self.pageCount = pageCount
    }

    /// The first of `count` contiguous pages.
    mutating func allocate(_ count: Int = 1) -> UInt64 {
        if count == 1, let entry = reusable.popLast() { return entry.page }
        if count > 1 && reusable.count >= count {
            var runStart = 0
            for index in 1..<reusable.count {
                if reusable[index].page != reusable[index - 1].page + 1 { runStart = index }
                if index - runStart + 1 == count {
                    let first = reusable[runStart].page
                    reusable.removeSubrange(runStart...index)
                    return first
                }
            }
        }
        let first = pageCount
        pageCount += UInt64(count)
        return first
    }
}

/// A page (or overflow run) a commit writes: where, its bytes, and their checksum.
/// A struct rather than a tuple: an array of tuples holding an array is copied and destroyed
/// through the runtime's generic tuple witnesses (~4,500 instructions per W6 commit).
struct WrittenPage {
    let page: UInt64
    /// An overflow run's bytes; nil for a tree page, written from `buffer`.
    private let run: [UInt8]?
    /// A tree page's dirty page (`DirtyPage`), alive until its transaction ends.
    let buffer: UnsafeRawPointer?
    let checksum: UInt64

    init(page: UInt64, bytes: [UInt8], checksum: UInt64) {
        self.page = page
        run = bytes
        buffer = nil
        self.checksum = checksum
    }

    init(page: UInt64, buffer: UnsafeRawPointer, checksum: UInt64) {
        self.page = page
        run = nil
        self.buffer = buffer
        self.checksum = checksum
    }

    /// The pages written (1 for a tree page).
    var pageCount: Int { (run?.count ?? Layout.pageSize) / Layout.pageSize }

    /// The bytes to write, lent to `body`.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let run { return try run.withUnsafeBytes(body) }
        return try body(UnsafeRawBufferPointer(start: buffer, count: Layout.pageSize))
    }
}

/// Turns a write transaction's dirty pages into written pages at commit (docs/STORAGE.md, section 4,
/// step 1): numbers them, lays them out, and computes checksums bottom-up so that each branch
/// carries its children's.
struct PageSerializer {
    let txnID: UInt64
    var allocator: PageAllocator
    /// Pages to write, in the order they were made, with their checksums (a run's covers the run).
    private(set) var pages: [WrittenPage] = []

    init(txnID: UInt64, allocator: PageAllocator) {
        self.txnID = txnID
        self.allocator = allocator
        pages.reserveCapacity(16)
    }

    /// Puts the pages in page order (in place: the order `Pager.writeCoalesced` writes them in).
    mutating func sortByPage() {
        pages.sort { $0.page < $1.page }
    }

    private static func header(_ base: UnsafeMutableRawPointer, kind: PageKind, count: Int, page: UInt64, txnID: UInt64) {
        base.storeBytes(of: kind.rawValue, toByteOffset: 0, as: UInt8.self)
        base.storeLE(UInt16(count), at: 2)
        base.storeLE(page, at: 8)
        base.storeLE(txnID, at: 16)
    }

    /// Records a page (or run) to write; its checksum covers its first `checked` bytes.
    private mutating func emit(_ page: UInt64, _ bytes: [UInt8], checked: Int) -> PageReference {
        let checksum = bytes.withUnsafeBytes { Checksum.xxh64(UnsafeRawBufferPointer(rebasing: $0[0..<checked])) }
        pages.append(WrittenPage(page: page, bytes: bytes, checksum: checksum))
        return PageReference(page: page, checksum: checksum)
    }

    /// Writes a value into a new overflow run.
    mutating func overflow(_ value: UnsafeRawBufferPointer) -> PageReference {
        let count = Layout.overflowPages(valueLength: value.count)
        let first = allocator.allocate(count)
        var bytes = [UInt8](repeating: 0, count: count * Layout.pageSize)
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            Self.header(base, kind: .overflow, count: 0, page: first, txnID: txnID)
            base.storeLE(UInt32(count), at: 4)
            base.storeLE(UInt64(value.count), at: 24)
            if let from = value.baseAddress { (base + Layout.headerSize).copyMemory(from: from, byteCount: value.count) }
        }
        return emit(first, bytes, checked: bytes.count)
    }

    /// Writes a child and everything changed below it; a committed page is returned as it is.
    mutating func flush(_ child: Child) -> PageReference {
        switch child {
        case .clean(let reference):
            return reference
        case .dirty(let page):
            return flush(page)
        }
    }

    /// Writes a dirty page as it is: its pending references (children, values kept for commit)
    /// are written first and filled in, then it gets its number, its header and its checksum.
    private mutating func flush(_ page: DirtyPage) -> PageReference {
        let base = page.base
        let count = page.count
        if page.isLeaf {
            if base.load(fromByteOffset: DirtyPage.pendingFlagOffset, as: UInt8.self) != 0 {
                for index in 0..<count {
                    let start = page.offset(index)
                    guard base.loadLE(UInt16.self, at: start &+ 2) == Layout.overflowMarker else { continue }
                    let at = start &+ Layout.leafCellHeader &+ Int(base.loadLE(UInt16.self, at: start))
                    let length = Int(base.loadLE(UInt32.self, at: at &+ 16))
                    let kept = PageReference(page: base.loadLE(UInt64.self, at: at), checksum: 0)
                    guard let value = TreePages.value(kept, length: length) else { continue }
                    let run = overflow(value)
                    base.storeLE(run.page, at: at)
                    base.storeLE(run.checksum, at: at &+ 8)
                }
            }
        } else {
            // Children first: their checksums go into this page.
            for index in 0..<count {
                guard case .dirty(let child) = page.child(at: index) else { continue }
                page.setChild(at: index, .clean(flush(child)))
            }
        }
        let number = allocator.allocate()
        page.compact()
        let used = page.used
        base.storeBytes(of: Layout.usedBytesFlag, toByteOffset: Layout.flagsOffset, as: UInt8.self)
        base.storeLE(number, at: 8)
        base.storeLE(txnID, at: 16)
        base.storeLE(UInt64(0), at: 24)
        // The bytes after the cells are zero (docs/STORAGE.md 2.4): the used bytes are the page's
        // one prefix that format 7 checksums.
        (base + used).zeroBytes(count: Layout.pageSize &- used)
        let checksum = Checksum.xxh64(UnsafeRawBufferPointer(start: base, count: used))
        pages.append(WrittenPage(page: number, buffer: UnsafeRawPointer(base), checksum: checksum))
        return PageReference(page: number, checksum: checksum)
    }
}

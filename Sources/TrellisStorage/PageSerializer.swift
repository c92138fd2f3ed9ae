/// A page (or overflow run) a commit writes: where, its bytes, and their checksum.
/// A struct rather than a tuple: an array of tuples holding an array is copied and destroyed
/// through the runtime's generic tuple witnesses (~4,500 instructions per W6 commit).
/// No bytes of its own: a tree page is written from its dirty page, an overflow run from the
/// value its tree kept for commit (`TreePages.keep`, header in front), both alive until the
/// transaction ends; a run's pages past the value are zeros, written but never held.
struct WrittenPage {
    let page: UInt64
    /// The dirty page (`DirtyPage`), or the run's header and value.
    private let bytes: UnsafeRawPointer
    /// The run's bytes at `bytes` (header and value); 0 for a tree page.
    private let runLength: Int
    let checksum: UInt64

    /// An overflow run: `length` bytes (header and value) at `run`, zeros after them.
    init(page: UInt64, run: UnsafeRawPointer, length: Int, checksum: UInt64) {
        self.page = page
        bytes = run
        runLength = length
        self.checksum = checksum
    }

    init(page: UInt64, buffer: UnsafeRawPointer, checksum: UInt64) {
        self.page = page
        bytes = buffer
        runLength = 0
        self.checksum = checksum
    }

    /// A tree page's dirty page, written as it is; nil for an overflow run.
    var buffer: UnsafeRawPointer? { runLength == 0 ? bytes : nil }

    /// The pages written (1 for a tree page).
    var pageCount: Int { runLength == 0 ? 1 : (runLength &+ Layout.pageSize &- 1) / Layout.pageSize }

    /// Copies the pages' bytes (a run's zero after its value) to `destination`, which has room
    /// for `pageCount` pages.
    func copy(to destination: UnsafeMutableRawPointer) {
        guard runLength != 0 else {
            destination.copyMemory(from: bytes, byteCount: Layout.pageSize)
            return
        }
        destination.copyMemory(from: bytes, byteCount: runLength)
        (destination + runLength).zeroBytes(count: pageCount &* Layout.pageSize &- runLength)
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

    /// Gives a kept value (`TreePages.keep`: `Layout.headerSize` bytes, then the value) its
    /// overflow run: numbers it, fills in the header in front of the value, and records it to be
    /// written from there (no copy).
    mutating func overflow(_ run: UnsafeMutableRawPointer, valueLength: Int) -> PageReference {
        let count = Layout.overflowPages(valueLength: valueLength)
        let first = allocator.allocate(count)
        run.zeroBytes(count: Layout.headerSize)
        Self.header(run, kind: .overflow, count: 0, page: first, txnID: txnID)
        run.storeLE(UInt32(count), at: 4)
        run.storeLE(UInt64(valueLength), at: 24)
        let length = Layout.headerSize &+ valueLength
        let checksum = Checksum.xxh64(UnsafeRawBufferPointer(start: run, count: length), zeroPaddedTo: count &* Layout.pageSize)
        pages.append(WrittenPage(page: first, run: run, length: length, checksum: checksum))
        return PageReference(page: first, checksum: checksum)
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
                    guard let value = TreePages.run(kept) else { continue }
                    let run = overflow(value, valueLength: length)
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

import Foundation

/// The environment's view of the file: the memory map, and the pages already verified.
///
/// A page is hashed the first time this process reads it through a reference carrying a given
/// checksum; afterwards the same (page, checksum) pair is trusted. A reused page has a new
/// checksum in its new parent and is hashed again.
final class Pager: @unchecked Sendable {
    let file: StorageFile
    private let lock = NSLock()
    private var base: UnsafeRawPointer?
    private var mappedPages: UInt64 = 0
    private var verified: [UInt64] = []

    init(file: StorageFile) {
        self.file = file
    }

    /// The map, covering at least `pageCount` pages.
    func map(covering pageCount: UInt64) throws -> UnsafeRawPointer {
        lock.lock()
        defer { lock.unlock() }
        if let base, mappedPages >= pageCount { return base }
        let length = pageCount * UInt64(Layout.pageSize)
        let address = try file.map(length: length)
        base = address
        mappedPages = pageCount
        return address
    }

    /// Whether the page was verified with this checksum.
    @inline(__always)
    func isVerified(_ reference: PageReference) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let index = Int(reference.page)
        return index < verified.count && verified[index] == reference.checksum && reference.checksum != 0
    }

    /// Records that the page passed its check with this checksum.
    func markVerified(_ reference: PageReference) {
        lock.lock()
        defer { lock.unlock() }
        let index = Int(reference.page)
        if index >= verified.count {
            verified.append(contentsOf: repeatElement(0, count: max(index + 1 - verified.count, verified.count)))
        }
        verified[index] = reference.checksum
    }

    /// Forgets every verification (after recovery replaced a commit).
    func forgetVerifications() {
        lock.lock()
        defer { lock.unlock() }
        verified.removeAll()
    }
}

/// One commit of the file as a reader sees it: its meta slot and the map. Pages are checked
/// against the references that lead to them.
struct Snapshot {
    let meta: MetaSlot
    let base: UnsafeRawPointer
    let pager: Pager

    init(meta: MetaSlot, pager: Pager) throws {
        self.meta = meta
        self.pager = pager
        base = try pager.map(covering: meta.pageCount)
    }

    @inline(__always)
    private func checkRange(_ page: UInt64, pages: UInt64, from: UInt64? = nil) throws {
        guard page >= Layout.firstDataPage, pages >= 1, page < meta.pageCount, pages <= meta.pageCount - page else {
            throw StorageError.corrupt(page: from ?? page, "a reference to page \(page) lies outside the file's "
                + "\(meta.pageCount) pages")
        }
    }

    /// The bytes of `pages` pages from `reference.page`, after checking their checksum.
    func verifiedBytes(_ reference: PageReference, pages: UInt64) throws -> UnsafeRawPointer {
        try checkRange(reference.page, pages: pages)
        let start = base + Int(reference.page) * Layout.pageSize
        if !pager.isVerified(reference) {
            let actual = Checksum.xxh64(UnsafeRawBufferPointer(start: start, count: Int(pages) * Layout.pageSize))
            guard actual == reference.checksum else {
                throw StorageError.corrupt(page: reference.page, "checksum mismatch")
            }
            pager.markVerified(reference)
        }
        return start
    }

    /// A branch or leaf page.
    @inline(__always)
    func treePage(_ reference: PageReference) throws -> PageView {
        let view = PageView(base: try verifiedBytes(reference, pages: 1), number: reference.page)
        try view.validateTreePage()
        return view
    }

    /// The value stored in an overflow run, in place.
    func overflowValue(_ reference: PageReference, length: Int) throws -> UnsafeRawBufferPointer {
        let pages = Layout.overflowPages(valueLength: length)
        let start = try verifiedBytes(reference, pages: UInt64(pages))
        guard start.load(fromByteOffset: 0, as: UInt8.self) == PageKind.overflow.rawValue,
              start.loadLE(UInt64.self, at: 8) == reference.page,
              Int(start.loadLE(UInt32.self, at: 4)) == pages,
              start.loadLE(UInt64.self, at: 24) == UInt64(length)
        else { throw StorageError.corrupt(page: reference.page, "the overflow run's header does not match its reference") }
        return UnsafeRawBufferPointer(start: start + Layout.headerSize, count: length)
    }

    /// A page of the free-list chain.
    func freeListPage(_ reference: PageReference) throws -> UnsafeRawPointer {
        let start = try verifiedBytes(reference, pages: 1)
        guard start.load(fromByteOffset: 0, as: UInt8.self) == PageKind.freeList.rawValue,
              start.loadLE(UInt64.self, at: 8) == reference.page,
              Int(start.loadLE(UInt16.self, at: 2)) <= Layout.freeListCapacity
        else { throw StorageError.corrupt(page: reference.page, "a free-list page is malformed") }
        return start
    }
}

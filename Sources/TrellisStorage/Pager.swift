import Foundation
import Synchronization

/// The environment's view of the file: the memory map, and the pages already verified.
///
/// A page is hashed the first time this process reads it through a reference carrying a given
/// checksum; afterwards the same (page, checksum) pair is trusted. A reused page has a new
/// checksum in its new parent and is hashed again.
///
/// The verified table is read on every page visit, so it is read without a lock: it is a buffer
/// of 64-bit words (word 0 its capacity, word `1 + n` the checksum page `n` was verified with),
/// reached through a cell that always points at a live buffer. Writers (a thread that verified a
/// page) take the lock; a buffer outgrown is kept until the pager goes, so a reader holding the
/// old pointer still reads valid memory. A reader that misses a concurrent mark (sees 0 or the
/// page's previous checksum) only hashes the page again; a word is only ever 0 or a checksum the
/// page was verified with, so a stale read never makes an unverified page trusted.
final class Pager: @unchecked Sendable {
    let file: StorageFile
    private let lock = NSLock()
    private var base: UnsafeRawPointer?
    private var mappedPages: UInt64 = 0
    /// The cell holding the current verified table (see above).
    private let table: UnsafeMutablePointer<UnsafeMutablePointer<UInt64>>
    /// Tables outgrown, freed with the pager (readers may still hold them).
    private var outgrown: [UnsafeMutablePointer<UInt64>] = []
    /// The cipher of an encrypted file (docs/STORAGE.md, section 12), set once by the opening
    /// environment before any page is read; nil for a plain file.
    private(set) var cipher: PageCipher?
    /// The decrypted pages of an encrypted file.
    private(set) var decrypted: DecryptedPageCache?
    /// Bytes a page occupies in the file: 4,096, or 4,128 when encrypted.
    private(set) var stride = Layout.pageSize

    init(file: StorageFile) {
        self.file = file
        table = .allocate(capacity: 1)
        table.initialize(to: Self.makeTable(capacity: 1024))
    }

    deinit {
        table.pointee.deallocate()
        for old in outgrown { old.deallocate() }
        table.deallocate()
    }

    private static func makeTable(capacity: Int) -> UnsafeMutablePointer<UInt64> {
        let words = UnsafeMutablePointer<UInt64>.allocate(capacity: capacity + 1)
        words.initialize(repeating: 0, count: capacity + 1)
        words[0] = UInt64(capacity)
        return words
    }

    /// Makes this the pager of an encrypted file (before any page is read or written).
    func encrypt(with cipher: PageCipher, cachedPages: Int) {
        self.cipher = cipher
        decrypted = DecryptedPageCache(capacity: cachedPages)
        stride = PageCipher.physicalPageSize
    }

    /// The byte offset of page `page` in the file.
    @inline(__always)
    func offset(ofPage page: UInt64) -> UInt64 { page &* UInt64(stride) }

    // MARK: - Uses of decrypted pages

    /// Registers a transaction or walk that may hold decrypted bytes until `endUse` (0 and
    /// nothing to do for a plain file).
    @inline(__always)
    func beginUse() -> UInt64 { decrypted?.beginUse() ?? 0 }

    /// Ends a use begun with `beginUse`.
    @inline(__always)
    func endUse(_ epoch: UInt64) {
        if epoch != 0 { decrypted?.endUse(epoch) }
    }

    /// Runs `body` as one use (a walk outside a transaction: recovery, a writer's free-list load).
    func withUse<R>(_ body: () throws -> R) rethrows -> R {
        let epoch = beginUse()
        defer { endUse(epoch) }
        return try body()
    }

    // MARK: - Writing

    /// Writes `bytes` (whole pages) as pages from `page`, encrypting each in an encrypted file.
    func writePages(_ bytes: UnsafeRawBufferPointer, at page: UInt64) throws {
        guard let cipher, let base = bytes.baseAddress else {
            try file.write(bytes, at: offset(ofPage: page))
            return
        }
        let count = bytes.count / Layout.pageSize
        let sealed = UnsafeMutableRawPointer.allocate(byteCount: count * stride, alignment: 16)
        defer { sealed.deallocate() }
        for index in 0..<count {
            try cipher.seal(base + index * Layout.pageSize, page: page + UInt64(index), into: sealed + index * stride)
        }
        try file.write(UnsafeRawBufferPointer(start: sealed, count: count * stride), at: offset(ofPage: page))
    }

    /// The most bytes `writeCoalesced` puts into one write (256 pages).
    static let largestCoalescedWrite = 256 * Layout.pageSize

    /// Writes a commit's pages (docs/STORAGE.md, section 4, step 2) in page order, pages that
    /// follow one another in the file as one write: a small commit reuses the pages the commit
    /// before it freed, which often lie side by side, and a large commit's new pages at the end
    /// of the file all do. A plain file's run of tree pages goes to one gathering write
    /// (`pwritev`: no copy, ~5K instructions a small commit); a run with an overflow value, or
    /// an encrypted file's, is copied into one buffer and written with one write. Runs are cut
    /// at `largestCoalescedWrite` bytes. Pages in page order are written as they are (a
    /// commit sorts its pages, `PageSerializer.sortByPage`); others are sorted first.
    /// Where each byte lands is unchanged, and a power cut may tear a long write at any sector as
    /// it may tear several short ones (section 1), so the commit protocol is the same.
    func writeCoalesced(_ pages: [WrittenPage]) throws {
        var ordered = true
        for index in pages.indices.dropFirst() where pages[index - 1].page > pages[index].page {
            ordered = false
            break
        }
        let sorted = ordered ? pages : pages.sorted { $0.page < $1.page }
        try withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: max(sorted.count, 1)) { pieces in
            guard let piecesBase = pieces.baseAddress else { return }
            var start = 0
            while start < sorted.count {
                var end = start + 1
                var length = sorted[start].pageCount * Layout.pageSize
                var next = sorted[start].page + UInt64(sorted[start].pageCount)
                var gathered = sorted[start].buffer != nil
                while end < sorted.count, sorted[end].page == next,
                      length + sorted[end].pageCount * Layout.pageSize <= Self.largestCoalescedWrite
                {
                    length += sorted[end].pageCount * Layout.pageSize
                    next += UInt64(sorted[end].pageCount)
                    gathered = gathered && sorted[end].buffer != nil
                    end += 1
                }
                if end == start + 1, let buffer = sorted[start].buffer {
                    try writePages(UnsafeRawBufferPointer(start: buffer, count: Layout.pageSize), at: sorted[start].page)
                } else if gathered && cipher == nil {
                    // Tree pages' buffers, alive until the transaction ends.
                    for index in start..<end {
                        pieces[index - start] = UnsafeRawBufferPointer(start: sorted[index].buffer, count: Layout.pageSize)
                    }
                    try file.write(gathering: UnsafeBufferPointer(start: piecesBase, count: end - start),
                                   at: offset(ofPage: sorted[start].page))
                } else {
                    try writeCopied(sorted[start..<end], length: length)
                }
                start = end
            }
        }
    }

    /// A run with an overflow value, or of an encrypted file: its pages copied into one buffer,
    /// then written (sealed, when encrypted) with one write.
    private func writeCopied(_ run: ArraySlice<WrittenPage>, length: Int) throws {
        guard let first = run.first else { return }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 16)
        defer { buffer.deallocate() }
        var offset = 0
        for written in run {
            written.copy(to: buffer + offset)
            offset += written.pageCount * Layout.pageSize
        }
        try writePages(UnsafeRawBufferPointer(start: buffer, count: length), at: first.page)
    }

    /// Overwrites page `page` with zeros (an erased meta slot: never well-formed, plain or encrypted).
    func zeroPage(_ page: UInt64) throws {
        let zero = [UInt8](repeating: 0, count: stride)
        try zero.withUnsafeBytes { try file.write($0, at: offset(ofPage: page)) }
    }

    // MARK: - Reading

    /// The plaintext of the meta slot page `page` (copied, so that a concurrent rewrite cannot
    /// change it while it is decoded) and the raw bytes that identify it: the slot's checked
    /// bytes (plain file) or the nonce, tag and their ciphertext (encrypted). Nil when an
    /// encrypted slot fails authentication (never written, erased, torn or damaged).
    func metaPage(_ page: UInt64, base: UnsafeRawPointer) -> (plaintext: [UInt8], fingerprint: [UInt64])? {
        let start = base + Int(offset(ofPage: page))
        let words = (PageCipher.envelopeSize + MetaSlot.checkedLength + 8) / 8
        guard let cipher else {
            let plain = Array(UnsafeRawBufferPointer(start: start, count: MetaSlot.encodedLength))
            return (plain, [])
        }
        let raw = Array(UnsafeRawBufferPointer(start: start, count: stride))
        var plaintext = [UInt8](repeating: 0, count: Layout.pageSize)
        let opened = raw.withUnsafeBytes { rawBytes in
            plaintext.withUnsafeMutableBytes { out in
                guard let source = rawBytes.baseAddress, let target = out.baseAddress else { return false }
                return cipher.open(source, page: page, into: target)
            }
        }
        guard opened else { return nil }
        let fingerprint = raw.withUnsafeBytes { bytes in (0..<words).map { bytes.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self) } }
        return (plaintext, fingerprint)
    }

    /// The plaintext of `pages` pages from `reference.page` of an encrypted file, decrypted (or
    /// from the cache) and checked against the reference's checksum.
    func decryptedBytes(_ reference: PageReference, pages: UInt64, base: UnsafeRawPointer) throws -> UnsafeRawPointer {
        guard let cipher, let decrypted else { throw StorageError.misuse("a plain file has no decrypted pages") }
        let count = Int(pages)
        if let cached = decrypted.lookup(page: reference.page, checksum: reference.checksum, pages: count) { return cached }
        let plaintext = UnsafeMutableRawPointer.allocate(byteCount: count * Layout.pageSize, alignment: 16)
        var owned = true
        defer { if owned { plaintext.deallocate() } }
        for index in 0..<count {
            let number = reference.page + UInt64(index)
            guard cipher.open(base + Int(offset(ofPage: number)), page: number, into: plaintext + index * Layout.pageSize) else {
                throw StorageError.corrupt(page: number, "the page fails authentication: it was changed, torn, or is not "
                    + "this file's page \(number)")
            }
        }
        let actual = try Checksum.ofPages(plaintext, count: count, page: reference.page)
        guard actual == reference.checksum else { throw StorageError.corrupt(page: reference.page, "checksum mismatch") }
        owned = false
        return decrypted.insert(page: reference.page, checksum: reference.checksum, pages: count, bytes: plaintext)
    }

    /// Whether the map already covers `pageCount` pages (reading them needs no `mmap`).
    func isMapped(covering pageCount: UInt64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return base != nil && mappedPages >= pageCount
    }

    /// The map, covering at least `pageCount` pages.
    func map(covering pageCount: UInt64) throws -> UnsafeRawPointer {
        lock.lock()
        defer { lock.unlock() }
        if let base, mappedPages >= pageCount { return base }
        let length = pageCount * UInt64(stride)
        // A page of the map past the end of the file faults (SIGBUS) when read: a commit that
        // counts more pages than the file holds (a file cut short) is damage, found here.
        let size = try file.size()
        guard length <= size else {
            let pages = size / UInt64(stride)
            throw StorageError.corrupt(page: pages, "a commit counts \(pageCount) pages but the file ends after \(pages): "
                + "it was cut short")
        }
        let address = try file.map(length: length)
        base = address
        mappedPages = pageCount
        return address
    }

    /// Whether the page was verified with this checksum (no lock: see the type's comment).
    @inline(__always)
    func isVerified(_ reference: PageReference) -> Bool {
        let words = table.pointee
        return reference.page < words[0] && words[Int(reference.page) &+ 1] == reference.checksum && reference.checksum != 0
    }

    /// Records that the page passed its check with this checksum (a plain file's page: an
    /// encrypted file's are never marked, as `Snapshot.verifiedBytes` reads a marked page in place).
    func markVerified(_ reference: PageReference) {
        guard cipher == nil else { return }
        lock.lock()
        defer { lock.unlock() }
        setMark(reference)
    }

    /// `markVerified` under the lock.
    private func setMark(_ reference: PageReference) {
        var words = table.pointee
        let capacity = Int(words[0])
        let index = Int(reference.page)
        if index >= capacity {
            let grown = Self.makeTable(capacity: max(index + 1, capacity * 2))
            (grown + 1).update(from: words + 1, count: capacity)
            table.pointee = grown
            outgrown.append(words)
            words = grown
        }
        words[index + 1] = reference.checksum
    }

    /// Records that this process wrote these pages (a run: its first page, with the run's
    /// checksum) with these bytes, which it hashed itself: they need not be hashed again when
    /// read. A plain file only (an encrypted file's pages are checked as they are decrypted).
    /// Called once the commit that wrote them is published; a failed sync forgets every mark
    /// (`forgetPlainVerifications`).
    func markWritten(_ pages: [WrittenPage]) {
        guard cipher == nil else { return }
        lock.lock()
        defer { lock.unlock() }
        for written in pages { setMark(PageReference(page: written.page, checksum: written.checksum)) }
    }

    /// Forgets the plain file's verifications (after a failed sync: the OS may have dropped
    /// written pages from its cache). Readers may run meanwhile: one that still sees a mark read
    /// it before the sync failed, as if it had read a moment earlier; one that sees 0 hashes the
    /// page again.
    func forgetPlainVerifications() {
        lock.lock()
        defer { lock.unlock() }
        let words = table.pointee
        (words + 1).update(repeating: 0, count: Int(words[0]))
    }

    /// Forgets every verification (after recovery replaced a commit; no reader is running then).
    func forgetVerifications() {
        lock.lock()
        defer { lock.unlock() }
        let words = table.pointee
        (words + 1).update(repeating: 0, count: Int(words[0]))
        decrypted?.removeAll()
    }
}

/// A tree looked up by a read transaction.
struct ReadTree: @unchecked Sendable {
    // @unchecked Sendable: only read transactions' `TreeState`s are shared, and nothing changes
    // them (only write transactions, which have their own, change a `TreeState`).
    let tree: TreeState
}

/// One commit of the file as a reader sees it: its meta slot and the map. Pages are checked
/// against the references that lead to them. A class: every tree walk holds it, and a reference
/// costs one retain where a struct holding a class costs an outlined copy.
final class Snapshot {
    let meta: MetaSlot
    let base: UnsafeRawPointer
    let pager: Pager
    /// Trees that read transactions of this commit looked up: read transactions share a
    /// snapshot (the environment keeps the latest), and a read never changes a `TreeState`.
    private let readTrees = Mutex<[ReadTree]>([])
    private static let readTreesKept = 64

    init(meta: MetaSlot, pager: Pager) throws {
        self.meta = meta
        self.pager = pager
        base = try pager.map(covering: meta.pageCount)
    }

    /// The tree `name` as a read transaction of this commit looked it up before, if one did.
    @inline(__always)
    func readTree(_ name: String) -> TreeState? {
        readTrees.withLock { trees in
            for shared in trees where shared.tree.name == name { return shared.tree }
            return nil
        }
    }

    /// Shares a read transaction's lookup of a tree with the next ones.
    func rememberReadTree(_ tree: TreeState) {
        readTrees.withLock { trees in
            if trees.count < Self.readTreesKept { trees.append(ReadTree(tree: tree)) }
        }
    }

    @inline(__always)
    private func checkRange(_ page: UInt64, pages: UInt64, from: UInt64? = nil) throws {
        guard page >= Layout.firstDataPage, pages >= 1, page < meta.pageCount, pages <= meta.pageCount &- page else {
            throw outsideTheFile(page, from: from)
        }
    }

    @inline(never)
    private func outsideTheFile(_ page: UInt64, from: UInt64?) -> StorageError {
        StorageError.corrupt(page: from ?? page, "a reference to page \(page) lies outside the file's \(meta.pageCount) pages")
    }

    /// The bytes of `pages` pages from `reference.page`, after checking their checksum: in place
    /// when this process verified them before (inlined: a range check and a table read), else
    /// hashed (or decrypted) now. Only a plain file's pages are ever marked verified.
    @inline(__always)
    func verifiedBytes(_ reference: PageReference, pages: UInt64) throws -> UnsafeRawPointer {
        try checkRange(reference.page, pages: pages)
        if pager.isVerified(reference) { return base + Int(reference.page) &* Layout.pageSize }
        return try checkedBytes(reference, pages: pages)
    }

    /// `verifiedBytes` of pages not marked verified (their range checked): decrypted, or hashed
    /// and marked.
    @inline(never)
    private func checkedBytes(_ reference: PageReference, pages: UInt64) throws -> UnsafeRawPointer {
        if pager.cipher != nil { return try pager.decryptedBytes(reference, pages: pages, base: base) }
        let start = base + Int(reference.page) * Layout.pageSize
        let actual = try Checksum.ofPages(start, count: Int(pages), page: reference.page)
        guard actual == reference.checksum else {
            throw StorageError.corrupt(page: reference.page, "checksum mismatch")
        }
        pager.markVerified(reference)
        return start
    }

    /// A branch or leaf page.
    @inline(__always)
    func treePage(_ reference: PageReference) throws -> PageView {
        let view = PageView(base: try verifiedBytes(reference, pages: 1), number: reference.page)
        try view.validateTreePage()
        return view
    }

    /// The page at `level` of a tree `depth` levels deep (the root is level 1): a leaf at the
    /// last level, a branch above it (`PageView.validateTreePage(level:depth:)`).
    @inline(__always)
    func treePage(_ reference: PageReference, level: Int, depth: Int) throws -> PageView {
        let view = PageView(base: try verifiedBytes(reference, pages: 1), number: reference.page)
        try view.validateTreePage(level: level, depth: depth)
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
}

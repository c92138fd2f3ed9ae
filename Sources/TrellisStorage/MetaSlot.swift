/// The file header (page 0) and the two meta slots (pages 1 and 2): docs/STORAGE.md, 2.1-2.2.
enum FileHeader {
    static let magic: UInt64 = 0x4552_4F54_534C_5254 // "TRLSTORE" read little-endian
    /// The plain format written (version 9: leaves of 4-byte cell headers, docs/STORAGE.md 2.5;
    /// tree pages checksummed over their used bytes, 2.4; the pages a commit freed listed in its
    /// meta slot, 2.10).
    static let version: UInt32 = 9
    /// The encrypted format written (section 12): version 9's structures in encrypted pages.
    static let encryptedVersion: UInt32 = 10
    /// Versions read besides those written, plain and encrypted: 3 and 4 (leaves of 8-byte cell
    /// headers, kind 2), 5 and 6 (4-byte cell headers, kind 6), both with every page
    /// checksummed over all its bytes, and 7 and 8 (used-bytes checksums). Such a file opens, is
    /// read (each page by its own kind and flag) and takes commits; the pages a commit writes are
    /// of this build's layout, its header keeps the version it was made with, and its commits
    /// record every freed page in the free tree, never in the slot (docs/STORAGE.md 2.1, 2.10).
    static let olderVersions: [(plain: UInt32, encrypted: UInt32)] = [(3, 4), (5, 6), (7, 8)]

    /// Whether commits to a file of `version` list the pages they free in their meta slot
    /// (docs/STORAGE.md 2.10): versions 9 and 10 only. A build that knows only older versions
    /// refuses such a file (its header version), so it never reads such a slot as damage.
    static func listsFreedPagesInSlot(version: UInt32) -> Bool {
        version == Self.version || version == encryptedVersion
    }
    /// Versions 1 (plain) and 2 (encrypted) of development builds kept the free list as a chain
    /// of pages rewritten at every commit; they are refused (docs/STORAGE.md, 2.1).
    static let chainFreeListVersions: ClosedRange<UInt32> = 1...2

    /// The header page of a new file (version 10 with the cipher's fields when encrypted).
    static func encode(into page: UnsafeMutableRawPointer, cipher: PageCipher? = nil) {
        page.initializeMemory(as: UInt8.self, repeating: 0, count: Layout.pageSize)
        page.storeLE(magic, at: 0)
        page.storeLE(cipher == nil ? version : encryptedVersion, at: 8)
        page.storeLE(UInt32(Layout.pageSize), at: 12)
        page.storeLE(Checksum.xxh64(UnsafeRawBufferPointer(start: page, count: 16)), at: 16)
        cipher?.encodeHeaderFields(into: page)
    }

    /// Checks a header page; returns whether the file is encrypted (version 4, 6, 8 or 10) and
    /// its version.
    @discardableResult
    static func validate(_ page: UnsafeRawPointer) throws -> (encrypted: Bool, version: UInt32) {
        guard page.loadLE(UInt64.self, at: 0) == magic else {
            throw StorageError(.incompatibleFile, "TrellisStorage: the file is not a TrellisStorage file (wrong magic). "
                + "Open it with the engine that wrote it.")
        }
        guard page.loadLE(UInt64.self, at: 16) == Checksum.xxh64(UnsafeRawBufferPointer(start: page, count: 16)) else {
            throw StorageError.corrupt(page: 0, "the file header fails its checksum")
        }
        let version = page.loadLE(UInt32.self, at: 8)
        let pageSize = page.loadLE(UInt32.self, at: 12)
        if chainFreeListVersions.contains(version) {
            throw StorageError(.incompatibleFile, "TrellisStorage: the file has format version \(version), written by a "
                + "development build before the free list became a tree (format 3); this build does not read "
                + "it. Open it with the build that wrote it and copy its trees into a new file (for a Realm: writeCopy(toFile:)).")
        }
        let plain = olderVersions.map(\.plain) + [Self.version]
        let encrypted = olderVersions.map(\.encrypted) + [encryptedVersion]
        guard plain.contains(version) || encrypted.contains(version), pageSize == UInt32(Layout.pageSize) else {
            throw StorageError(.incompatibleFile, "TrellisStorage: the file has format version \(version) and page size "
                + "\(pageSize); this build reads versions 3, 5, 7 and \(Self.version) (plain), 4, 6, 8 and \(encryptedVersion) "
                + "(encrypted) with \(Layout.pageSize)-byte pages. A newer version was written by a newer build: open it "
                + "with that build.")
        }
        return (encrypted.contains(version), version)
    }
}

/// The pages a commit freed, listed in its meta slot for the commit after it (docs/STORAGE.md
/// 2.10): that commit reuses them, or records them in the free tree, under `freedBy` = the
/// slot's commit, exactly as a record of the free tree would hold them.
struct FreedInSlot: Equatable {
    /// For `own`: the durable commit the pages were written after (a record's `writtenAfter`).
    var writtenAfter: UInt64 = 0
    /// Pages of the `ownWrites` section (written by the committing process after `writtenAfter`).
    var own: [UInt64] = []
    /// Pages of the `durable` section.
    var others: [UInt64] = []

    var count: Int { own.count + others.count }
    var isEmpty: Bool { own.isEmpty && others.isEmpty }
}

/// One commit as its meta slot records it. Immutable, and a class: a slot is handed on (the
/// writer's slots, each snapshot, the writer's cache) several times a commit, and a struct of
/// three arrays was copied and destroyed through outlined value witnesses each time (~4K
/// instructions a small commit, issue 37); a reference costs one retain.
final class MetaSlot: Equatable, Sendable {
    static let magic: UInt64 = 0x4154_454D_534C_5254 // "TRLSMETA"
    static let checkedLength = 104
    /// Where the spare pages start in the slot's page.
    static let sparesOffset = checkedLength + 8
    /// At most this many spare pages (reusable pages the commit left over, section 2.9).
    static let spareCapacity = 256
    /// At most this many pages freed by the commit listed in the slot (2.10): with 256 spares
    /// and the list's `writtenAfter`, the slot still fits its page.
    static let freedCapacity = 240
    /// More pages than any file can have: 2^40 (4 PiB); on 32-bit platforms (watchOS's arm64_32)
    /// as many as an `Int` byte offset reaches, so that no count of a damaged slot traps when it
    /// is converted to `Int`.
    static let maximumPageCount: UInt64 = MemoryLayout<Int>.size >= 8 ? 1 << 40 : UInt64(Int.max / Layout.pageSize)

    let txnID: UInt64
    let durableTxnID: UInt64
    let pageCount: UInt64
    let catalog: PageReference?
    /// The root of the free tree (docs/STORAGE.md, 2.9).
    let freeList: PageReference?
    /// Pages recorded in the free tree (spares and the freed list not counted).
    let freeListCount: UInt64
    let catalogDepth: UInt64
    let freeTreeDepth: UInt64
    /// Pages free for any later commit, kept in the slot (at most `spareCapacity`).
    let spares: [UInt64]
    /// The pages this commit freed, when it kept them in the slot (2.10; versions 9 and 10).
    let freed: FreedInSlot

    init(txnID: UInt64, durableTxnID: UInt64, pageCount: UInt64, catalog: PageReference?, freeList: PageReference?,
         freeListCount: UInt64, catalogDepth: UInt64, freeTreeDepth: UInt64 = 0, spares: [UInt64] = [],
         freed: FreedInSlot = FreedInSlot()) {
        self.txnID = txnID
        self.durableTxnID = durableTxnID
        self.pageCount = pageCount
        self.catalog = catalog
        self.freeList = freeList
        self.freeListCount = freeListCount
        self.catalogDepth = catalogDepth
        self.freeTreeDepth = freeTreeDepth
        self.spares = spares
        self.freed = freed
    }

    /// The same commit with another durable commit (a sealed slot, section 5).
    func with(durableTxnID: UInt64) -> MetaSlot {
        MetaSlot(txnID: txnID, durableTxnID: durableTxnID, pageCount: pageCount, catalog: catalog, freeList: freeList,
                 freeListCount: freeListCount, catalogDepth: catalogDepth, freeTreeDepth: freeTreeDepth, spares: spares,
                 freed: freed)
    }

    static func == (lhs: MetaSlot, rhs: MetaSlot) -> Bool {
        lhs.txnID == rhs.txnID && lhs.durableTxnID == rhs.durableTxnID && lhs.pageCount == rhs.pageCount
            && lhs.catalog == rhs.catalog && lhs.freeList == rhs.freeList && lhs.freeListCount == rhs.freeListCount
            && lhs.catalogDepth == rhs.catalogDepth && lhs.freeTreeDepth == rhs.freeTreeDepth && lhs.spares == rhs.spares
            && lhs.freed == rhs.freed
    }

    /// The word at offset 88: the spare count in bits 0-15, the freed list's `own` count in bits
    /// 16-31 and its `others` count in bits 32-47 (2.2, 2.10). A slot without a freed list has
    /// just the spare count there, as versions 3 to 8 wrote it.
    private static func counts(spares: Int, own: Int, others: Int) -> UInt64 {
        UInt64(spares) | UInt64(own) << 16 | UInt64(others) << 32
    }

    /// Bytes from `sparesOffset` that the spares and the freed list take (what the checksum at
    /// 96 covers).
    private static func listBytes(spares: Int, freed: Int) -> Int {
        spares * 8 + (freed > 0 ? 8 + freed * 8 : 0)
    }

    /// Writes the slot into a page buffer: every one of its 4,096 bytes (zeros past the lists).
    func encode(into page: UnsafeMutableRawPointer) {
        page.storeLE(Self.magic, at: 0)
        page.storeLE(txnID, at: 8)
        page.storeLE(durableTxnID, at: 16)
        page.storeLE(pageCount, at: 24)
        page.storeLE(catalog?.page ?? 0, at: 32)
        page.storeLE(catalog?.checksum ?? 0, at: 40)
        page.storeLE(freeList?.page ?? 0, at: 48)
        page.storeLE(freeList?.checksum ?? 0, at: 56)
        page.storeLE(freeListCount, at: 64)
        page.storeLE(catalogDepth, at: 72)
        page.storeLE(freeTreeDepth, at: 80)
        page.storeLE(Self.counts(spares: spares.count, own: freed.own.count, others: freed.others.count), at: 88)
        var offset = Self.sparesOffset
        for spare in spares {
            page.storeLE(spare, at: offset)
            offset += 8
        }
        if !freed.isEmpty {
            page.storeLE(freed.writtenAfter, at: offset)
            offset += 8
            for number in freed.own {
                page.storeLE(number, at: offset)
                offset += 8
            }
            for number in freed.others {
                page.storeLE(number, at: offset)
                offset += 8
            }
        }
        (page + offset).zeroBytes(count: Layout.pageSize - offset)
        page.storeLE(Checksum.xxh64(UnsafeRawBufferPointer(start: page + Self.sparesOffset, count: offset - Self.sparesOffset)),
                     at: 96)
        let checksum = Checksum.xxh64(UnsafeRawBufferPointer(start: page, count: Self.checkedLength))
        page.storeLE(checksum, at: Self.checkedLength)
    }

    /// The most bytes of a slot that `decode` reads: the checked fields, their checksum, the
    /// spares and the freed list.
    static let encodedLength = sparesOffset + listBytes(spares: spareCapacity, freed: freedCapacity)

    /// The slot in `page`, or nil when it is not well-formed (never written, torn or damaged).
    ///
    /// `page` may be the shared map, which a writer of another process can be rewriting while
    /// this runs (a read transaction decodes the slot without the table lock, section 6): the
    /// slot is first copied, and the checksum and every field are read from that one copy. Read
    /// in place, the checksum could pass on the old bytes and a field then come from the new
    /// ones (a commit's number with the next commit's catalog checksum: a sound file reported as
    /// damaged, found by KillTests).
    static func decode(_ page: UnsafeRawPointer) -> MetaSlot? {
        decode(page, keepingCheckedWords: false)?.meta
    }

    /// `decode`, also giving the checked fields and their checksum as 64-bit words, read from
    /// the same copy (what `LatestSnapshot` compares the slot with).
    static func decodeWithCheckedWords(_ page: UnsafeRawPointer) -> (meta: MetaSlot, checkedWords: [UInt64])? {
        decode(page, keepingCheckedWords: true)
    }

    /// The 64-bit words of the checked fields and their checksum.
    static let checkedWordCount = (checkedLength + 8) / 8

    private static func decode(_ page: UnsafeRawPointer, keepingCheckedWords: Bool)
        -> (meta: MetaSlot, checkedWords: [UInt64])?
    {
        withUnsafeTemporaryAllocation(byteCount: encodedLength, alignment: 8) { copy in
            guard let base = copy.baseAddress else { return nil }
            // The checked fields first, then as many bytes of lists as their counts (in that
            // copy) say: bytes of another write read in the second copy fail the checksum at 96,
            // which is in the first.
            base.copyMemory(from: page, byteCount: sparesOffset)
            guard let lists = listLength(UnsafeRawPointer(base)) else { return nil }
            (base + sparesOffset).copyMemory(from: page + sparesOffset, byteCount: lists)
            guard let meta = decodeStable(UnsafeRawPointer(base)) else { return nil }
            guard keepingCheckedWords else { return (meta, []) }
            return (meta, (0..<checkedWordCount).map { base.load(fromByteOffset: $0 * 8, as: UInt64.self) })
        }
    }

    /// The counts at offset 88 split, or nil when they are out of bounds.
    private static func splitCounts(_ page: UnsafeRawPointer) -> (spares: Int, own: Int, others: Int)? {
        let word = page.loadLE(UInt64.self, at: 88)
        let spares = Int(word & 0xFFFF), own = Int(word >> 16 & 0xFFFF), others = Int(word >> 32 & 0xFFFF)
        guard word >> 48 == 0, spares <= spareCapacity, own + others <= freedCapacity else { return nil }
        return (spares, own, others)
    }

    /// Bytes of lists after `sparesOffset` that the slot's counts say it has.
    private static func listLength(_ page: UnsafeRawPointer) -> Int? {
        splitCounts(page).map { listBytes(spares: $0.spares, freed: $0.own + $0.others) }
    }

    /// `decode` of bytes no one changes meanwhile.
    private static func decodeStable(_ page: UnsafeRawPointer) -> MetaSlot? {
        guard page.loadLE(UInt64.self, at: 0) == magic,
              page.loadLE(UInt64.self, at: checkedLength)
                == Checksum.xxh64(UnsafeRawBufferPointer(start: page, count: checkedLength))
        else { return nil }
        let txnID = page.loadLE(UInt64.self, at: 8)
        let pageCount = page.loadLE(UInt64.self, at: 24)
        let catalogDepth = page.loadLE(UInt64.self, at: 72)
        let freeTreeDepth = page.loadLE(UInt64.self, at: 80)
        // Counts that no file can have make the slot unusable (a depth past Int.max trapped on
        // conversion, and a commit number of UInt64.max left no number for the next commit:
        // fuzzer findings), like a failed checksum.
        guard txnID > 0, txnID < UInt64.max, pageCount >= Layout.firstDataPage, pageCount < maximumPageCount, catalogDepth <= 32,
              freeTreeDepth <= 32, let counts = splitCounts(page),
              page.loadLE(UInt64.self, at: 64) < maximumPageCount,
              page.loadLE(UInt64.self, at: 96)
                == Checksum.xxh64(UnsafeRawBufferPointer(start: page + sparesOffset,
                                                         count: listBytes(spares: counts.spares, freed: counts.own + counts.others)))
        else { return nil }
        func numbers(_ count: Int, at start: Int) -> [UInt64] {
            var result: [UInt64] = []
            result.reserveCapacity(count)
            for index in 0..<count { result.append(page.loadLE(UInt64.self, at: start + index * 8)) }
            return result
        }
        let spares = numbers(counts.spares, at: sparesOffset)
        var freed = FreedInSlot()
        if counts.own + counts.others > 0 {
            let listStart = sparesOffset + counts.spares * 8
            freed.writtenAfter = page.loadLE(UInt64.self, at: listStart)
            freed.own = numbers(counts.own, at: listStart + 8)
            freed.others = numbers(counts.others, at: listStart + 8 + counts.own * 8)
        }
        func reference(_ offset: Int) -> PageReference? {
            let number = page.loadLE(UInt64.self, at: offset)
            return number == 0 ? nil : PageReference(page: number, checksum: page.loadLE(UInt64.self, at: offset + 8))
        }
        return MetaSlot(txnID: txnID, durableTxnID: page.loadLE(UInt64.self, at: 16), pageCount: pageCount,
                        catalog: reference(32), freeList: reference(48),
                        freeListCount: page.loadLE(UInt64.self, at: 64),
                        catalogDepth: catalogDepth, freeTreeDepth: freeTreeDepth, spares: spares, freed: freed)
    }
}

/// A tree's entry in the catalog (docs/STORAGE.md, 2.8).
struct TreeDescriptor: Equatable {
    static let encodedLength = 32

    var root: PageReference?
    var count: UInt64
    var order: KeyOrder
    var depth: Int

    func encoded() -> [UInt8] {
        withEncoded { Array($0) }
    }

    /// The encoding lent to `body`, on the stack.
    func withEncoded<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: Self.encodedLength, alignment: 8) { buffer in
            guard let base = buffer.baseAddress else { return try body(UnsafeRawBufferPointer(buffer)) }
            base.initializeMemory(as: UInt8.self, repeating: 0, count: Self.encodedLength)
            base.storeLE(root?.page ?? 0, at: 0)
            base.storeLE(root?.checksum ?? 0, at: 8)
            base.storeLE(count, at: 16)
            base.storeLE(order.rawValue, at: 24)
            base.storeLE(UInt8(clamping: depth), at: 25)
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, page: UInt64) throws -> TreeDescriptor {
        guard bytes.count == encodedLength, let base = bytes.baseAddress,
              let order = KeyOrder(rawValue: base.load(fromByteOffset: 24, as: UInt8.self))
        else { throw StorageError.corrupt(page: page, "a catalog entry is malformed") }
        let rootPage = base.loadLE(UInt64.self, at: 0)
        let depth = Int(base.load(fromByteOffset: 25, as: UInt8.self))
        let count = base.loadLE(UInt64.self, at: 16)
        guard depth <= 32, (rootPage == 0) == (depth == 0) else {
            throw StorageError.corrupt(page: page, "a catalog entry has depth \(depth)")
        }
        // An empty tree counting entries passed check() and reported them (a fuzzer finding).
        guard rootPage != 0 || count == 0 else {
            throw StorageError.corrupt(page: page, "a catalog entry of an empty tree counts \(count) entries")
        }
        return TreeDescriptor(root: rootPage == 0 ? nil : PageReference(page: rootPage, checksum: base.loadLE(UInt64.self, at: 8)),
                              count: count, order: order, depth: depth)
    }
}

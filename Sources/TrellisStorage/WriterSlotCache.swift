/// The two meta slots of a plain file as the writer of this process last decoded or wrote them,
/// with the checked bytes (0..<112, docs/STORAGE.md 2.2) each was decoded from: a write
/// transaction that begins after this process's own commit takes them from here instead of
/// decoding both slots again (issue 37, STORAGE.md 13.2 item 5).
///
/// It answers only while both slot pages in the map still hold exactly those bytes, compared
/// word by word, so a slot that anyone else wrote since (another process's commit, a seal,
/// recovery, a failed commit taking its slot back) or that was damaged is decoded again, as
/// before. The spares after byte 112 are covered by their checksum, among the compared bytes
/// (the rule readers follow too, `LatestSnapshot`). Used by the writer only, under the writer
/// lock, which every writer of a slot holds: nothing writes a slot while it compares.
struct WriterSlotCache {
    /// The words of slot 0's checked bytes, then slot 1's; empty: nothing cached.
    private var words: [UInt64] = []
    /// The slots, newest first (as `StorageEnvironment.slots()`).
    private var decoded: [(slot: Int, meta: MetaSlot)] = []

    private static let wordsPerSlot = MetaSlot.checkedWordCount

    /// The slots, if both slot pages (at `base`, the map of a plain file) hold the cached bytes.
    func slots(in base: UnsafeRawPointer, pager: Pager) -> [(slot: Int, meta: MetaSlot)]? {
        guard words.count == 2 * Self.wordsPerSlot else { return nil }
        for (slot, page) in Layout.metaPages.enumerated() {
            let start = base + Int(pager.offset(ofPage: page))
            for index in 0..<Self.wordsPerSlot
            where start.loadUnaligned(fromByteOffset: index &* 8, as: UInt64.self) != words[slot &* Self.wordsPerSlot &+ index] {
                return nil
            }
        }
        return decoded
    }

    /// Decodes both slots at `base` (a plain file's map), remembering them when both are
    /// well-formed. Returns the well-formed ones, newest first.
    mutating func decode(in base: UnsafeRawPointer, pager: Pager) -> [(slot: Int, meta: MetaSlot)] {
        var found: [(slot: Int, meta: MetaSlot)] = []
        var foundWords: [UInt64] = []
        for (slot, page) in Layout.metaPages.enumerated() {
            guard let slotDecoded = MetaSlot.decodeWithCheckedWords(base + Int(pager.offset(ofPage: page))) else { continue }
            found.append((slot, slotDecoded.meta))
            foundWords += slotDecoded.checkedWords
        }
        let sorted = StorageEnvironment.newestFirst(found)
        if sorted.count == 2 && foundWords.count == 2 * Self.wordsPerSlot {
            words = foundWords
            decoded = sorted
        } else {
            forget()
        }
        return sorted
    }

    /// This process wrote `meta` into `slot`, encoded in `page` (whose first bytes are the
    /// checked ones): the cache follows when it held both slots before.
    mutating func wrote(_ meta: MetaSlot, slot: Int, page: UnsafeRawPointer) {
        guard words.count == 2 * Self.wordsPerSlot, slot >= 0, slot < 2 else { return }
        // Both slots are cached (`decode` keeps two or none): the other one stays. Ordered as
        // `newestFirst` orders them, without filtering, joining and sorting arrays of tuples
        // (~2K instructions a commit).
        guard decoded.count == 2, let other = decoded.first(where: { $0.slot != slot }) else {
            forget()
            return
        }
        for index in 0..<Self.wordsPerSlot {
            words[slot &* Self.wordsPerSlot &+ index] = page.loadUnaligned(fromByteOffset: index &* 8, as: UInt64.self)
        }
        let written = (slot: slot, meta: meta)
        let writtenIsNewer = (meta.txnID, meta.durableTxnID) > (other.meta.txnID, other.meta.durableTxnID)
        decoded[0] = writtenIsNewer ? written : other
        decoded[1] = writtenIsNewer ? other : written
    }

    /// The checked words cached for `slot` (what `LatestSnapshot` compares), if any.
    func checkedWords(of slot: Int) -> [UInt64]? {
        guard words.count == 2 * Self.wordsPerSlot, slot >= 0, slot < 2 else { return nil }
        return Array(words[(slot &* Self.wordsPerSlot)..<((slot &+ 1) &* Self.wordsPerSlot)])
    }

    /// Drops what is cached (the next write transaction decodes both slots).
    mutating func forget() {
        words = []
        decoded = []
    }
}

extension StorageEnvironment {
    /// `slots()` for a write transaction (which holds the writer lock): from `writerSlots` when
    /// the slot pages are as this process's writer left them.
    func slotsForWriter() throws -> [(slot: Int, meta: MetaSlot)] {
        guard pager.cipher == nil else { return try slots() }
        let base = try pager.map(covering: Layout.firstDataPage)
        return writerSlots.slots(in: base, pager: pager) ?? writerSlots.decode(in: base, pager: pager)
    }

    /// The writer wrote `meta` into meta slot `slot` (a plain file's `page`, as written) and it
    /// is about to be published: the writer's cache follows, and the next read transaction of
    /// this process begins on it without decoding the slot (`pinnedSnapshot`, which compares
    /// the slot's bytes with these before using it, as it does for a slot it decoded).
    func published(_ meta: MetaSlot, slot: Int, page: UnsafeRawBufferPointer) {
        guard pager.cipher == nil, let base = page.baseAddress, page.count >= MetaSlot.checkedWordCount * 8 else { return }
        writerSlots.wrote(meta, slot: slot, page: base)
        let words = (0..<MetaSlot.checkedWordCount).map { base.loadUnaligned(fromByteOffset: $0 &* 8, as: UInt64.self) }
        // Only over the map as it is: a commit that grew the file leaves the `mmap` (and its
        // failure) to the transactions after it, as before.
        guard pager.isMapped(covering: meta.pageCount), let snapshot = try? Snapshot(meta: meta, pager: pager) else { return }
        let made = LatestSnapshot(slot: slot, snapshot: snapshot, fingerprint: words)
        latest.withLock { $0 = made }
    }

    /// The snapshot `published` made of `newest` (the newest slot, as `slotsForWriter` returned
    /// it), for the write transaction that begins on it: only when it is that very slot object.
    /// The writer's cache hands back the one this process wrote only after comparing both slot
    /// pages with the bytes written (`WriterSlotCache.slots(in:pager:)`, at this `beginWrite`);
    /// a slot decoded again (after another process's commit, a seal or recovery) is a new
    /// object. So the identity says the slot still holds the bytes the snapshot was made from,
    /// and `LatestSnapshot.isCurrent`'s compare of the same words again is not made here.
    func publishedSnapshot(of newest: (slot: Int, meta: MetaSlot)) -> Snapshot? {
        guard pager.cipher == nil, let made = latest.withLock({ $0 }), made.slot == newest.slot,
              made.snapshot.meta === newest.meta
        else { return nil }
        return made.snapshot
    }

    /// Slots in the order a writer chooses among them: newest first; of two copies of one
    /// commit, the sealed one (section 5).
    static func newestFirst(_ slots: [(slot: Int, meta: MetaSlot)]) -> [(slot: Int, meta: MetaSlot)] {
        slots.sorted { ($0.meta.txnID, $0.meta.durableTxnID) > ($1.meta.txnID, $1.meta.durableTxnID) }
    }
}

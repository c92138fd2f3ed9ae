/// The memory a write transaction's changes to one tree live in until commit: its dirty pages
/// (`DirtyPage`, 4 KiB buffers in page format) and the values too large for a leaf that it put
/// (written as overflow runs at commit). Freed when the tree's state goes, after the transaction
/// (the page buffers go back to `PageBufferPool`, for the next transactions).
///
/// A value read in a write transaction may be in one of these; it stays valid until the tree next
/// changes (docs/STORAGE.md 3). Buffers a merge or a root change stopped using are reused for the
/// tree's next dirty pages; values replaced or removed are kept until they pass `retainedLimit`
/// bytes, then freed together, so a transaction that keeps replacing large values stays bounded.
final class TreePages {
    /// Retired values are freed once they take more than this.
    static let retainedLimit = 32 << 20

    // Not checked for exclusive access at run time (as `TreeState`'s): used by one write
    // transaction on one thread.
    @exclusivity(unchecked) private var buffers: [UnsafeMutableRawPointer] = []
    @exclusivity(unchecked) private var spare: [DirtyPage] = []
    /// Spare buffers that still hold a page exactly as a commit wrote it (`CommittedBuffer`).
    @exclusivity(unchecked) private var committed: [CommittedBuffer] = []
    /// Pages written from this tree's buffers by the commit under way (`noteWritten`), committed
    /// buffers once it settles.
    @exclusivity(unchecked) private var written: [CommittedBuffer] = []
    /// Values put by the transaction that its leaves still reference, by address.
    @exclusivity(unchecked) private var pending: Set<UnsafeMutableRawPointer> = []
    @exclusivity(unchecked) private var retired: [UnsafeMutableRawPointer] = []
    /// Bytes of the retired values.
    @exclusivity(unchecked) private(set) var retainedBytes = 0

    deinit {
        PageBufferPool.shared.give(buffers)
        for value in pending { value.deallocate() }
        for value in retired { value.deallocate() }
    }

    /// Buffers allocated for this tree (in use or spare).
    var bufferCount: Int { buffers.count }

    /// A buffer for a dirty page (its content is to be written by the caller). A blank spare
    /// first; a committed buffer only when there is none (the page it held is copied from the
    /// map if the tree changes it later).
    @inline(__always)
    func newPage() -> DirtyPage {
        if let page = spare.popLast() { return page }
        if let held = committed.popLast() { return held.page }
        let buffer = PageBufferPool.shared.take()
        buffers.append(buffer)
        return DirtyPage(base: buffer)
    }

    /// The spare buffer that holds the committed page `reference` exactly as this process wrote
    /// it (its used bytes are the ones `reference.checksum` was computed over), taken for
    /// editing; nil when no buffer does (the page is then copied from the map).
    @inline(__always)
    func takeCommitted(_ reference: PageReference) -> DirtyPage? {
        guard !committed.isEmpty else { return nil }
        return takeCommittedBuffer(reference)
    }

    private func takeCommittedBuffer(_ reference: PageReference) -> DirtyPage? {
        for index in committed.indices where committed[index].reference == reference {
            let held = committed[index].page
            // Order does not matter: the last one takes its place.
            committed[index] = committed[committed.count &- 1]
            committed.removeLast()
            return held
        }
        return nil
    }

    /// The commit under way wrote `pages` (those of them that are tree pages, from this tree's
    /// buffers) with these numbers and checksums; once it has published, `settle` keeps their
    /// buffers as committed ones.
    func noteWritten(_ pages: ArraySlice<WrittenPage>) {
        for page in pages {
            guard let buffer = page.buffer else { continue }
            written.append(CommittedBuffer(page: DirtyPage(base: UnsafeMutableRawPointer(mutating: buffer)),
                                           reference: PageReference(page: page.page, checksum: page.checksum)))
        }
    }

    /// A page no longer referenced by the tree, for reuse.
    func recycle(_ page: DirtyPage) { spare.append(page) }

    /// After a commit wrote the tree (its root is a committed page again, no dirty page is
    /// referenced): every buffer is spare again, for the tree's next write transaction
    /// (`CarriedTrees`), at most `kept` of them (the others go back to the pool); the values kept
    /// for the commit, written as overflow runs by now, are freed.
    func settle(keeping kept: Int) {
        if buffers.count > kept {
            PageBufferPool.shared.give(Array(buffers[kept...]))
            buffers.removeSubrange(kept...)
        }
        // Made again from the buffers kept, always: the spares may hold buffers just given back
        // (two trees would then edit one buffer). The committed buffers are those the commit
        // just wrote and those still untouched since an earlier commit wrote them (their bytes
        // unchanged: a buffer taken for any other use left `committed` then), when kept.
        if !written.isEmpty {
            committed.append(contentsOf: written)
            written.removeAll(keepingCapacity: true)
        }
        if !committed.isEmpty { committed.removeAll { !buffers.contains($0.page.base) } }
        spare.removeAll(keepingCapacity: true)
        for buffer in buffers where !committed.contains(where: { $0.page.base == buffer }) {
            spare.append(DirtyPage(base: buffer))
        }
        if !pending.isEmpty {
            for value in pending { value.deallocate() }
            pending.removeAll()
        }
        if !retired.isEmpty {
            for value in retired { value.deallocate() }
            retired.removeAll()
            retainedBytes = 0
        }
    }

    /// A copy of a value too large for a leaf, kept until commit writes its overflow run; the
    /// leaf cell references it by its address with `DirtyPage.marker` set. `Layout.headerSize`
    /// bytes before the value are left for the run's header, so that the commit writes the run
    /// from this copy (`PageSerializer.overflow`) and holds no other.
    func keep(_ value: UnsafeRawBufferPointer) -> UInt64 {
        let copy = UnsafeMutableRawPointer.allocate(byteCount: Layout.headerSize &+ value.count, alignment: 16)
        if let source = value.baseAddress { (copy + Layout.headerSize).copyMemory(from: source, byteCount: value.count) }
        pending.insert(copy)
        return DirtyPage.marker | UInt64(UInt(bitPattern: copy))
    }

    /// A kept value is no longer referenced (replaced or removed).
    func retire(_ reference: UInt64, length: Int) {
        guard let value = UnsafeMutableRawPointer(bitPattern: UInt(reference & ~DirtyPage.marker)),
              pending.remove(value) != nil
        else { return }
        retired.append(value)
        retainedBytes += length
        if retainedBytes > Self.retainedLimit {
            for value in retired { value.deallocate() }
            retired.removeAll()
            retainedBytes = 0
        }
    }

    /// The bytes of a kept value (a marked overflow reference), or nil for a run in the file.
    @inline(__always)
    static func value(_ reference: PageReference, length: Int) -> UnsafeRawBufferPointer? {
        guard let run = run(reference) else { return nil }
        return UnsafeRawBufferPointer(start: run + Layout.headerSize, count: length)
    }

    /// A kept value's allocation (room for the run's header, then the value), or nil for a run
    /// in the file.
    @inline(__always)
    static func run(_ reference: PageReference) -> UnsafeMutableRawPointer? {
        guard reference.page & DirtyPage.marker != 0 else { return nil }
        return UnsafeMutableRawPointer(bitPattern: UInt(reference.page & ~DirtyPage.marker))
    }
}

/// A spare buffer of a tree that holds a committed page exactly as this process's commit wrote it
/// (docs/STORAGE.md 13.3, "Session 38"): the page number and the checksum of its used bytes, as
/// the commit wrote them into the page's parent. A later write transaction that changes the page
/// edits this buffer instead of copying the page from the map: a reference with the same number
/// and checksum names these very bytes (the checksum covers the number, the commit's number and
/// every used byte). Nothing writes a committed buffer: any other use takes it out of the list.
struct CommittedBuffer {
    let page: DirtyPage
    let reference: PageReference
}


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

    /// A buffer for a dirty page (its content is to be written by the caller).
    @inline(__always)
    func newPage() -> DirtyPage {
        if let page = spare.popLast() { return page }
        let buffer = PageBufferPool.shared.take()
        buffers.append(buffer)
        return DirtyPage(base: buffer)
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
        // (two trees would then edit one buffer).
        spare.removeAll(keepingCapacity: true)
        for buffer in buffers { spare.append(DirtyPage(base: buffer)) }
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
    /// leaf cell references it by its address with `DirtyPage.marker` set.
    func keep(_ value: UnsafeRawBufferPointer) -> UInt64 {
        let copy = UnsafeMutableRawPointer.allocate(byteCount: max(1, value.count), alignment: 16)
        if let source = value.baseAddress { copy.copyMemory(from: source, byteCount: value.count) }
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
        guard reference.page & DirtyPage.marker != 0,
              let value = UnsafeRawPointer(bitPattern: UInt(reference.page & ~DirtyPage.marker))
        else { return nil }
        return UnsafeRawBufferPointer(start: value, count: length)
    }
}

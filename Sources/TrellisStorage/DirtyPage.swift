/// A child of a branch, or the root of a tree, during a write transaction: a committed page
/// (untouched) or a page copied into a buffer to be changed (copy-on-write).
enum Child {
    case clean(PageReference)
    case dirty(DirtyPage)
}

/// A cell to put into a `DirtyPage` (docs/STORAGE.md 2.5, 2.6): written straight into its place.
enum NewCell {
    /// A leaf entry whose value is inline.
    case leaf(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
    /// A leaf entry whose value is in an overflow run (or a pending value, `DirtyPage.marker`).
    case leafOverflow(key: UnsafeRawBufferPointer, page: UInt64, checksum: UInt64, length: Int)
    /// A branch entry (an empty key for entry 0).
    case branch(key: UnsafeRawBufferPointer, page: UInt64, checksum: UInt64)
    /// An existing cell, copied as it is.
    case copy(UnsafeRawPointer, size: Int)

    @inline(__always)
    var size: Int {
        switch self {
        case .leaf(let key, let value): return Layout.leafCellHeader &+ key.count &+ value.count
        case .leafOverflow(let key, _, _, _): return Layout.leafCellHeader &+ key.count &+ Layout.overflowReferenceSize
        case .branch(let key, _, _): return Layout.branchCellHeader &+ key.count
        case .copy(_, let size): return size
        }
    }

    /// The cell's key (`isLeaf`: the kind of page it comes from).
    func key(isLeaf: Bool) -> UnsafeRawBufferPointer {
        switch self {
        case .leaf(let key, _), .leafOverflow(let key, _, _, _), .branch(let key, _, _): return key
        case .copy(let cell, _):
            let length = Int(cell.loadLE(UInt16.self, at: 0))
            return UnsafeRawBufferPointer(start: cell + (isLeaf ? Layout.leafCellHeader : Layout.branchCellHeader),
                                          count: length)
        }
    }

    /// The branch cell with the same child and no key (entry 0 of a branch).
    func withoutKey() -> NewCell {
        switch self {
        case .branch(_, let page, let checksum): return .branch(key: DirtyPage.noKey, page: page, checksum: checksum)
        case .copy(let cell, _):
            return .branch(key: DirtyPage.noKey, page: cell.loadLE(UInt64.self, at: 8), checksum: cell.loadLE(UInt64.self, at: 16))
        default: return self
        }
    }

    @inline(__always)
    func write(to target: UnsafeMutableRawPointer) {
        switch self {
        case .leaf(let key, let value):
            target.storeLE(UInt16(key.count), at: 0)
            target.storeLE(UInt16(value.count), at: 2)
            DirtyPage.copy(key, to: target + Layout.leafCellHeader)
            DirtyPage.copy(value, to: target + Layout.leafCellHeader + key.count)
        case .leafOverflow(let key, let page, let checksum, let length):
            target.storeLE(UInt16(key.count), at: 0)
            target.storeLE(Layout.overflowMarker, at: 2)
            DirtyPage.copy(key, to: target + Layout.leafCellHeader)
            let reference = target + Layout.leafCellHeader + key.count
            reference.storeLE(page, at: 0)
            reference.storeLE(checksum, at: 8)
            reference.storeLE(UInt32(length), at: 16)
        case .branch(let key, let page, let checksum):
            target.storeLE(UInt16(key.count), at: 0)
            target.storeLE(UInt16(0), at: 2)
            target.storeLE(UInt32(0), at: 4)
            target.storeLE(page, at: 8)
            target.storeLE(checksum, at: 16)
            DirtyPage.copy(key, to: target + Layout.branchCellHeader)
        case .copy(let cell, let size):
            target.copyMemory(from: cell, byteCount: size)
        }
    }
}

/// A page a write transaction changes: a 4 KiB buffer in page format (LMDB's model), edited in
/// place with moves of its slots and cells, and written as it is at commit (docs/STORAGE.md 3).
///
/// The buffer is laid out as format 7 writes a tree page (2.3-2.5): the header, `count` slots,
/// then the cells in key order packed one after another, ending at the used length `u` (header
/// offset 4), except that while it is edited the cells may start after a gap (`cellStart`,
/// header bytes 26..<28, so that entries added at the end move nothing). The cells of entry `i`
/// run from slot `i` to slot `i + 1` (to `u` for the last), so an entry's size is known without
/// parsing it, and commit only closes the gap and fills in the page number, the commit number
/// and the zeros after `u`. Kind 6 (leaf) or 1 (branch).
///
/// A reference in a cell with `marker` set is not in the file yet: a branch cell's child page is
/// then a `DirtyPage` (the buffer's address), and a leaf cell's overflow page is a value put by
/// this transaction and kept by its tree until commit writes its run (`TreeState`). A committed
/// page never holds such a reference: copying one that does is `corruptFile`.
struct DirtyPage {
    let base: UnsafeMutableRawPointer

    /// The bit of a page number that says "not in the file yet" (page numbers are far below it).
    static let marker: UInt64 = 1 << 63
    /// Header byte 24 (header bytes 24..<32 are zero in a written page, and used while editing):
    /// set on a leaf that may hold pending values.
    static let pendingFlagOffset = 24
    /// Header byte 25: set once the cells were moved as a block (`splice`).
    static let repositionedOffset = 25
    /// Header bytes 26..<28: where the cells start (after the slots, maybe after a gap).
    static let cellStartOffset = 26

    /// No key: entry 0 of a branch.
    static var noKey: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }

    /// The page read as a committed page is (its accessors check bounds as they read).
    var view: PageView { PageView(base: UnsafeRawPointer(base), number: 0) }

    @inline(__always)
    var count: Int { Int(base.loadLE(UInt16.self, at: 2)) }

    @inline(__always)
    var isLeaf: Bool { base.load(as: UInt8.self) == PageKind.compactLeaf.rawValue }

    /// Where the cells end (the page's used length).
    @inline(__always)
    var used: Int { Int(base.loadLE(UInt32.self, at: Layout.usedLengthOffset)) }

    /// Where the cells start: after the slots, maybe after a gap (`splice`).
    @inline(__always)
    var cellStart: Int { Int(base.loadLE(UInt16.self, at: Self.cellStartOffset)) }

    @inline(__always)
    func setCellStart(_ start: Int) { base.storeLE(UInt16(start), at: Self.cellStartOffset) }

    /// The bytes the entries take after the header (slots and cells): what must fit `Layout.usable`.
    @inline(__always)
    var size: Int { count &* Layout.slotSize &+ used &- cellStart }

    /// This page as a branch cell's child reference.
    var reference: UInt64 { Self.marker | UInt64(UInt(bitPattern: base)) }

    /// The dirty page a marked reference names.
    static func page(_ reference: UInt64) -> DirtyPage? {
        guard reference & marker != 0, let base = UnsafeMutableRawPointer(bitPattern: UInt(reference & ~marker)) else {
            return nil
        }
        return DirtyPage(base: base)
    }

    /// Starts an empty page of this kind.
    func initialize(isLeaf: Bool) {
        base.zeroBytes(count: Layout.headerSize)
        base.storeBytes(of: (isLeaf ? PageKind.compactLeaf : PageKind.branch).rawValue, as: UInt8.self)
        base.storeBytes(of: Layout.usedBytesFlag, toByteOffset: Layout.flagsOffset, as: UInt8.self)
        setCount(0)
        setUsed(Layout.headerSize)
        setCellStart(Layout.headerSize)
    }

    @inline(__always)
    private func setCount(_ count: Int) { base.storeLE(UInt16(count), at: 2) }

    @inline(__always)
    private func setUsed(_ used: Int) { base.storeLE(UInt32(used), at: Layout.usedLengthOffset) }

    @inline(__always)
    func offset(_ index: Int) -> Int { Int(base.loadLE(UInt16.self, at: Layout.headerSize &+ index &* Layout.slotSize)) }

    /// Where entry `index`'s cell ends.
    @inline(__always)
    func cellEnd(_ index: Int) -> Int { index &+ 1 < count ? offset(index &+ 1) : used }

    /// Entry `index`'s cell as it is.
    @inline(__always)
    func cell(_ index: Int) -> NewCell {
        let start = offset(index)
        return .copy(UnsafeRawPointer(base + start), size: cellEnd(index) &- start)
    }

    /// Entry `index`'s key (empty for entry 0 of a branch).
    @inline(__always)
    func key(at index: Int) -> UnsafeRawBufferPointer {
        let start = offset(index)
        let length = Int(base.loadLE(UInt16.self, at: start))
        return UnsafeRawBufferPointer(start: base + start + (isLeaf ? Layout.leafCellHeader : Layout.branchCellHeader),
                                      count: length)
    }

    /// Whether `bytes` start inside this page's buffer.
    @inline(__always)
    func holds(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let start = bytes.baseAddress else { return false }
        let distance = UInt(bitPattern: start) &- UInt(bitPattern: base)
        return distance < UInt(Layout.pageSize)
    }

    // MARK: - Branch children

    /// The child of branch entry `index`.
    @inline(__always)
    func child(at index: Int) -> Child {
        let start = offset(index)
        let page = base.loadLE(UInt64.self, at: start &+ 8)
        if let dirty = Self.page(page) { return .dirty(dirty) }
        return .clean(PageReference(page: page, checksum: base.loadLE(UInt64.self, at: start &+ 16)))
    }

    /// Points branch entry `index` at `child`.
    @inline(__always)
    func setChild(at index: Int, _ child: Child) {
        let start = offset(index)
        switch child {
        case .clean(let reference):
            base.storeLE(reference.page, at: start &+ 8)
            base.storeLE(reference.checksum, at: start &+ 16)
        case .dirty(let page):
            base.storeLE(page.reference, at: start &+ 8)
            base.storeLE(UInt64(0), at: start &+ 16)
        }
    }

    // MARK: - Editing

    /// Replaces entries `index..<index + removing` with `cells`, keeping the cells packed in key
    /// order. Returns false, changing nothing, when the result does not fit.
    ///
    /// The cells start at `cellStart`, which may leave a gap after the slots: an entry added at
    /// the end then moves nothing (its slot goes into the gap, its cell after the last). Only
    /// the cells after the edited entries move, and the slots after them. When the gap or the
    /// room after the cells is too small, the cells are first moved as one block (`reposition`):
    /// the first time just far enough (a page edited once is written without a gap), later
    /// leaving a gap for as many more entries as the free room would hold. Commit closes the gap
    /// (`compact()`).
    @inline(__always)
    func splice<C: Collection>(at index: Int, removing: Int, inserting cells: C) -> Bool where C.Element == NewCell {
        let count = self.count
        let inserted = cells.count
        var insertedSize = 0
        for cell in cells { insertedSize &+= cell.size }
        var used = self.used
        let cellBytes = used &- cellStart
        let start = index < count ? offset(index) : used
        let end = index &+ removing < count ? offset(index &+ removing) : used
        let cellShift = insertedSize &- (end &- start)
        let newCount = count &+ inserted &- removing
        let newFirstCell = Layout.headerSize &+ newCount &* Layout.slotSize
        guard newFirstCell &+ cellBytes &+ cellShift <= Layout.pageSize else { return false }
        var start2 = start, end2 = end  // after a reposition, where they moved
        if newFirstCell > cellStart || used &+ cellShift > Layout.pageSize {
            if inserted < removing {
                // Removing first always fits in place; the rest is then an insertion.
                _ = splice(at: index, removing: removing, inserting: EmptyCollection())
                return splice(at: index, removing: 0, inserting: cells)
            }
            let shift = reposition(newFirstCell: newFirstCell, cellShift: cellShift, cellBytes: cellBytes)
            start2 &+= shift
            end2 &+= shift
            used &+= shift
        }
        // The cells after the edited ones, then the slots after them.
        if cellShift != 0 {
            (base + (end2 &+ cellShift)).copyMemory(from: base + end2, byteCount: used &- end2)
            for slot in (index &+ removing)..<count { shiftSlot(slot, by: cellShift) }
        }
        if inserted != removing {
            (base + (Layout.headerSize &+ (index &+ inserted) &* Layout.slotSize))
                .copyMemory(from: base + (Layout.headerSize &+ (index &+ removing) &* Layout.slotSize),
                            byteCount: (count &- index &- removing) &* Layout.slotSize)
        }
        var at = start2
        var slot = index
        for cell in cells {
            base.storeLE(UInt16(at), at: Layout.headerSize &+ slot &* Layout.slotSize)
            cell.write(to: base + at)
            at &+= cell.size
            slot &+= 1
        }
        setCount(newCount)
        setUsed(used &+ cellShift)
        return true
    }

    /// Moves the cells as one block so that `newFirstCell` slots and `cellShift` more bytes of
    /// cells fit (the caller checked that they fit the page, and adds entries: the block never
    /// moves over the slots in use). Returns how far the cells moved.
    private func reposition(newFirstCell: Int, cellShift: Int, cellBytes: Int) -> Int {
        let low = newFirstCell, high = Layout.pageSize &- cellBytes &- cellShift
        var target = low
        if base.load(fromByteOffset: Self.repositionedOffset, as: UInt8.self) != 0 {
            // Moved before: leave room for as many slots as entries of the average size would fit.
            let count = self.count
            let average = count > 0 ? max(1, cellBytes / count) : 64
            target = low &+ (high &- low) / (Layout.slotSize &+ average) &* Layout.slotSize
        }
        base.storeBytes(of: 1, toByteOffset: Self.repositionedOffset, as: UInt8.self)
        let from = cellStart
        let shift = target &- from
        guard shift != 0 else { return 0 }
        (base + target).copyMemory(from: base + from, byteCount: cellBytes)
        for slot in 0..<count { shiftSlot(slot, by: shift) }
        setCellStart(target)
        setUsed(used &+ shift)
        return shift
    }

    /// Closes the gap between the slots and the cells: the page is then laid out exactly as
    /// format 7 writes it.
    func compact() {
        let firstCell = Layout.headerSize &+ count &* Layout.slotSize
        let from = cellStart
        guard from != firstCell else { return }
        let shift = firstCell &- from
        (base + firstCell).copyMemory(from: base + from, byteCount: used &- from)
        for slot in 0..<count { shiftSlot(slot, by: shift) }
        setCellStart(firstCell)
        setUsed(used &+ shift)
    }

    @inline(__always)
    private func shiftSlot(_ slot: Int, by shift: Int) {
        let at = Layout.headerSize &+ slot &* Layout.slotSize
        base.storeLE(UInt16(truncatingIfNeeded: Int(base.loadLE(UInt16.self, at: at)) &+ shift), at: at)
    }

    /// Removes branch entry `index`; removing entry 0 makes the next one entry 0 (no key).
    func removeBranchEntry(at index: Int) {
        if index == 0 && count > 1 {
            let next = cell(1).withoutKey()
            _ = splice(at: 0, removing: 2, inserting: CollectionOfOne(next))
        } else {
            _ = splice(at: index, removing: 1, inserting: EmptyCollection())
        }
    }

    /// Lays `cells` out as this page's entries (the page's own cells must not be among them).
    func fill(isLeaf: Bool, _ cells: ArraySlice<NewCell>) {
        initialize(isLeaf: isLeaf)
        var at = Layout.headerSize &+ cells.count &* Layout.slotSize
        var slot = 0
        for cell in cells {
            base.storeLE(UInt16(at), at: Layout.headerSize &+ slot &* Layout.slotSize)
            cell.write(to: base + at)
            at &+= cell.size
            slot &+= 1
        }
        setCount(cells.count)
        setUsed(at)
        setCellStart(Layout.headerSize &+ cells.count &* Layout.slotSize)
    }

    /// Copies a key or value (an 8-byte one, the usual key, as one word: a `memcpy` call costs
    /// more than the copy).
    @inline(__always)
    static func copy(_ bytes: UnsafeRawBufferPointer, to target: UnsafeMutableRawPointer) {
        guard let source = bytes.baseAddress else { return }
        if bytes.count == 8 {
            target.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
        } else {
            target.copyMemory(from: source, byteCount: bytes.count)
        }
    }
}

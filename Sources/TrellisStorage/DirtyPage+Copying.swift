extension DirtyPage {
    /// Makes this buffer a copy of the committed page `view` (verified against its checksum and
    /// its header validated), laid out as format 7 writes it. Every cell is checked against the
    /// page's bounds, as the readers check them, and a reference that claims to be pending
    /// (`marker`) is refused: a page that passed its checksum may still have been written wrong,
    /// and a bad cell must be a typed error, never a trap or a wild read.
    ///
    /// A page written by format 7 or 8 (cells in key order right after the slots) is copied in
    /// one piece; any other page (the whole-page rule of versions 3-6, kind-2 leaves of versions
    /// 3-4) is copied cell by cell, into a kind-6 leaf or a branch.
    func copy(_ view: PageView) throws {
        if try !copyPacked(view) { try copyCellByCell(view) }
        // Header bytes 24..<32 are 0 in a tree page: nothing pending, never moved, no gap.
        base.storeLE(UInt64(0), at: Self.pendingFlagOffset)
        setCellStart(Layout.headerSize &+ count &* Layout.slotSize)
    }

    /// Makes this buffer, which holds a committed page exactly as this process's commit wrote it
    /// (`CommittedBuffer`), a dirty page again: as `copy(_:)` leaves a copy of that page.
    func reopen() {
        base.storeLE(UInt64(0), at: Self.pendingFlagOffset)
        setCellStart(Layout.headerSize &+ count &* Layout.slotSize)
    }

    /// The one-piece copy; false when the page is not laid out as format 7 writes it.
    private func copyPacked(_ view: PageView) throws -> Bool {
        let page = view.base
        let kind = view.kind
        guard page.load(fromByteOffset: Layout.flagsOffset, as: UInt8.self) == Layout.usedBytesFlag,
              kind == PageKind.compactLeaf.rawValue || kind == PageKind.branch.rawValue
        else { return false }
        let count = view.count
        let used = Int(page.loadLE(UInt32.self, at: Layout.usedLengthOffset))
        let firstCell = Layout.headerSize &+ count &* Layout.slotSize
        guard used >= firstCell, used <= Layout.pageSize else { return false }
        var expected = firstCell
        if kind == PageKind.compactLeaf.rawValue {
            for index in 0..<count {
                guard Int(page.loadLE(UInt16.self, at: Layout.headerSize &+ index &* Layout.slotSize)) == expected,
                      expected &+ Layout.leafCellHeader <= used
                else { return false }
                let keyLength = Int(page.loadLE(UInt16.self, at: expected))
                let stored = page.loadLE(UInt16.self, at: expected &+ 2)
                guard keyLength <= StorageLimits.maximumKeyLength else { return false }
                let valueStart = expected &+ Layout.leafCellHeader &+ keyLength
                if stored == Layout.overflowMarker {
                    let end = valueStart &+ Layout.overflowReferenceSize
                    guard end <= used else { return false }
                    let length = Int(page.loadLE(UInt32.self, at: valueStart &+ 16))
                    guard page.loadLE(UInt64.self, at: valueStart) & Self.marker == 0,
                          length <= StorageLimits.maximumValueLength,
                          Layout.isOverflow(keyLength: keyLength, valueLength: length)
                    else { throw view.corrupt("the overflow reference of entry \(index) is malformed") }
                    expected = end
                } else {
                    expected = valueStart &+ Int(stored)
                }
            }
        } else {
            for index in 0..<count {
                guard Int(page.loadLE(UInt16.self, at: Layout.headerSize &+ index &* Layout.slotSize)) == expected,
                      expected &+ Layout.branchCellHeader <= used
                else { return false }
                let keyLength = Int(page.loadLE(UInt16.self, at: expected))
                guard keyLength <= StorageLimits.maximumKeyLength, index > 0 || keyLength == 0 else { return false }
                guard page.loadLE(UInt64.self, at: expected &+ 8) & Self.marker == 0 else {
                    throw view.corrupt("the child of entry \(index) is not a page number")
                }
                expected &+= Layout.branchCellHeader &+ keyLength
            }
        }
        guard expected == used else { return false }
        base.copyMemory(from: page, byteCount: used)
        return true
    }

    /// The cell-by-cell copy, through `PageView`'s checked accessors.
    private func copyCellByCell(_ view: PageView) throws {
        let count = view.count
        let leaf = view.isLeaf
        initialize(isLeaf: leaf)
        var at = Layout.headerSize &+ count &* Layout.slotSize
        for index in 0..<count {
            let cell: NewCell
            if leaf {
                let (key, value) = try view.leafEntry(at: index)
                switch value {
                case .inline(let bytes):
                    cell = .leaf(key: key, value: bytes)
                case .overflow(let reference, let length):
                    guard reference.page & Self.marker == 0 else {
                        throw view.corrupt("the overflow reference of entry \(index) is malformed")
                    }
                    cell = .leafOverflow(key: key, page: reference.page, checksum: reference.checksum, length: length)
                }
            } else {
                let key = index == 0 ? Self.noKey : try view.key(at: index)
                let child = try view.child(at: index)
                guard child.page & Self.marker == 0 else { throw view.corrupt("the child of entry \(index) is not a page number") }
                cell = .branch(key: key, page: child.page, checksum: child.checksum)
            }
            // Cells that overlap in the page would not fit once laid out one after another.
            guard at &+ cell.size <= Layout.pageSize else { throw view.corrupt("the entries overlap") }
            base.storeLE(UInt16(at), at: Layout.headerSize &+ index &* Layout.slotSize)
            cell.write(to: base + at)
            at &+= cell.size
        }
        base.storeLE(UInt16(count), at: 2)
        base.storeLE(UInt32(at), at: Layout.usedLengthOffset)
    }
}

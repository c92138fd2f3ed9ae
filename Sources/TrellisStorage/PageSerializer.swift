/// A page (or overflow run) a commit writes: where, its bytes, and their checksum.
/// A struct rather than a tuple: an array of tuples holding an array is copied and destroyed
/// through the runtime's generic tuple witnesses (~4,500 instructions per W6 commit).
struct WrittenPage {
    let page: UInt64
    let bytes: [UInt8]
    let checksum: UInt64
}

/// Turns a write transaction's changed nodes into pages at commit (docs/STORAGE.md, section 4,
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

    /// Copies a key or value into the page being laid out (an 8-byte one, the usual key, as one
    /// word: a `memcpy` call costs more than the copy).
    @inline(__always)
    private static func copy(_ bytes: UnsafeRawBufferPointer, to target: UnsafeMutableRawPointer) {
        guard let source = bytes.baseAddress else { return }
        if bytes.count == 8 {
            target.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
        } else {
            target.copyMemory(from: source, byteCount: bytes.count)
        }
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
        case .dirty(let node):
            return flush(node)
        }
    }

    private mutating func flush(_ node: Node) -> PageReference {
        // Children and overflow runs first: their checksums go into this page.
        var childReferences: [PageReference] = []
        if node.isLeaf {
            for index in 0..<node.count {
                if case .bytes(let value) = node.values[index],
                   Layout.isOverflow(keyLength: node.keys[index].count, valueLength: value.count) {
                    node.values[index] = .overflow(overflow(value), length: value.count)
                }
            }
        } else {
            childReferences.reserveCapacity(node.count)
            for child in node.children { childReferences.append(flush(child)) }
        }
        let page = allocator.allocate()
        var used = Layout.pageSize
        // Not zeroed first (that cost as much as the checksum): every byte is written below, the
        // header (zeroed, then its fields), the slots, the cells packed right after the slots and
        // the free space after them (zeroed). The used bytes are thus one prefix of the page,
        // which is what format 7 checksums (docs/STORAGE.md 2.4).
        let bytes = [UInt8](unsafeUninitializedCapacity: Layout.pageSize) { buffer, initialized in
            initialized = Layout.pageSize
            guard let start = buffer.baseAddress else { return }
            let base = UnsafeMutableRawPointer(start)
            base.zeroBytes(count: Layout.headerSize)
            Self.header(base, kind: node.isLeaf ? .compactLeaf : .branch, count: node.count, page: page, txnID: txnID)
            var cell = Layout.headerSize + node.count * Layout.slotSize
            let keys = node.keys
            if node.isLeaf {
                let values = node.values
                for index in 0..<keys.count {
                    let key = keys[index]
                    let keyOffset = cell + Layout.leafCellHeader
                    base.storeLE(UInt16(cell), at: Layout.headerSize + index * Layout.slotSize)
                    base.storeLE(UInt16(key.count), at: cell)
                    Self.copy(key, to: base + keyOffset)
                    switch values[index] {
                    case .bytes(let value):
                        base.storeLE(UInt16(value.count), at: cell + 2)
                        Self.copy(value, to: base + keyOffset + key.count)
                        cell = keyOffset + key.count + value.count
                    case .overflow(let reference, let length):
                        base.storeLE(Layout.overflowMarker, at: cell + 2)
                        base.storeLE(reference.page, at: keyOffset + key.count)
                        base.storeLE(reference.checksum, at: keyOffset + key.count + 8)
                        base.storeLE(UInt32(length), at: keyOffset + key.count + 16)
                        cell = keyOffset + key.count + Layout.overflowReferenceSize
                    }
                }
            } else {
                for index in 0..<keys.count {
                    let key = keys[index]
                    base.storeLE(UInt16(cell), at: Layout.headerSize + index * Layout.slotSize)
                    base.storeLE(UInt16(key.count), at: cell)
                    base.storeLE(UInt16(0), at: cell + 2)
                    base.storeLE(UInt32(0), at: cell + 4)
                    base.storeLE(childReferences[index].page, at: cell + 8)
                    base.storeLE(childReferences[index].checksum, at: cell + 16)
                    Self.copy(key, to: base + cell + Layout.branchCellHeader)
                    cell += Layout.branchCellHeader + key.count
                }
            }
            (base + cell).zeroBytes(count: max(0, Layout.pageSize - cell))
            used = cell
            base.storeBytes(of: Layout.usedBytesFlag, toByteOffset: Layout.flagsOffset, as: UInt8.self)
            base.storeLE(UInt32(cell), at: Layout.usedLengthOffset)
        }
        return emit(page, bytes, checked: used)
    }
}

/// Sizes and offsets of the file format (docs/STORAGE.md, section 2).
public enum StorageLimits {
    /// Bytes per page.
    public static let pageSize = 4096
    /// Bytes a page occupies in an encrypted file: its 4,096 bytes encrypted, with their nonce
    /// and tag (docs/STORAGE.md, section 12).
    public static let encryptedPageSize = pageSize + 32
    /// The longest key a tree accepts.
    public static let maximumKeyLength = 511
    /// The longest tree name.
    public static let maximumTreeNameLength = 255
    /// The longest value (a run of pages must stay addressable with 32-bit counts).
    public static let maximumValueLength = 1 << 30
}

enum PageKind: UInt8 {
    case branch = 1
    case leaf = 2
    case overflow = 3
    /// Free-list chain pages of format versions 1 and 2 (no longer written or read).
    case freeList = 4
}

enum Layout {
    static let pageSize = StorageLimits.pageSize
    static let headerSize = 32
    static let slotSize = 2
    /// A leaf cell larger than this keeps its value in an overflow run.
    static let maximumInlineCell = 2000
    static let leafCellHeader = 8
    static let branchCellHeader = 24
    static let overflowReferenceSize = 16
    /// The bytes a node may use after its header.
    static let usable = pageSize - headerSize
    /// Below this a node is merged with a neighbour (or shares its entries).
    static let underfull = usable / 4

    static let fileHeaderPage: UInt64 = 0
    static let metaPages: [UInt64] = [1, 2]
    static let firstDataPage: UInt64 = 3

    /// Bytes of a leaf cell (without its slot) holding a key and a value of these lengths.
    @inline(__always)
    static func leafCellSize(keyLength: Int, valueLength: Int) -> Int {
        let inline = leafCellHeader + keyLength + valueLength
        return inline > maximumInlineCell ? leafCellHeader + keyLength + overflowReferenceSize : inline
    }

    /// Whether a value of this length is stored in an overflow run.
    @inline(__always)
    static func isOverflow(keyLength: Int, valueLength: Int) -> Bool {
        leafCellHeader + keyLength + valueLength > maximumInlineCell
    }

    /// Pages of an overflow run holding a value of this length.
    static func overflowPages(valueLength: Int) -> Int {
        (headerSize + valueLength + pageSize - 1) / pageSize
    }
}

/// Little-endian stores into a raw buffer being built.
extension UnsafeMutableRawPointer {
    @inline(__always)
    func storeLE<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
    }

    @inline(__always)
    func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    /// Sets `count` bytes from here to zero, in pieces of at most 1 KiB. glibc's `memset` clears
    /// 2 KiB or more with `rep stosb`, one instruction per byte as callgrind counts them (the
    /// issue 37 figures), where smaller pieces take its vector loop (32 bytes per store); the
    /// time is about the same either way.
    @inline(__always)
    func zeroBytes(count: Int) {
        var offset = 0
        while offset < count {
            let piece = min(1024, count - offset)
            (self + offset).initializeMemory(as: UInt8.self, repeating: 0, count: piece)
            offset += piece
        }
    }
}

extension UnsafeRawPointer {
    @inline(__always)
    func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

/// A reference to a page (or a run of pages) with the checksum it must have.
struct PageReference: Equatable {
    var page: UInt64
    var checksum: UInt64
}

/// A verified page of a snapshot, read in place. Every accessor checks what it reads against the
/// page's bounds and throws `corruptFile` naming the page instead of trapping.
struct PageView {
    let base: UnsafeRawPointer
    let number: UInt64

    var kind: UInt8 { base.load(fromByteOffset: 0, as: UInt8.self) }
    var count: Int { Int(base.loadLE(UInt16.self, at: 2)) }
    var txnID: UInt64 { base.loadLE(UInt64.self, at: 16) }
    var isLeaf: Bool { kind == PageKind.leaf.rawValue }

    func corrupt(_ detail: String) -> StorageError { StorageError.corrupt(page: number, detail) }

    /// Checks the header of a tree page: its kind, its own number and that its slots fit.
    func validateTreePage() throws {
        guard kind == PageKind.branch.rawValue || kind == PageKind.leaf.rawValue else {
            throw corrupt("kind \(kind) where a tree page was expected")
        }
        guard base.loadLE(UInt64.self, at: 8) == number else { throw corrupt("the page names another page number") }
        let count = count
        guard Layout.headerSize + count * Layout.slotSize <= Layout.pageSize else {
            throw corrupt("\(count) entries cannot fit a page")
        }
        if kind == PageKind.branch.rawValue && count < 2 { throw corrupt("a branch with \(count) children") }
        if kind == PageKind.leaf.rawValue && count < 1 { throw corrupt("an empty leaf") }
    }

    @inline(__always)
    private func cellOffset(_ index: Int, header: Int) throws -> Int {
        let offset = Int(base.loadLE(UInt16.self, at: Layout.headerSize + index * Layout.slotSize))
        guard offset >= Layout.headerSize + count * Layout.slotSize, offset + header <= Layout.pageSize else {
            throw corrupt("entry \(index) points outside the page")
        }
        return offset
    }

    /// The key of entry `index` (of a leaf or a branch), in place.
    @inline(__always)
    func key(at index: Int) throws -> UnsafeRawBufferPointer {
        let leaf = isLeaf
        let header = leaf ? Layout.leafCellHeader : Layout.branchCellHeader
        let offset = try cellOffset(index, header: header)
        let length = Int(base.loadLE(UInt16.self, at: offset))
        guard offset + header + length <= Layout.pageSize, length <= StorageLimits.maximumKeyLength else {
            throw corrupt("the key of entry \(index) runs past the page")
        }
        return UnsafeRawBufferPointer(start: base + offset + header, count: length)
    }

    /// The index of the first key >= `key` (searching from 1 in a branch, whose cell 0 has no
    /// key) and whether it is equal. The page's header was validated (`validateTreePage`); each
    /// cell read is still checked against the page's bounds.
    @inline(__always)
    func lowerBound(_ key: UnsafeRawBufferPointer, order: KeyOrder) throws -> (index: Int, found: Bool) {
        let leaf = isLeaf
        let header = leaf ? Layout.leafCellHeader : Layout.branchCellHeader
        let count = self.count
        let firstCell = Layout.headerSize &+ count &* Layout.slotSize
        // Byte order: most comparisons are decided by the first eight bytes, compared as one
        // big-endian word.
        let wordCompares = order == .bytes && key.count >= 8
        let keyWord = wordCompares ? UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)) : 0
        // Integer order with 8-byte keys (object keys): one native word compare decides.
        let integerCompares = order == .integer && key.count == 8
        let keyInteger = integerCompares ? key.loadUnaligned(as: UInt64.self) : 0
        var low = leaf ? 0 : 1, high = count
        var equalAt = -1
        while low < high {
            let middle = (low &+ high) &>> 1
            let offset = Int(base.loadLE(UInt16.self, at: Layout.headerSize &+ middle &* Layout.slotSize))
            // The length is read from inside the page whatever the offset; the guard then
            // rejects an offset or a length that does not fit.
            let length = Int(base.loadLE(UInt16.self, at: min(offset, Layout.pageSize &- 2)))
            guard offset >= firstCell, offset &+ header &+ length <= Layout.pageSize else {
                throw corrupt("entry \(middle) points outside the page")
            }
            let start = base + (offset &+ header)
            var comparison = 0
            if integerCompares && length == 8 {
                let value = start.loadUnaligned(as: UInt64.self)
                comparison = value == keyInteger ? 0 : (value < keyInteger ? -1 : 1)
            } else {
                if wordCompares && length >= 8 {
                    let word = UInt64(bigEndian: start.loadUnaligned(as: UInt64.self))
                    if word != keyWord { comparison = word < keyWord ? -1 : 1 }
                }
                if comparison == 0 { comparison = order.compare(UnsafeRawBufferPointer(start: start, count: length), key) }
            }
            if comparison < 0 {
                low = middle &+ 1
            } else {
                if comparison == 0 { equalAt = middle }
                high = middle
            }
        }
        return (low, equalAt == low)
    }

    /// The child of branch entry `index`.
    func child(at index: Int) throws -> PageReference {
        let offset = try cellOffset(index, header: Layout.branchCellHeader)
        return PageReference(page: base.loadLE(UInt64.self, at: offset + 8),
                             checksum: base.loadLE(UInt64.self, at: offset + 16))
    }

    /// The value of leaf entry `index`: the bytes in place, or the overflow run that holds them.
    func value(at index: Int) throws -> LeafValueLocation {
        let offset = try cellOffset(index, header: Layout.leafCellHeader)
        let keyLength = Int(base.loadLE(UInt16.self, at: offset))
        let kind = base.load(fromByteOffset: offset + 2, as: UInt8.self)
        let length = Int(base.loadLE(UInt32.self, at: offset + 4))
        let start = offset + Layout.leafCellHeader + keyLength
        switch kind {
        case 0:
            guard start + length <= Layout.pageSize else { throw corrupt("the value of entry \(index) runs past the page") }
            return .inline(UnsafeRawBufferPointer(start: base + start, count: length))
        case 1:
            guard start + Layout.overflowReferenceSize <= Layout.pageSize, length <= StorageLimits.maximumValueLength,
                  Layout.isOverflow(keyLength: keyLength, valueLength: length)
            else { throw corrupt("the overflow reference of entry \(index) is malformed") }
            let reference = PageReference(page: base.loadLE(UInt64.self, at: start),
                                          checksum: base.loadLE(UInt64.self, at: start + 8))
            return .overflow(reference, length: length)
        default:
            throw corrupt("entry \(index) has value kind \(kind)")
        }
    }
}

/// Where a leaf's value is.
enum LeafValueLocation {
    case inline(UnsafeRawBufferPointer)
    case overflow(PageReference, length: Int)
}

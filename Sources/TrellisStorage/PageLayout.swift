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
    /// A leaf of 8-byte cell headers (format versions 3 and 4; read, no longer written).
    case leaf = 2
    case overflow = 3
    /// Free-list chain pages of format versions 1 and 2 (no longer written or read).
    case freeList = 4
    /// A leaf of 4-byte cell headers (docs/STORAGE.md 2.5): what this build writes. Its kind
    /// differs from the 8-byte leaf's only in bit 2, so `kind | 4 == 6` is "a leaf".
    case compactLeaf = 6
}

enum Layout {
    static let pageSize = StorageLimits.pageSize
    static let headerSize = 32
    /// The page header's flags byte, and its one flag: the page's checksum covers its first
    /// `used` bytes (the UInt32 at `usedLengthOffset`), not all 4,096 (tree pages written by
    /// format versions 7 and 8; docs/STORAGE.md 2.3-2.4).
    static let flagsOffset = 1
    static let usedBytesFlag: UInt8 = 1
    static let usedLengthOffset = 4
    static let slotSize = 2
    /// A leaf entry whose key and value together exceed this keeps its value in an overflow
    /// run (the same entries in both leaf layouts: an 8-byte-cell leaf's cell of at most 2,000
    /// bytes), so that at least two cells always fit a leaf.
    static let maximumInlinePayload = 1992
    /// The header of a leaf cell as this build writes it (kind 6): key length (2), value length
    /// (2; `overflowMarker` when an overflow run holds the value).
    static let leafCellHeader = 4
    /// The header of a leaf cell of kind 2 (format versions 3 and 4): key length (2), value kind
    /// (1), reserved (1), value length (4).
    static let wideLeafCellHeader = 8
    static let branchCellHeader = 24
    /// A kind-6 cell's overflow reference: first page (8), checksum of the run (8), value length (4).
    static let overflowReferenceSize = 20
    /// A kind-2 cell's overflow reference: first page (8), checksum of the run (8).
    static let wideOverflowReferenceSize = 16
    /// The value length of a kind-6 cell whose value is in an overflow run.
    static let overflowMarker: UInt16 = 0xFFFF
    /// The bytes a node may use after its header.
    static let usable = pageSize - headerSize
    /// The most entries a page's slots can name.
    static let maximumEntries = usable / slotSize
    /// Below this a node is merged with a neighbour (or shares its entries).
    static let underfull = usable / 4

    static let fileHeaderPage: UInt64 = 0
    static let metaPages: [UInt64] = [1, 2]
    static let firstDataPage: UInt64 = 3

    /// Bytes of a leaf cell as this build writes it (without its slot) holding a key and a value
    /// of these lengths.
    @inline(__always)
    static func leafCellSize(keyLength: Int, valueLength: Int) -> Int {
        isOverflow(keyLength: keyLength, valueLength: valueLength)
            ? leafCellHeader + keyLength + overflowReferenceSize : leafCellHeader + keyLength + valueLength
    }

    /// Whether a value of this length is stored in an overflow run.
    @inline(__always)
    static func isOverflow(keyLength: Int, valueLength: Int) -> Bool {
        keyLength + valueLength > maximumInlinePayload
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
    /// A leaf of either layout (kind 2 or 6).
    var isLeaf: Bool { kind | 4 == PageKind.compactLeaf.rawValue }
    /// The bytes before the key in a cell of this page: 24 in a branch, 4 or 8 in a leaf.
    @inline(__always)
    var cellHeaderSize: Int {
        let kind = kind
        return kind | 4 == PageKind.compactLeaf.rawValue ? Layout.wideLeafCellHeader &- Int(kind & 4) : Layout.branchCellHeader
    }

    func corrupt(_ detail: String) -> StorageError { StorageError.corrupt(page: number, detail) }

    /// Checks the header of a tree page: its kind, its own number and that its slots fit.
    func validateTreePage() throws {
        if let damage = headerDamage() { throw corrupt(damage) }
    }

    /// What is wrong with the header of this tree page, or nil: its kind, its own number, and
    /// that its slots fit (a branch has at least two entries, a leaf one).
    private func headerDamage() -> String? {
        guard kind == PageKind.branch.rawValue || isLeaf else {
            return "kind \(kind) where a tree page was expected"
        }
        guard base.loadLE(UInt64.self, at: 8) == number else { return "the page names another page number" }
        let count = count
        guard count <= Layout.maximumEntries else { return "\(count) entries cannot fit a page" }
        if kind == PageKind.branch.rawValue && count < 2 { return "a branch with \(count) children" }
        if isLeaf && count < 1 { return "an empty leaf" }
        return nil
    }

    /// Checks the header of the page at `level` of a tree `depth` levels deep (the root is level
    /// 1): `validateTreePage()`'s checks, and that it is a leaf at the last level and a branch
    /// above it. Inlined into descents: three comparisons when the page is sound.
    @inline(__always)
    func validateTreePage(level: Int, depth: Int) throws {
        let leaf = level == depth
        let minimum = leaf ? 1 : 2
        // A leaf of either layout (2 or 6; `| 4` leaves a branch's 1 a 5, never 6), or a branch.
        guard kind | (leaf ? 4 : 0) == (leaf ? PageKind.compactLeaf.rawValue : PageKind.branch.rawValue),
              base.loadLE(UInt64.self, at: 8) == number,
              UInt(bitPattern: count &- minimum) <= UInt(bitPattern: Layout.maximumEntries &- minimum)
        else { throw treePageDamage(level: level, depth: depth) }
    }

    /// The error for a page that failed `validateTreePage(level:depth:)`.
    @inline(never)
    private func treePageDamage(level: Int, depth: Int) -> StorageError {
        if let damage = headerDamage() { return corrupt(damage) }
        return corrupt("a \(isLeaf ? "leaf" : "branch") at level \(level) of a tree of depth \(depth)")
    }

    @inline(__always)
    private func cellOffset(_ index: Int, header: Int) throws -> Int {
        let offset = Int(base.loadLE(UInt16.self, at: Layout.headerSize &+ index &* Layout.slotSize))
        guard offset >= Layout.headerSize &+ count &* Layout.slotSize, offset &+ header <= Layout.pageSize else {
            throw corrupt("entry \(index) points outside the page")
        }
        return offset
    }

    /// The key of entry `index` (of a leaf or a branch), in place.
    @inline(__always)
    func key(at index: Int) throws -> UnsafeRawBufferPointer {
        let header = cellHeaderSize
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
    ///
    /// Numbered keys (``NumberedKey``: 8-byte keys of integer order, 9-byte keys of byte order,
    /// such as object keys and integer primary keys) are first looked for where their number
    /// falls between the page's first and last numbers: keys made in order are dense, so the
    /// guess or its neighbour is the answer. The guess only chooses which entries are compared;
    /// the answer is always checked by comparing keys, as in a plain binary search.
    @inline(__always)
    func lowerBound(_ key: UnsafeRawBufferPointer, order: KeyOrder) throws -> (index: Int, found: Bool) {
        let header = cellHeaderSize
        let leaf = header != Layout.branchCellHeader
        let count = self.count
        let firstCell = Layout.headerSize &+ count &* Layout.slotSize
        let numbered = NumberedKey(key, order: order)
        // Byte order: most comparisons are decided by the first eight bytes, compared as one
        // big-endian word.
        let wordCompares = order == .bytes && key.count >= 8
        let keyWord = wordCompares ? UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)) : 0
        var low = leaf ? 0 : 1, high = count
        // The entry to compare next when it is not the middle one: the guess, then its neighbour.
        var probe = -1
        var followsGuess = false
        if let numbered, high &- low >= 4 {
            switch guess(numbered, low: low, high: high, firstCell: firstCell, header: header) {
            case .answer(let index, let found): return (index, found)
            case .probe(let index):
                probe = index
                followsGuess = true
            case .none:
                break
            }
        }
        while low < high {
            let middle = probe >= low && probe < high ? probe : (low &+ high) &>> 1
            let offset = Int(base.loadLE(UInt16.self, at: Layout.headerSize &+ middle &* Layout.slotSize))
            // The length is read from inside the page whatever the offset; the guard then
            // rejects an offset or a length that does not fit.
            let length = Int(base.loadLE(UInt16.self, at: min(offset, Layout.pageSize &- 2)))
            guard offset >= firstCell, offset &+ header &+ length <= Layout.pageSize else {
                throw corrupt("entry \(middle) points outside the page")
            }
            let start = base + (offset &+ header)
            var comparison = 0
            if let numbered, length == numbered.length {
                comparison = numbered.compare(NumberedKey.read(start, tagged: numbered.isTagged))
            } else {
                let stored = UnsafeRawBufferPointer(start: start, count: length)
                if wordCompares && length >= 8 {
                    let word = UInt64(bigEndian: start.loadUnaligned(as: UInt64.self))
                    // Equal first words: the rest decides, compared from there.
                    comparison = word == keyWord ? KeyOrder.compareBytes(stored, key, from: 8) : (word < keyWord ? -1 : 1)
                } else {
                    comparison = order.compare(stored, key)
                }
            }
            // A tree's keys are unique and in order: an equal key is the answer.
            if comparison == 0 { return (middle, true) }
            if comparison < 0 {
                low = middle &+ 1
                probe = followsGuess ? middle &+ 1 : -1
            } else {
                high = middle
                probe = followsGuess ? middle &- 1 : -1
            }
            followsGuess = false
        }
        return (low, false)
    }

    /// Where a numbered key's search starts, from the numbers of the entries at `low` and
    /// `high - 1`: an exact answer when the key is at or outside either end, else the entry its
    /// number's share of the way between them points at. `.none` when either end is not a key of
    /// the same kind (another length or tag) or a cell is unsound (the search then reports it).
    @inline(__always)
    private func guess(_ key: NumberedKey, low: Int, high: Int, firstCell: Int, header: Int) -> Guess {
        guard let first = numberedKey(at: low, like: key, firstCell: firstCell, header: header),
              let last = numberedKey(at: high &- 1, like: key, firstCell: firstCell, header: header),
              first.tag == key.tag, last.tag == key.tag, first.number < last.number
        else { return .none }
        if key.number <= first.number { return .answer(low, key.number == first.number) }
        if key.number >= last.number { return key.number == last.number ? .answer(high &- 1, true) : .answer(high, false) }
        // (key - first) / (last - first) of the way from `low` to `high - 1`, strictly inside;
        // in 64 bits when the product fits (one division, not a 128-bit division's call).
        let span = UInt64(high &- 1 &- low)
        let distance = key.number &- first.number, range = last.number &- first.number
        let (product, overflow) = distance.multipliedReportingOverflow(by: span)
        if !overflow { return .probe(low &+ Int(product / range)) }
        let scaled = distance.multipliedFullWidth(by: span)
        return .probe(low &+ Int(range.dividingFullWidth((scaled.high, scaled.low)).quotient))
    }

    private enum Guess {
        case answer(Int, Bool)
        case probe(Int)
        case none
    }

    /// The numbered key of entry `index` if it has `key`'s length and its cell fits the page.
    @inline(__always)
    private func numberedKey(at index: Int, like key: NumberedKey, firstCell: Int, header: Int) -> NumberedKey? {
        let offset = Int(base.loadLE(UInt16.self, at: Layout.headerSize &+ index &* Layout.slotSize))
        let length = Int(base.loadLE(UInt16.self, at: min(offset, Layout.pageSize &- 2)))
        guard offset >= firstCell, length == key.length, offset &+ header &+ length <= Layout.pageSize else { return nil }
        return NumberedKey.read(base + (offset &+ header), tagged: key.isTagged)
    }

    /// The child of branch entry `index`.
    @inline(__always)
    func child(at index: Int) throws -> PageReference {
        let offset = try cellOffset(index, header: Layout.branchCellHeader)
        return PageReference(page: base.loadLE(UInt64.self, at: offset + 8),
                             checksum: base.loadLE(UInt64.self, at: offset + 16))
    }

    /// Leaf entry `index` read with one look at its cell: its key, and where its value is (in
    /// place, or the overflow run that holds it). The one reading of a leaf cell: `value(at:)`
    /// and `LeafPage.entry(at:)` are this. Throws `corruptFile` for a cell, key or value that
    /// does not fit the page, or a malformed overflow reference.
    @inline(__always)
    func leafEntry(at index: Int) throws -> (key: UnsafeRawBufferPointer, value: LeafValueLocation) {
        if kind == PageKind.compactLeaf.rawValue {
            let offset = try cellOffset(index, header: Layout.leafCellHeader)
            let keyLength = Int(base.loadLE(UInt16.self, at: offset))
            let length = base.loadLE(UInt16.self, at: offset &+ 2)
            let start = offset &+ Layout.leafCellHeader &+ keyLength
            guard start <= Layout.pageSize, keyLength <= StorageLimits.maximumKeyLength else {
                throw corrupt("the key of entry \(index) runs past the page")
            }
            let key = UnsafeRawBufferPointer(start: base + (offset &+ Layout.leafCellHeader), count: keyLength)
            if length != Layout.overflowMarker {
                guard start &+ Int(length) <= Layout.pageSize else { throw corrupt("the value of entry \(index) runs past the page") }
                return (key, .inline(UnsafeRawBufferPointer(start: base + start, count: Int(length))))
            }
            guard start &+ Layout.overflowReferenceSize <= Layout.pageSize else {
                throw corrupt("the overflow reference of entry \(index) is malformed")
            }
            let overflowLength = Int(base.loadLE(UInt32.self, at: start &+ 16))
            guard overflowLength <= StorageLimits.maximumValueLength,
                  Layout.isOverflow(keyLength: keyLength, valueLength: overflowLength)
            else { throw corrupt("the overflow reference of entry \(index) is malformed") }
            let reference = PageReference(page: base.loadLE(UInt64.self, at: start),
                                          checksum: base.loadLE(UInt64.self, at: start &+ 8))
            return (key, .overflow(reference, length: overflowLength))
        }
        return try wideLeafEntry(at: index)
    }

    /// `leafEntry(at:)` in a leaf of 8-byte cell headers (kind 2, format versions 3 and 4).
    private func wideLeafEntry(at index: Int) throws -> (key: UnsafeRawBufferPointer, value: LeafValueLocation) {
        guard kind == PageKind.leaf.rawValue else { throw corrupt("kind \(kind) where a leaf was expected") }
        let offset = try cellOffset(index, header: Layout.wideLeafCellHeader)
        let keyLength = Int(base.loadLE(UInt16.self, at: offset))
        let kind = base.load(fromByteOffset: offset &+ 2, as: UInt8.self)
        let length = Int(base.loadLE(UInt32.self, at: offset &+ 4))
        let start = offset &+ Layout.wideLeafCellHeader &+ keyLength
        guard start <= Layout.pageSize, keyLength <= StorageLimits.maximumKeyLength else {
            throw corrupt("the key of entry \(index) runs past the page")
        }
        let key = UnsafeRawBufferPointer(start: base + (offset &+ Layout.wideLeafCellHeader), count: keyLength)
        switch kind {
        case 0:
            guard start &+ length <= Layout.pageSize else { throw corrupt("the value of entry \(index) runs past the page") }
            return (key, .inline(UnsafeRawBufferPointer(start: base + start, count: length)))
        case 1:
            guard start &+ Layout.wideOverflowReferenceSize <= Layout.pageSize, length <= StorageLimits.maximumValueLength,
                  Layout.isOverflow(keyLength: keyLength, valueLength: length)
            else { throw corrupt("the overflow reference of entry \(index) is malformed") }
            let reference = PageReference(page: base.loadLE(UInt64.self, at: start),
                                          checksum: base.loadLE(UInt64.self, at: start &+ 8))
            return (key, .overflow(reference, length: length))
        default:
            throw corrupt("entry \(index) has value kind \(kind)")
        }
    }

    /// The value of leaf entry `index`: the bytes in place, or the overflow run that holds them.
    @inline(__always)
    func value(at index: Int) throws -> LeafValueLocation { try leafEntry(at: index).value }
}

/// A key that is a number in its tree's order: an 8-byte key of integer order (native byte
/// order: object keys), or a 9-byte key of byte order, a tag byte then a big-endian number
/// (integer primary keys): such keys compare as (tag, number).
struct NumberedKey {
    let tag: UInt8
    let number: UInt64
    let isTagged: Bool

    var length: Int { isTagged ? 9 : 8 }

    /// `key` as a numbered key of `order`, or nil when it is not one.
    @inline(__always)
    init?(_ key: UnsafeRawBufferPointer, order: KeyOrder) {
        switch order {
        case .integer:
            guard key.count == 8 else { return nil }
            self.init(tag: 0, number: key.loadUnaligned(as: UInt64.self), isTagged: false)
        case .bytes:
            guard key.count == 9 else { return nil }
            self.init(tag: key[0], number: UInt64(bigEndian: key.loadUnaligned(fromByteOffset: 1, as: UInt64.self)),
                      isTagged: true)
        }
    }

    @inline(__always)
    init(tag: UInt8, number: UInt64, isTagged: Bool) {
        self.tag = tag
        self.number = number
        self.isTagged = isTagged
    }

    /// The numbered key stored at `start` (its length already checked).
    @inline(__always)
    static func read(_ start: UnsafeRawPointer, tagged: Bool) -> NumberedKey {
        tagged
            ? NumberedKey(tag: start.load(as: UInt8.self), number: UInt64(bigEndian: start.loadUnaligned(fromByteOffset: 1, as: UInt64.self)),
                          isTagged: true)
            : NumberedKey(tag: 0, number: start.loadUnaligned(as: UInt64.self), isTagged: false)
    }

    /// How `other` sorts against this key: negative, zero or positive as it comes before, is
    /// equal to, or comes after (the tree's order: the tag byte first, then the number).
    @inline(__always)
    func compare(_ other: NumberedKey) -> Int {
        if other.tag != tag { return other.tag < tag ? -1 : 1 }
        return other.number == number ? 0 : (other.number < number ? -1 : 1)
    }
}

/// Where a leaf's value is.
enum LeafValueLocation {
    case inline(UnsafeRawBufferPointer)
    case overflow(PageReference, length: Int)
}

/// How the column store keeps one row column.
enum ColumnKind: UInt8 {
    /// A collection property: the row has no value for it, and neither has the chunk.
    case none
    /// An 8-byte slot value (integers, Bool, Float, Double, Date, a link's object key).
    case fixed
    /// A value with bytes in the row's tail (String, Data, ObjectId, Decimal128, UUID, AnyRealmValue).
    case variable

    init(type: PropertyType, collection: CollectionKind) {
        if collection != .none { self = .none } else { self = type.isVariableWidth ? .variable : .fixed }
    }

    /// The kind of every row column of a class, in row order.
    static func of(_ info: ClassInfo) -> [ColumnKind] {
        info.storedFields.map { ColumnKind(type: $0.typeInfo.type, collection: $0.typeInfo.collection) }
    }

    /// The kind of every row column of a stored class, in row order (the catalog lists them so).
    static func of(_ stored: SchemaCatalog.StoredClass) -> [ColumnKind] {
        stored.properties.map { ColumnKind(type: PropertyType(rawValue: $0.type) ?? .any, collection: $0.collection) }
    }
}

/// The byte layout of one chunk: the values of up to `slotCount` consecutive object keys, one
/// packed array per column.
///
/// ```
/// u16 slotCount | u16 columnCount | u32 unusedBytes (tail bytes no slot points at)
/// presence bitmap: words x 8 bytes (bit i: key base+i exists)
/// directory: columnCount x u32 (byte offset of the column's block; 0: no block), padded to 8
/// per column block: null bitmap (words x 8 bytes) | slotCount x u64 slots
/// tail: the bytes of variable-width values (a slot holds offset | length << 32, or
///       `inRow` for a value longer than `inlineLimit`, read from the row)
/// ```
/// A fixed-width slot holds what the row's slot holds, zero-extended to 8 bytes (see
/// ``RowFormat``), so a column scan reads the same bits an object read does. Absent keys read as
/// null with a zero slot.
enum ChunkFormat {
    static let headerBytes = 8
    /// Variable-width values longer than this stay in their row only: the slot holds
    /// ``inRow``. A chunk then never holds long texts or blobs, which would make every small
    /// write rewrite all of them (realm-core keeps long strings apart too).
    static let inlineLimit = 64
    /// The slot of a variable-width value kept in its row only.
    static let inRow: UInt64 = 0xFFFF_FFFF
    @inline(__always)
    static func words(_ slotCount: Int) -> Int { (slotCount + 63) >> 6 }
    static func directoryStart(_ slotCount: Int) -> Int { headerBytes + 8 * words(slotCount) }
    static func blocksStart(slotCount: Int, columnCount: Int) -> Int {
        (directoryStart(slotCount) + 4 * columnCount + 7) & ~7
    }
    static func blockBytes(_ slotCount: Int) -> Int { 8 * words(slotCount) + 8 * slotCount }
}

/// A read-only view of a chunk inside the memory map, checked once when made so that the scans
/// can read it without bounds checks. Never kept past the current read.
struct ColumnChunk {
    let base: UnsafeRawPointer
    let byteCount: Int
    let slotCount: Int
    let columnCount: Int
    let wordCount: Int
    /// The object key of slot 0.
    let baseKey: ObjectKey

    /// Nil for bytes that are not a well-formed chunk of `slotCount` slots (a damaged file).
    init?(_ bytes: UnsafeRawBufferPointer, slotCount expected: Int, baseKey: ObjectKey = 0) {
        guard let base = bytes.baseAddress, bytes.count >= ChunkFormat.headerBytes else { return nil }
        let slots = Int(bytes.loadUnaligned(fromByteOffset: 0, as: UInt16.self))
        let columns = Int(bytes.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        guard slots == expected, slots > 0,
              ChunkFormat.blocksStart(slotCount: slots, columnCount: columns) <= bytes.count
        else { return nil }
        let blockBytes = ChunkFormat.blockBytes(slots)
        for column in 0..<columns {
            let offset = Int(bytes.loadUnaligned(fromByteOffset: ChunkFormat.directoryStart(slots) + 4 * column,
                                                 as: UInt32.self))
            if offset != 0, offset + blockBytes > bytes.count { return nil }
        }
        self.base = base
        self.byteCount = bytes.count
        self.slotCount = slots
        self.columnCount = columns
        self.wordCount = ChunkFormat.words(slots)
        self.baseKey = baseKey
    }

    /// Which slots hold an object, 64 per word.
    @inline(__always)
    func presence(_ word: Int) -> UInt64 { base.loadUnaligned(fromByteOffset: 8 + 8 * word, as: UInt64.self) }

    /// Tail bytes no slot points at (left by ``ChunkPatch``).
    var unusedBytes: Int { Int(base.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) }

    /// The block of `column`, or nil when the chunk has none (a collection column, or a column
    /// added to the schema after the chunk was written: its values read as null).
    @inline(__always)
    func block(_ column: Int) -> ColumnBlock? {
        guard column < columnCount else { return nil }
        let offset = Int(base.loadUnaligned(fromByteOffset: ChunkFormat.directoryStart(slotCount) + 4 * column,
                                            as: UInt32.self))
        guard offset != 0 else { return nil }
        return ColumnBlock(chunk: self, nulls: base + offset, slots: base + offset + 8 * wordCount)
    }
}

/// One column's values in a chunk: a null bitmap and one slot per object.
struct ColumnBlock {
    let chunk: ColumnChunk
    let nulls: UnsafeRawPointer
    let slots: UnsafeRawPointer

    @inline(__always)
    func nullWord(_ word: Int) -> UInt64 { nulls.loadUnaligned(fromByteOffset: 8 * word, as: UInt64.self) }
    @inline(__always)
    func isNull(_ slot: Int) -> Bool { nullWord(slot >> 6) & (1 << UInt64(slot & 63)) != 0 }
    @inline(__always)
    func slot(_ slot: Int) -> UInt64 { slots.loadUnaligned(fromByteOffset: 8 * slot, as: UInt64.self) }

    /// Whether the variable-width value in slot `index` is kept in its row only.
    @inline(__always)
    func isInRow(_ index: Int) -> Bool { slot(index) == ChunkFormat.inRow }

    /// The tail bytes of a variable-width value (empty when null, kept in its row, or out of the
    /// chunk's bounds).
    @inline(__always)
    func tail(_ index: Int) -> UnsafeRawBufferPointer {
        let s = slot(index)
        let offset = Int(s & 0xFFFF_FFFF), length = Int(s >> 32)
        guard length > 0, offset + length <= chunk.byteCount else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: chunk.base + offset, count: length)
    }
}

/// A chunk being changed: decoded from its stored bytes (or empty), changed row by row, encoded
/// again. Each column's block is kept as the chunk stores it (null words, then slots) in one
/// flat buffer, so decoding and encoding a fixed-width column is one copy. Variable-width
/// values go to a shared tail that may hold stale bytes until encoding copies only the live
/// ones. A class over raw buffers: a write changes a chunk a slot at a time, and each change
/// must cost a few stores, not a copy-on-write check per array.
final class ChunkBuilder {
    let slotCount: Int
    let kinds: [ColumnKind]
    private let words: Int
    /// Where each column's block starts in `blocks` (-1: the column has none).
    private let starts: [Int]
    private let presence: UnsafeMutablePointer<UInt64>
    private let blocks: UnsafeMutablePointer<UInt64>
    private let blockCount: Int
    private let tail = ByteBuffer()
    /// Bytes a variable-width value may point into instead of being copied to `tail` (the
    /// column log's copies of the rows, alive while the log is flushed): slots whose offset has
    /// ``externalFlag`` set.
    private var external: UnsafeRawPointer?
    private static let externalFlag: UInt64 = 1 << 31

    init(slotCount: Int, kinds: [ColumnKind]) {
        self.slotCount = slotCount
        self.kinds = kinds
        let words = ChunkFormat.words(slotCount)
        self.words = words
        var starts = [Int](), next = 0
        for kind in kinds {
            starts.append(kind == .none ? -1 : next)
            if kind != .none { next += words + slotCount }
        }
        self.starts = starts
        blockCount = next
        presence = .allocate(capacity: words)
        presence.initialize(repeating: 0, count: words)
        blocks = .allocate(capacity: Swift.max(next, 1))
        blocks.initialize(repeating: 0, count: Swift.max(next, 1))
        for start in starts where start >= 0 {
            (blocks + start).update(repeating: ~0, count: words)  // absent objects read as null
        }
    }

    deinit {
        presence.deallocate()
        blocks.deallocate()
    }

    /// The builder holding what `chunk` holds, laid out for `kinds` (the current schema).
    convenience init(_ chunk: ColumnChunk, kinds: [ColumnKind]) {
        self.init(slotCount: chunk.slotCount, kinds: kinds)
        for word in 0..<words { presence[word] = chunk.presence(word) }
        for (column, kind) in kinds.enumerated() where kind != .none {
            guard let block = chunk.block(column) else { continue }
            let target = UnsafeMutableRawPointer(blocks + starts[column])
            if kind == .fixed {
                target.copyMemory(from: block.nulls, byteCount: 8 * (words + slotCount))
                continue
            }
            target.copyMemory(from: block.nulls, byteCount: 8 * words)
            let slots = blocks + starts[column] + words
            for index in 0..<slotCount where !block.isNull(index) {
                slots[index] = block.isInRow(index) ? ChunkFormat.inRow : appendTail(block.tail(index))
            }
        }
    }

    var isEmpty: Bool {
        for word in 0..<words where presence[word] != 0 { return false }
        return true
    }

    @inline(__always)
    private func appendTail(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        guard !bytes.isEmpty else { return 0 }
        return UInt64(tail.append(bytes)) | UInt64(bytes.count) << 32
    }

    /// Stores the values of `row` in slot `index`. With `external`, the row lies in that buffer,
    /// which outlives the builder: its variable-width values are pointed at, not copied.
    func set(_ index: Int, row: RowView, external: UnsafeRawPointer? = nil) {
        var rowInExternal = -1
        if let external, let rowBase = row.bytes.baseAddress {
            self.external = external
            rowInExternal = rowBase - external
        }
        let word = index >> 6, bit: UInt64 = 1 << UInt64(index & 63)
        presence[word] |= bit
        let (columnCount, width) = row.layout
        let slotsStart = RowFormat.slotsStart(columnCount)
        let bytes = row.bytes
        for column in 0..<kinds.count {
            let start = starts[column]
            guard start >= 0 else { continue }
            let isNull = column >= columnCount || bytes[2 &+ column &>> 3] & (1 &<< UInt8(column & 7)) != 0
            if isNull {
                blocks[start &+ word] |= bit
                blocks[start &+ words &+ index] = 0
                continue
            }
            blocks[start &+ word] &= ~bit
            let slot = RowFormat.loadSlot(bytes, at: slotsStart &+ width &* column, width: width)
            guard kinds[column] == .variable else {
                blocks[start &+ words &+ index] = slot
                continue
            }
            // The row's slot gives its tail's offset and length, as ``RowView/tail(_:)`` reads them.
            let (offset, length) = RowFormat.tailSpan(slot, width: width)
            let inBounds = length > 0 && offset &+ length <= bytes.count
            if !inBounds {
                blocks[start &+ words &+ index] = 0
            } else if length > ChunkFormat.inlineLimit {
                blocks[start &+ words &+ index] = ChunkFormat.inRow
            } else if rowInExternal >= 0, UInt64(rowInExternal &+ offset) < Self.externalFlag {
                blocks[start &+ words &+ index] = (UInt64(rowInExternal &+ offset) | Self.externalFlag)
                    | UInt64(length) &<< 32
            } else {
                blocks[start &+ words &+ index] = appendTail(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset &+ length)]))
            }
        }
    }

    /// Empties slot `index` (its object was deleted).
    func remove(_ index: Int) {
        let word = index >> 6, bit: UInt64 = 1 << UInt64(index & 63)
        presence[word] &= ~bit
        for start in starts where start >= 0 {
            blocks[start + word] |= bit
            blocks[start + words + index] = 0
        }
    }

    /// The chunk's bytes.
    func encoded() -> [UInt8] {
        let start = ChunkFormat.blocksStart(slotCount: slotCount, columnCount: kinds.count)
        let blockWords = words + slotCount
        let tailStart = start + 8 * blockCount
        var liveTail = 0
        for (column, kind) in kinds.enumerated() where kind == .variable {
            let slots = blocks + starts[column] + words
            for index in 0..<slotCount { liveTail += Int(slots[index] >> 32) }
        }
        let size = tailStart + liveTail
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            initialized = 0
            guard let out = UnsafeMutableRawPointer(buffer.baseAddress) else { return }
            out.initializeMemory(as: UInt8.self, repeating: 0, count: start)
            out.storeBytes(of: UInt16(slotCount), toByteOffset: 0, as: UInt16.self)
            out.storeBytes(of: UInt16(kinds.count), toByteOffset: 2, as: UInt16.self)
            for word in 0..<words { out.storeBytes(of: presence[word], toByteOffset: 8 + 8 * word, as: UInt64.self) }
            var blockOffset = start, tailOffset = tailStart
            for (column, kind) in kinds.enumerated() where kind != .none {
                out.storeBytes(of: UInt32(blockOffset), toByteOffset: ChunkFormat.directoryStart(slotCount) + 4 * column,
                               as: UInt32.self)
                let source = blocks + starts[column]
                (out + blockOffset).copyMemory(from: source, byteCount: 8 * blockWords)
                if kind == .variable {
                    // Live values only, in slot order, with their slots pointing at them.
                    for index in 0..<slotCount {
                        let value = source[words + index]
                        guard value != 0, value != ChunkFormat.inRow else { continue }
                        let offset = Int(value & 0x7FFF_FFFF), length = Int(value >> 32)
                        let bytes = value & Self.externalFlag == 0 ? UnsafeRawPointer(tail.base) : external
                        guard let bytes else { continue }
                        (out + tailOffset).copyMemory(from: bytes + offset, byteCount: length)
                        out.storeBytes(of: UInt64(tailOffset) | UInt64(length) << 32,
                                       toByteOffset: blockOffset + 8 * (words + index), as: UInt64.self)
                        tailOffset += length
                    }
                }
                blockOffset += 8 * blockWords
            }
            initialized = size
        }
    }
}

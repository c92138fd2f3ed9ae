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
/// u16 slotCount | u16 columnCount | u32 liveCount
/// presence bitmap: words x 8 bytes (bit i: key base+i exists)
/// directory: columnCount x u32 (byte offset of the column's block; 0: no block), padded to 8
/// per column block: null bitmap (words x 8 bytes) | slotCount x u64 slots
/// tail: the bytes of variable-width values (a slot holds offset | length << 32)
/// ```
/// A slot holds exactly what the row's slot holds (see ``RowFormat``), so a column scan reads
/// the same bits an object read does. Absent keys read as null with a zero slot.
enum ChunkFormat {
    static let headerBytes = 8
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

    /// Nil for bytes that are not a well-formed chunk of `slotCount` slots (a damaged file).
    init?(_ bytes: UnsafeRawBufferPointer, slotCount expected: Int) {
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
    }

    /// Which slots hold an object, 64 per word.
    @inline(__always)
    func presence(_ word: Int) -> UInt64 { base.loadUnaligned(fromByteOffset: 8 + 8 * word, as: UInt64.self) }

    var liveCount: Int { Int(base.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) }

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

    /// The tail bytes of a variable-width value (empty when null, or out of the chunk's bounds).
    @inline(__always)
    func tail(_ index: Int) -> UnsafeRawBufferPointer {
        let s = slot(index)
        let offset = Int(s & 0xFFFF_FFFF), length = Int(s >> 32)
        guard length > 0, offset + length <= chunk.byteCount else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: chunk.base + offset, count: length)
    }
}

/// A chunk being changed: decoded from its stored bytes (or empty), changed row by row, encoded
/// again. Variable-width values go to a shared tail that may hold stale bytes until encoding
/// copies only the live ones.
struct ChunkBuilder {
    let slotCount: Int
    let kinds: [ColumnKind]
    private(set) var presence: [UInt64]
    private var nulls: [[UInt64]]
    private var slots: [[UInt64]]
    private var tail: [UInt8] = []

    init(slotCount: Int, kinds: [ColumnKind]) {
        self.slotCount = slotCount
        self.kinds = kinds
        let words = ChunkFormat.words(slotCount)
        presence = Array(repeating: 0, count: words)
        nulls = kinds.map { $0 == .none ? [] : Array(repeating: ~0, count: words) }
        slots = kinds.map { $0 == .none ? [] : Array(repeating: 0, count: slotCount) }
    }

    /// The builder holding what `chunk` holds, laid out for `kinds` (the current schema).
    init(_ chunk: ColumnChunk, kinds: [ColumnKind]) {
        self.init(slotCount: chunk.slotCount, kinds: kinds)
        for word in 0..<presence.count { presence[word] = chunk.presence(word) }
        for (column, kind) in kinds.enumerated() where kind != .none {
            guard let block = chunk.block(column) else { continue }
            for word in 0..<presence.count { nulls[column][word] = block.nullWord(word) }
            for index in 0..<slotCount {
                if kind == .variable {
                    slots[column][index] = appendTail(block.tail(index))
                } else {
                    slots[column][index] = block.slot(index)
                }
            }
        }
    }

    var isEmpty: Bool { presence.allSatisfy { $0 == 0 } }

    private mutating func appendTail(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        guard !bytes.isEmpty else { return 0 }
        let offset = tail.count
        tail.append(contentsOf: bytes)
        return UInt64(offset) | UInt64(bytes.count) << 32
    }

    /// Stores the values of `row` in slot `index`.
    mutating func set(_ index: Int, row: RowView) {
        let word = index >> 6, bit: UInt64 = 1 << UInt64(index & 63)
        presence[word] |= bit
        for (column, kind) in kinds.enumerated() where kind != .none {
            if row.isNull(column) {
                nulls[column][word] |= bit
                slots[column][index] = 0
            } else {
                nulls[column][word] &= ~bit
                slots[column][index] = kind == .variable ? appendTail(row.tail(column)) : row.slot(column)
            }
        }
    }

    /// Empties slot `index` (its object was deleted).
    mutating func remove(_ index: Int) {
        let word = index >> 6, bit: UInt64 = 1 << UInt64(index & 63)
        presence[word] &= ~bit
        for (column, kind) in kinds.enumerated() where kind != .none {
            nulls[column][word] |= bit
            slots[column][index] = 0
        }
    }

    /// The chunk's bytes.
    func encoded() -> [UInt8] {
        let words = presence.count
        let start = ChunkFormat.blocksStart(slotCount: slotCount, columnCount: kinds.count)
        let blockBytes = ChunkFormat.blockBytes(slotCount)
        let blockCount = kinds.filter { $0 != .none }.count
        let tailStart = start + blockCount * blockBytes
        var liveTail = 0
        for (column, kind) in kinds.enumerated() where kind == .variable {
            for value in slots[column] { liveTail += Int(value >> 32) }
        }
        let size = tailStart + liveTail
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            let out = UnsafeMutableRawBufferPointer(buffer)
            out.initializeMemory(as: UInt8.self, repeating: 0)
            out.storeBytes(of: UInt16(slotCount), toByteOffset: 0, as: UInt16.self)
            out.storeBytes(of: UInt16(kinds.count), toByteOffset: 2, as: UInt16.self)
            let live = presence.reduce(0) { $0 + $1.nonzeroBitCount }
            out.storeBytes(of: UInt32(live), toByteOffset: 4, as: UInt32.self)
            for word in 0..<words { out.storeBytes(of: presence[word], toByteOffset: 8 + 8 * word, as: UInt64.self) }
            var blockOffset = start, tailOffset = tailStart
            for (column, kind) in kinds.enumerated() where kind != .none {
                out.storeBytes(of: UInt32(blockOffset), toByteOffset: ChunkFormat.directoryStart(slotCount) + 4 * column,
                               as: UInt32.self)
                for word in 0..<words {
                    out.storeBytes(of: nulls[column][word], toByteOffset: blockOffset + 8 * word, as: UInt64.self)
                }
                let slotStart = blockOffset + 8 * words
                for index in 0..<slotCount {
                    var value = slots[column][index]
                    if kind == .variable, value != 0, let target = out.baseAddress {
                        let offset = Int(value & 0xFFFF_FFFF), length = Int(value >> 32)
                        tail.withUnsafeBytes { source in
                            guard let from = source.baseAddress else { return }
                            (target + tailOffset).copyMemory(from: from + offset, byteCount: length)
                        }
                        value = UInt64(tailOffset) | UInt64(length) << 32
                        tailOffset += length
                    }
                    out.storeBytes(of: value, toByteOffset: slotStart + 8 * index, as: UInt64.self)
                }
                blockOffset += blockBytes
            }
            initialized = size
        }
    }
}

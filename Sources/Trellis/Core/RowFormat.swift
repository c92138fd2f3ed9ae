import Foundation

/// The byte layout of one object row, giving O(1) access to any column.
///
/// ```
/// u16 header | null bitmap (ceil(count/8) bytes) | count x w-byte slots | tail
/// ```
/// The header's low 13 bits are the column count, its top 3 bits the slot width `w`: 1-7 bytes,
/// or 0 for 8 (rows written before file format 6 all have 8-byte slots and a header that is just
/// the count, so they read unchanged). A writer picks the smallest width that holds every slot of
/// the row (``RowWriter``): a row of small integers, links and short texts takes 3 bytes a slot
/// instead of 8; one wide value (a Double, a negative integer) makes the whole row's slots 8.
///
/// A slot holds a fixed-width value (integers, Bool, Float, Double, Date as seconds since
/// 2001, a link's object key) truncated to `w` bytes (little-endian; the bytes left out are
/// zero) or, for variable-width values (String, Data, ObjectId, Decimal128, UUID,
/// AnyRealmValue), the tail offset from the row's start (low `4w` bits) and length (high `4w`
/// bits). Collections keep nothing in the row. A row written with fewer columns than the schema
/// (an older schema) reads as null for the missing ones.
///
/// Collection elements are one-column rows too (``RowWriter/encode(single:)``), but always with
/// 8-byte slots: a set element's bytes are its key, so its encoding must not change.
@usableFromInline
enum RowFormat {
    /// The most columns a row can have: the header's 13 bits of count.
    static let maxColumns = 0x1FFF

    @inlinable @inline(__always)
    static func bitmapBytes(_ columns: Int) -> Int { (columns &+ 7) >> 3 }
    @inlinable @inline(__always)
    static func slotsStart(_ columns: Int) -> Int { 2 &+ bitmapBytes(columns) }
    @inlinable @inline(__always)
    static func tailStart(_ columns: Int, width: Int = 8) -> Int { slotsStart(columns) &+ width &* columns }

    /// The column count a header gives.
    @inlinable @inline(__always)
    static func columnCount(header: UInt16) -> Int { Int(header & 0x1FFF) }

    /// The slot width a header gives: its top 3 bits, 0 standing for 8.
    @inlinable @inline(__always)
    static func slotWidth(header: UInt16) -> Int { Int(((header &>> 13) &- 1) & 7) &+ 1 }

    /// The header of a row of `columns` columns with slots of `width` bytes.
    static func header(columns: Int, width: Int) -> UInt16 { UInt16(columns) | UInt16(width & 7) << 13 }

    /// The `width`-byte slot at `offset` of `bytes`, zero-extended; 0 when `bytes` does not
    /// hold it (a damaged row whose header claims more than its bytes).
    @inlinable @inline(__always)
    static func loadSlot(_ bytes: UnsafeRawBufferPointer, at offset: Int, width: Int) -> UInt64 {
        if offset &+ 8 <= bytes.count {
            return bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & (UInt64.max &>> UInt64(64 &- 8 &* width))
        }
        guard offset &+ width <= bytes.count else { return 0 }
        var value: UInt64 = 0
        for index in 0..<width { value |= UInt64(bytes[offset &+ index]) &<< UInt64(8 &* index) }
        return value
    }

    /// Copies `source` (at most 16 bytes) to `destination` with two loads and two stores of
    /// the widest size that fits (they overlap when the count is not a power of two), writing
    /// nothing past `source.count` bytes: a short text read costs no `memcpy` call.
    @inlinable @inline(__always)
    static func copyShort(_ source: UnsafeRawBufferPointer, to destination: UnsafeMutableRawPointer) {
        guard let from = source.baseAddress else { return }
        @inline(__always) func copy<Word>(_: Word.Type, _ count: Int) {
            let last = count &- MemoryLayout<Word>.size
            destination.storeBytes(of: from.loadUnaligned(as: Word.self), as: Word.self)
            destination.storeBytes(of: from.loadUnaligned(fromByteOffset: last, as: Word.self), toByteOffset: last, as: Word.self)
        }
        switch source.count {
        case 8...16: copy(UInt64.self, source.count)
        case 4..<8: copy(UInt32.self, source.count)
        case 2..<4: copy(UInt16.self, source.count)
        case 1: destination.storeBytes(of: from.load(as: UInt8.self), as: UInt8.self)
        default: break
        }
    }

    /// The tail offset and length a variable-width slot of `width` bytes holds.
    @inlinable @inline(__always)
    static func tailSpan(_ slot: UInt64, width: Int) -> (offset: Int, length: Int) {
        let half = UInt64(4 &* width)
        return (Int(slot & ((1 &<< half) &- 1)), Int(slot &>> half))
    }
}

/// A read-only view of a row inside the memory map. Never kept past the current read.
///
/// The scalar reads are inlinable: a model's `@Persisted` getter, specialized in the app's
/// module, reads its slot with no call.
@usableFromInline
struct RowView {
    @usableFromInline let bytes: UnsafeRawBufferPointer

    @inlinable
    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The number of columns the row holds and its slot width; 0 columns for bytes too short
    /// for the count they claim (a damaged file), so that readers of the whole row (which index
    /// its bytes directly) see no column. Single-column reads use ``claimedLayout``.
    @inlinable @inline(__always)
    var layout: (count: Int, width: Int) {
        let (count, width) = claimedLayout
        return RowFormat.tailStart(count, width: width) <= bytes.count ? (count, width) : (0, 8)
    }

    /// The number of columns the row holds (see ``layout``).
    @inlinable @inline(__always)
    var columnCount: Int { layout.count }

    /// Whether `column` holds the same value in both rows.
    func hasSameColumn(_ other: RowView, _ column: Int, variableWidth: Bool) -> Bool {
        let null = isNull(column)
        if null != other.isNull(column) { return false }
        if null { return true }
        if variableWidth { return tail(column).elementsEqual(other.tail(column)) }
        return slot(column) == other.slot(column)
    }

    /// The column count and slot width the header claims, unchecked: a column read checks its
    /// own bytes instead (cheaper than ``layout``'s check of the whole row, on every property
    /// read). Only ``isNull(_:)``, ``slot(_:)`` and ``tail(_:)`` use it.
    @inlinable @inline(__always)
    var claimedLayout: (count: Int, width: Int) {
        guard bytes.count >= 2 else { return (0, 8) }
        let header = bytes.loadUnaligned(fromByteOffset: 0, as: UInt16.self)
        return (RowFormat.columnCount(header: header), RowFormat.slotWidth(header: header))
    }

    /// Whether `column` is null (true for a column the row lacks, and for every column of a
    /// damaged row whose null bitmap runs past its bytes).
    @inlinable @inline(__always)
    func isNull(_ column: Int) -> Bool {
        let count = claimedLayout.count
        guard column < count, RowFormat.slotsStart(count) <= bytes.count else { return true }
        return bytes[2 &+ column &>> 3] & (1 &<< UInt8(column & 7)) != 0
    }

    /// The slot of `column`, zero-extended to 8 bytes (0 for a column the row lacks, or whose
    /// slot lies past the row's bytes in a damaged file).
    @inlinable @inline(__always)
    func slot(_ column: Int) -> UInt64 {
        let (count, width) = claimedLayout
        guard column < count else { return 0 }
        return RowFormat.loadSlot(bytes, at: RowFormat.slotsStart(count) &+ width &* column, width: width)
    }

    @inlinable @inline(__always)
    func int(_ column: Int) -> Int64 { Int64(bitPattern: slot(column)) }
    @inlinable @inline(__always)
    func double(_ column: Int) -> Double { Double(bitPattern: slot(column)) }
    @inlinable @inline(__always)
    func float(_ column: Int) -> Float { Float(bitPattern: UInt32(truncatingIfNeeded: slot(column))) }
    @inlinable @inline(__always)
    func bool(_ column: Int) -> Bool { slot(column) != 0 }

    /// The tail bytes of a variable-width column (empty when null or absent).
    @inlinable @inline(__always)
    func tail(_ column: Int) -> UnsafeRawBufferPointer {
        let (offset, length) = RowFormat.tailSpan(slot(column), width: claimedLayout.width)
        guard length > 0, offset &+ length <= bytes.count, let base = bytes.baseAddress else {
            return UnsafeRawBufferPointer(start: bytes.baseAddress, count: 0)
        }
        return UnsafeRawBufferPointer(start: base + offset, count: length)
    }

    /// A text column. Short texts (up to 15 bytes) are built in place as a small string, which
    /// checks them for ASCII with one test instead of validating them byte by byte; anything
    /// else is validated (invalid UTF-8 from a damaged file is repaired, never trusted).
    @inlinable
    func string(_ column: Int) -> String {
        let utf8 = tail(column)
        guard utf8.count <= 15 else { return String(decoding: utf8, as: UTF8.self) }
        return String(unsafeUninitializedCapacity: utf8.count) { buffer in
            if let destination = buffer.baseAddress { RowFormat.copyShort(utf8, to: UnsafeMutableRawPointer(destination)) }
            return utf8.count
        }
    }
    func data(_ column: Int) -> Data { Data(tail(column)) }
    @inlinable
    func date(_ column: Int) -> Date { Date(timeIntervalSinceReferenceDate: double(column)) }

    func objectId(_ column: Int) -> ObjectId { ObjectId(bytes: tail(column)) ?? ObjectId() }

    func uuid(_ column: Int) -> UUID {
        let t = tail(column)
        guard t.count == 16 else { return UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: t) }
        return UUID(uuid: raw)
    }

    func decimal(_ column: Int) -> Decimal128 {
        Decimal128(Decimal(string: string(column), locale: Locale(identifier: "en_US_POSIX")) ?? .nan)
    }

    func mixed(_ column: Int) -> MixedValue? {
        isNull(column) ? nil : MixedCoding.decode(tail(column))
    }
}

/// Encodes rows from stored values.
enum RowWriter {
    /// How many tail bytes a value needs (0 for a slot-only value).
    static func tailByteCount(of value: _StoredValue.Payload) -> Int {
        switch value {
        case .string(let s): s.utf8.count
        case .data(let d): d.count
        case .objectId: 12
        case .uuid: 16
        case .decimal(let d): d.storedText.utf8.count
        case .mixed(let m): MixedCoding.encode(m).count
        default: 0
        }
    }

    /// Whether a value is stored in the tail (its slot then holds offset and length).
    static func hasTail(_ value: _StoredValue.Payload) -> Bool {
        switch value {
        case .string, .data, .objectId, .uuid, .decimal, .mixed: true
        default: false
        }
    }

    /// Copies a value's tail bytes to `destination`, which has room for `tailByteCount(of:)`.
    static func writeTail(of value: _StoredValue.Payload, to destination: UnsafeMutableRawPointer) {
        func copy(_ source: UnsafeRawBufferPointer) {
            if let base = source.baseAddress { destination.copyMemory(from: base, byteCount: source.count) }
        }
        switch value {
        case .string(var s): s.withUTF8 { copy(UnsafeRawBufferPointer($0)) }
        case .data(let d): d.withUnsafeBytes(copy)
        case .objectId(let o): withUnsafeBytes(of: o.bytes, copy)
        case .uuid(let u): withUnsafeBytes(of: u.uuid, copy)
        case .decimal(let d): Array(d.storedText.utf8).withUnsafeBytes(copy)
        case .mixed(let m): MixedCoding.encode(m).withUnsafeBytes(copy)
        default: break
        }
    }

    static func slotBits(of value: _StoredValue.Payload) -> UInt64 {
        switch value {
        case .int(let i): UInt64(bitPattern: i)
        case .bool(let b): b ? 1 : 0
        case .float(let f): UInt64(f.bitPattern)
        case .double(let d): d.bitPattern
        case .date(let d): d.timeIntervalSinceReferenceDate.bitPattern
        case .link(let key): key
        default: 0
        }
    }

    /// The layout of the row of `values`: its slot width and size (header, slots and tail).
    /// With `compact` false, 8-byte slots (collection elements, whose bytes may be keys).
    private static func layout(of values: some Collection<_StoredValue.Payload>, compact: Bool)
        -> (width: Int, byteCount: Int)
    {
        let count = values.count
        var tailSize = 0, longest = 0, fixedBits: UInt64 = 0, variable = false
        for value in values {
            if hasTail(value) {
                let length = tailByteCount(of: value)
                tailSize += length
                longest = max(longest, length)
                variable = true
            } else {
                fixedBits |= slotBits(of: value)
            }
        }
        guard compact else { return (8, RowFormat.tailStart(count) + tailSize) }
        precondition(count <= RowFormat.maxColumns,
                     "A class can have at most \(RowFormat.maxColumns) persisted properties")
        var width = max(1, (64 - fixedBits.leadingZeroBitCount + 7) / 8)
        if variable {
            // Every offset and length must fit in half a slot: the offsets end at the row's end.
            while width < 8 {
                let limit = 1 << (4 * width), end = RowFormat.tailStart(count, width: width) + tailSize
                if end < limit && longest < limit { break }
                width += 1
            }
        }
        return (width, RowFormat.tailStart(count, width: width) + tailSize)
    }

    /// Encodes a full row from one value per column, in one allocation, with the smallest slot
    /// width that holds every value (``RowFormat``).
    static func encode(_ values: some Collection<_StoredValue.Payload>) -> [UInt8] {
        encode(values, compact: true)
    }

    /// Encodes a full row, with 8-byte slots unless `compact` (the rows of files before format 6
    /// had them; a collection element has them in every format).
    static func encode(_ values: some Collection<_StoredValue.Payload>, compact: Bool) -> [UInt8] {
        let (width, byteCount) = layout(of: values, compact: compact)
        return [UInt8].zeroed(count: byteCount) { write(values, width: width, into: $0) }
    }

    /// Encodes a row of one column (a collection element) with an 8-byte slot, as every
    /// version of the format has (a set element's bytes are its key): one allocation.
    static func encode(single value: _StoredValue.Payload) -> [UInt8] {
        encode(CollectionOfOne(value), compact: false)
    }

    /// The row of `values`, encoded into `scratch` (valid until `scratch` next changes): a row
    /// written per object allocates no array, whose storage type a generic allocation looks up.
    static func encode(_ values: UnsafeBufferPointer<_StoredValue.Payload>, into scratch: ByteBuffer)
        -> UnsafeRawBufferPointer
    {
        let (width, byteCount) = layout(of: values, compact: true)
        let raw = scratch.resetZeroed(count: byteCount)
        write(values, width: width, into: raw)
        return UnsafeRawBufferPointer(raw)
    }

    private static func write(_ values: some Collection<_StoredValue.Payload>, width: Int,
                              into buffer: UnsafeMutableRawBufferPointer)
    {
        guard let base = buffer.baseAddress else { return }
        let count = values.count
        buffer.storeBytes(of: RowFormat.header(columns: count, width: width), toByteOffset: 0, as: UInt16.self)
        var tailOffset = RowFormat.tailStart(count, width: width)
        let slots = RowFormat.slotsStart(count), half = 4 * width
        for (column, value) in values.enumerated() {
            if case .null = value {
                buffer[2 + column >> 3] |= 1 << UInt8(column & 7)
                continue
            }
            var bits = slotBits(of: value)
            if hasTail(value) {
                let length = tailByteCount(of: value)
                bits = UInt64(tailOffset) | UInt64(length) << UInt64(half)
                if length > 0 { writeTail(of: value, to: base + tailOffset) }
                tailOffset += length
            }
            let start = slots + width * column
            for index in 0..<width { buffer[start + index] = UInt8(truncatingIfNeeded: bits >> UInt64(8 * index)) }
        }
    }

    /// A copy of `row` with `column` replaced by `value` (and columns up to `columnCount`).
    ///
    /// Untouched columns are copied as raw bits or raw tail bytes, so no value is decoded.
    static func rewrite(_ row: RowView, columnCount: Int, isVariableWidth: (Int) -> Bool,
                        replacing column: Int, with value: _StoredValue.Payload) -> [UInt8]
    {
        var values = [_StoredValue.Payload]()
        values.reserveCapacity(columnCount)
        for c in 0..<columnCount {
            if c == column {
                values.append(value)
            } else {
                values.append(rawPayload(row, c, variableWidth: isVariableWidth(c)))
            }
        }
        return encode(values)
    }

    /// `row` with the slot width of its values (``RowFormat``): the same columns, null bits,
    /// slots and tail bytes; nil when it has that width already (the file-format-6 upgrade).
    static func compacted(_ row: RowView, isVariableWidth: (Int) -> Bool) -> [UInt8]? {
        let (count, width) = row.layout
        let values = (0..<count).map { rawPayload(row, $0, variableWidth: isVariableWidth($0)) }
        return layout(of: values, compact: true).width == width ? nil : encode(values)
    }

    /// Column `c` of `row` as raw bits or raw tail bytes.
    static func rawPayload(_ row: RowView, _ c: Int, variableWidth: Bool) -> _StoredValue.Payload {
        if row.isNull(c) { return .null }
        if variableWidth { return .data(Data(row.tail(c))) }
        return .int(Int64(bitPattern: row.slot(c)))
    }
}

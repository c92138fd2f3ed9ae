import Foundation

/// The byte layout of one object row, giving O(1) access to any column.
///
/// ```
/// u16 columnCount | null bitmap (ceil(count/8) bytes) | count x 8-byte slots | tail
/// ```
/// A slot holds a fixed-width value (integers, Bool, Float, Double, Date as seconds since
/// 2001, a link's object key) or, for variable-width values (String, Data, ObjectId,
/// Decimal128, UUID, AnyRealmValue), the tail offset (low 32 bits) and length (high 32 bits).
/// Collections keep nothing in the row. A row written with fewer columns than the schema
/// (an older schema) reads as null for the missing ones.
@usableFromInline
enum RowFormat {
    @inlinable @inline(__always)
    static func bitmapBytes(_ columns: Int) -> Int { (columns &+ 7) >> 3 }
    @inlinable @inline(__always)
    static func slotsStart(_ columns: Int) -> Int { 2 &+ bitmapBytes(columns) }
    @inlinable @inline(__always)
    static func tailStart(_ columns: Int) -> Int { slotsStart(columns) &+ 8 &* columns }
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

    /// The number of columns the row holds; 0 for bytes too short for the count they claim
    /// (a damaged file), so every column then reads as null.
    @inlinable @inline(__always)
    var columnCount: Int {
        guard bytes.count >= 2 else { return 0 }
        let count = Int(bytes.loadUnaligned(fromByteOffset: 0, as: UInt16.self))
        return RowFormat.tailStart(count) <= bytes.count ? count : 0
    }

    /// Whether `column` holds the same value in both rows.
    func hasSameColumn(_ other: RowView, _ column: Int, variableWidth: Bool) -> Bool {
        let null = isNull(column)
        if null != other.isNull(column) { return false }
        if null { return true }
        if variableWidth { return tail(column).elementsEqual(other.tail(column)) }
        return slot(column) == other.slot(column)
    }

    @inlinable @inline(__always)
    func isNull(_ column: Int) -> Bool {
        guard column < columnCount else { return true }
        let byte = bytes[2 + column >> 3]
        return byte & (1 << UInt8(column & 7)) != 0
    }

    @inlinable @inline(__always)
    func slot(_ column: Int) -> UInt64 {
        guard column < columnCount else { return 0 }
        return bytes.loadUnaligned(fromByteOffset: RowFormat.slotsStart(columnCount) &+ 8 &* column, as: UInt64.self)
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
        let s = slot(column)
        let offset = Int(s & 0xFFFF_FFFF), length = Int(s >> 32)
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
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: utf8)
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
        case .decimal(let d): d.stringValue.utf8.count
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
        case .decimal(let d): Array(d.stringValue.utf8).withUnsafeBytes(copy)
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

    /// The size of the row of `values`: header, slots and tail.
    private static func byteCount(of values: some Collection<_StoredValue.Payload>) -> Int {
        var tailSize = 0
        for value in values { tailSize += tailByteCount(of: value) }
        return RowFormat.tailStart(values.count) + tailSize
    }

    /// Encodes a full row from one value per column, in one allocation.
    static func encode(_ values: some Collection<_StoredValue.Payload>) -> [UInt8] {
        [UInt8].zeroed(count: byteCount(of: values)) { write(values, into: $0) }
    }

    /// Encodes a row of one column (a collection element): one allocation, the row's.
    static func encode(single value: _StoredValue.Payload) -> [UInt8] {
        encode(CollectionOfOne(value))
    }

    /// The row of `values`, encoded into `scratch` (valid until `scratch` next changes): a row
    /// written per object allocates no array, whose storage type a generic allocation looks up.
    static func encode(_ values: UnsafeBufferPointer<_StoredValue.Payload>, into scratch: ByteBuffer)
        -> UnsafeRawBufferPointer
    {
        let raw = scratch.resetZeroed(count: byteCount(of: values))
        write(values, into: raw)
        return UnsafeRawBufferPointer(raw)
    }

    private static func write(_ values: some Collection<_StoredValue.Payload>, into buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        let count = values.count
        buffer.storeBytes(of: UInt16(count), toByteOffset: 0, as: UInt16.self)
        var tailOffset = RowFormat.tailStart(count)
        let slots = RowFormat.slotsStart(count)
        for (column, value) in values.enumerated() {
            if case .null = value {
                buffer[2 + column >> 3] |= 1 << UInt8(column & 7)
                continue
            }
            var bits = slotBits(of: value)
            if hasTail(value) {
                let length = tailByteCount(of: value)
                bits = UInt64(tailOffset) | UInt64(length) << 32
                if length > 0 { writeTail(of: value, to: base + tailOffset) }
                tailOffset += length
            }
            buffer.storeBytes(of: bits, toByteOffset: slots + 8 * column, as: UInt64.self)
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
            } else if row.isNull(c) {
                values.append(.null)
            } else if isVariableWidth(c) {
                values.append(.data(Data(row.tail(c))))
            } else {
                values.append(.int(Int64(bitPattern: row.slot(c))))
            }
        }
        return encode(values)
    }
}

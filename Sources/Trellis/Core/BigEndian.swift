/// Big-endian integers in index keys, so LMDB's byte order is numeric order and all entries
/// sharing a leading integer are contiguous.
enum BigEndian {
    static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        for i in (0..<MemoryLayout<T>.size).reversed() { out.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
    }

    static func read<T: FixedWidthInteger>(_ raw: UnsafeRawBufferPointer, at offset: Int, as _: T.Type = T.self) -> T {
        var value: T = 0
        for i in 0..<MemoryLayout<T>.size { value = value << 8 | T(raw[offset + i]) }
        return value
    }
}

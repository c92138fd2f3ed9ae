/// Big-endian integers in index keys, so LMDB's byte order is numeric order and all entries
/// sharing a leading integer are contiguous.
enum BigEndian {
    static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        for i in (0..<MemoryLayout<T>.size).reversed() { out.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
    }

    static func read<T: FixedWidthInteger>(_ raw: UnsafeRawBufferPointer, at offset: Int, as _: T.Type = T.self) -> T {
        var value: T = 0
        guard offset >= 0, offset + MemoryLayout<T>.size <= raw.count else { return 0 } // damaged bytes
        for i in 0..<MemoryLayout<T>.size { value = value << 8 | T(raw[offset + i]) }
        return value
    }
}

extension UnsafeRawBufferPointer {
    /// The integer stored (in native byte order) at `offset`, or 0 when the bytes are too short:
    /// values read from a damaged file must not read past their end.
    @inline(__always)
    func load<T: FixedWidthInteger>(orZeroAt offset: Int, as type: T.Type) -> T {
        guard offset >= 0, offset + MemoryLayout<T>.size <= count else { return 0 }
        return loadUnaligned(fromByteOffset: offset, as: T.self)
    }
}

/// Big-endian integers in index keys, so LMDB's byte order is numeric order and all entries
/// sharing a leading integer are contiguous.
enum BigEndian {
    static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
    }

    /// Stores `value` most significant byte first at `offset` of `buffer`.
    @inline(__always)
    static func store<T: FixedWidthInteger>(_ value: T, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) {
        buffer.storeBytes(of: value.bigEndian, toByteOffset: offset, as: T.self)
    }

    static func read<T: FixedWidthInteger>(_ raw: UnsafeRawBufferPointer, at offset: Int, as _: T.Type = T.self) -> T {
        guard offset >= 0, offset + MemoryLayout<T>.size <= raw.count else { return 0 } // damaged bytes
        return T(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: T.self))
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

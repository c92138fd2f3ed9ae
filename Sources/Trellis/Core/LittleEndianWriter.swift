/// Writes little-endian integers one after another into bytes the caller sized (a change
/// record, the change log's header): no array grown append by append, no generic
/// `append(contentsOf:)` per integer.
struct LittleEndianWriter {
    private let bytes: UnsafeMutableRawBufferPointer
    /// Bytes written so far.
    private(set) var count = 0

    init(_ bytes: UnsafeMutableRawBufferPointer) {
        self.bytes = bytes
    }

    @inline(__always)
    mutating func put<T: FixedWidthInteger>(_ value: T) {
        precondition(count + MemoryLayout<T>.size <= bytes.count, "Trellis internal error: a record outgrew its size.")
        bytes.storeBytes(of: value.littleEndian, toByteOffset: count, as: T.self)
        count += MemoryLayout<T>.size
    }
}

extension LittleEndianWriter {
    /// Calls `use` with `count` bytes that `write` fills (on the stack when they are few): for
    /// bytes stored once and not kept, such as the change record of a commit.
    static func withBytes<R>(count: Int, _ write: (inout LittleEndianWriter) -> Void,
                             _ use: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: count, alignment: 8) { buffer in
            var writer = LittleEndianWriter(buffer)
            write(&writer)
            precondition(writer.count == count, "Trellis internal error: a record was not filled.")
            return try use(UnsafeRawBufferPointer(buffer))
        }
    }
}

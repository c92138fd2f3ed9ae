/// A growable run of bytes that appends with one copy: no copy-on-write check, no generic
/// `append(contentsOf:)`. For the column log and the chunk builder, which append a row or a
/// value per write.
final class ByteBuffer {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 256) {
        self.capacity = Swift.max(capacity, 16)
        base = .allocate(byteCount: self.capacity, alignment: 8)
    }

    deinit { base.deallocate() }

    /// Appends `bytes`; returns the offset they start at.
    @inline(__always)
    @discardableResult
    func append(_ bytes: UnsafeRawBufferPointer) -> Int {
        let offset = count
        if count + bytes.count > capacity { grow(to: count + bytes.count) }
        if let source = bytes.baseAddress { (base + offset).copyMemory(from: source, byteCount: bytes.count) }
        count += bytes.count
        return offset
    }

    /// Empties the buffer, keeping its memory unless it grew large.
    func removeAll() {
        count = 0
        if capacity > 1 << 20 {
            base.deallocate()
            capacity = 4096
            base = .allocate(byteCount: capacity, alignment: 8)
        }
    }

    /// Empties the buffer and fills it with `count` zero bytes, which the caller writes (valid
    /// until the buffer next changes). For rows encoded once per write: no array is allocated.
    func resetZeroed(count: Int) -> UnsafeMutableRawBufferPointer {
        self.count = 0
        if capacity > 1 << 20, count <= 4096 {
            // One large row left the buffer large: give the memory back.
            base.deallocate()
            capacity = 4096
            base = .allocate(byteCount: capacity, alignment: 8)
        }
        if count > capacity { grow(to: count) }
        base.initializeMemory(as: UInt8.self, repeating: 0, count: count)
        self.count = count
        return UnsafeMutableRawBufferPointer(start: base, count: count)
    }

    /// The `length` bytes at `offset`.
    @inline(__always)
    func bytes(at offset: Int, length: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + offset, count: length)
    }

    private func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        grown.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = grown
        capacity = newCapacity
    }
}

extension Array where Element == UInt8 {
    /// `count` bytes, zeroed then written by `body`, with room for `extraCapacity` more.
    ///
    /// Written on the stack, then appended to an array reserved to size: a byte array made
    /// with `Array(unsafeUninitializedCapacity:)` (or `Array(repeating:count:)`) is allocated by
    /// a function of the standard library that is never inlined, so it stays generic and looks
    /// the array's storage type up at run time, about 300 instructions per array. For the small
    /// arrays made per element or per object.
    static func zeroed(count: Int, extraCapacity: Int = 0, _ body: (UnsafeMutableRawBufferPointer) -> Void)
        -> [UInt8]
    {
        var bytes = [UInt8]()
        bytes.reserveCapacity(count + extraCapacity)
        withUnsafeTemporaryAllocation(byteCount: count, alignment: 8) { buffer in
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            body(buffer)
            bytes.append(contentsOf: UnsafeRawBufferPointer(buffer))
        }
        return bytes
    }
}

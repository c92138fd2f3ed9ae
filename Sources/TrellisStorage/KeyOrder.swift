/// How a tree orders its keys (docs/STORAGE.md, section 2.7). Fixed when the tree is created.
public enum KeyOrder: UInt8, Sendable {
    /// Unsigned bytes compared, then the shorter key first (LMDB's default order).
    case bytes = 0
    /// Keys of 4 or 8 bytes (one width per tree), compared as native unsigned integers
    /// (LMDB's `MDB_INTEGERKEY`).
    case integer = 1

    /// Negative, zero or positive, as `a` sorts before, with or after `b`.
    @inline(__always)
    func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        switch self {
        case .bytes:
            return Self.compareBytes(a, b)
        case .integer:
            if a.count == 8 && b.count == 8 {
                let left = a.loadUnaligned(as: UInt64.self), right = b.loadUnaligned(as: UInt64.self)
                return left == right ? 0 : (left < right ? -1 : 1)
            }
            if a.count == 4 && b.count == 4 {
                let left = a.loadUnaligned(as: UInt32.self), right = b.loadUnaligned(as: UInt32.self)
                return left == right ? 0 : (left < right ? -1 : 1)
            }
            // Mixed widths never get in (checked on put); order them by width to stay total.
            return a.count == b.count ? Self.compareBytes(a, b) : a.count - b.count
        }
    }

    /// Unsigned bytes compared eight at a time, then the shorter key first. `from`: the bytes
    /// before it are known to be equal in both (and both are at least that long).
    @inline(__always)
    static func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, from start: Int = 0) -> Int {
        let shared = min(a.count, b.count)
        var offset = start
        while offset &+ 8 <= shared {
            let left = UInt64(bigEndian: a.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let right = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            if left != right { return left < right ? -1 : 1 }
            offset &+= 8
        }
        while offset < shared {
            let left = a[offset], right = b[offset]
            if left != right { return left < right ? -1 : 1 }
            offset &+= 1
        }
        return a.count &- b.count
    }
}

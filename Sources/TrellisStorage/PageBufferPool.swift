import Synchronization

/// Page buffers (`DirtyPage`, `Layout.pageSize` bytes) kept between write transactions, so
/// that a small commit does not allocate and free its ~8 dirty pages every time (issue 37,
/// docs/STORAGE.md 13.2 item 5: a 4 KiB `malloc` and `free` cost ~600 instructions together,
/// the `free` merging the chunk with its neighbours).
///
/// A buffer's content is never read before its new owner writes it (`TreePages.newPage`), so
/// nothing of an earlier transaction is seen. One pool for the process: the trees that own the
/// buffers may be released on any thread, after their transaction ended.
final class PageBufferPool: Sendable {
    static let shared = PageBufferPool()

    /// Buffers kept at most (256 KiB): a large transaction's others are freed.
    static let kept = 64

    /// Spare buffers, by address.
    private let spare = Mutex<[UInt]>([])

    deinit {
        spare.withLock { spare in
            for address in spare { UnsafeMutableRawPointer(bitPattern: address)?.deallocate() }
        }
    }

    /// A buffer of `Layout.pageSize` bytes, 16-byte aligned, its content undefined.
    @inline(__always)
    func take() -> UnsafeMutableRawPointer {
        if let address = spare.withLock({ $0.popLast() }), let buffer = UnsafeMutableRawPointer(bitPattern: address) {
            return buffer
        }
        return UnsafeMutableRawPointer.allocate(byteCount: Layout.pageSize, alignment: 16)
    }

    /// Takes back buffers `take()` gave out (the caller no longer uses them).
    func give(_ buffers: [UnsafeMutableRawPointer]) {
        guard !buffers.isEmpty else { return }
        let kept = spare.withLock { spare in
            let room = max(0, Self.kept - spare.count)
            if spare.capacity < Self.kept { spare.reserveCapacity(Self.kept) }
            for buffer in buffers.prefix(room) { spare.append(UInt(bitPattern: buffer)) }
            return min(room, buffers.count)
        }
        for buffer in buffers.dropFirst(kept) { buffer.deallocate() }
    }

    /// Takes back one buffer `take()` gave out.
    func give(_ buffer: UnsafeMutableRawPointer) {
        let kept = spare.withLock { spare in
            guard spare.count < Self.kept else { return false }
            spare.append(UInt(bitPattern: buffer))
            return true
        }
        if !kept { buffer.deallocate() }
    }

    /// Buffers kept now (tests).
    var spareCount: Int { spare.withLock { $0.count } }
}

import Testing
@testable import TrellisStorage

/// Dirty-page buffers go back to a pool when their transaction's trees go, and the next
/// transactions take them from there instead of allocating (docs/STORAGE.md 13.2 item 5), up to
/// `PageBufferPool.kept` buffers; the rest are freed.
@Suite struct PageBufferPoolTests {
    @Test func buffersGivenBackAreTakenAgainUpToTheLimit() {
        let pool = PageBufferPool()
        let buffers = (0..<(PageBufferPool.kept + 10)).map { _ in pool.take() }
        #expect(pool.spareCount == 0)
        pool.give(buffers)
        #expect(pool.spareCount == PageBufferPool.kept)
        let again = pool.take()
        #expect(buffers.prefix(PageBufferPool.kept).contains(again))
        #expect(pool.spareCount == PageBufferPool.kept - 1)
        pool.give(again)
        pool.give(UnsafeMutableRawPointer.allocate(byteCount: Layout.pageSize, alignment: 16))
        #expect(pool.spareCount == PageBufferPool.kept)
    }
}

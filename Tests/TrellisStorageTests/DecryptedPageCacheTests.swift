import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// The decrypted-page cache's eviction (CLOCK, docs/STORAGE.md section 12): a full cache keeps
/// what was inserted last for at least a turn of the hand, so a working set smaller than the
/// bound stops missing after one pass even when other pages filled the cache first (issue 38:
/// encrypted column scans re-decrypted every chunk on every pass once the cache was full).
@Suite struct DecryptedPageCacheTests {
    /// Inserts `pages` pages of plaintext at `page` (checksum = page number), as the pager does.
    private static func insert(_ cache: DecryptedPageCache, page: UInt64, pages: Int = 1) {
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: pages * StorageLimits.pageSize, alignment: 16)
        _ = cache.insert(page: page, checksum: page, pages: pages, bytes: bytes)
    }

    /// Looks a page up, inserting it on a miss (a read); returns whether it was a hit.
    @discardableResult
    private static func read(_ cache: DecryptedPageCache, page: UInt64, pages: Int = 1) -> Bool {
        if cache.lookup(page: page, checksum: page, pages: pages) != nil { return true }
        insert(cache, page: page, pages: pages)
        return false
    }

    @Test func entriesInsertedIntoAFullCacheOutliveTheInsertsThatFollow() {
        let cache = DecryptedPageCache(capacity: 8)
        // Eight pages read twice: all cached and referenced.
        for page in UInt64(100)..<108 { Self.read(cache, page: page) }
        for page in UInt64(100)..<108 { #expect(Self.read(cache, page: page)) }
        // Three new pages, each evicting one: none of the three may be what goes.
        for page in UInt64(200)..<203 { Self.insert(cache, page: page) }
        for page in UInt64(200)..<203 {
            #expect(cache.lookup(page: page, checksum: page, pages: 1) != nil, "page \(page) was evicted")
        }
        #expect(cache.status.cachedPages == 8)
    }

    @Test func aWorkingSetSmallerThanTheBoundStopsMissingAfterOnePass() {
        let cache = DecryptedPageCache(capacity: 64)
        // Another workload filled the cache with single pages it read twice.
        for page in UInt64(1000)..<1064 { Self.read(cache, page: page) }
        for page in UInt64(1000)..<1064 { Self.read(cache, page: page) }
        // A scan of 12 overflow runs of 4 pages (48 pages, under the bound of 64), three passes.
        let runs = (0..<12).map { UInt64(10 + $0 * 4) }
        var missesPerPass: [Int] = []
        for _ in 0..<3 {
            missesPerPass.append(runs.filter { !Self.read(cache, page: $0, pages: 4) }.count)
        }
        #expect(missesPerPass == [12, 0, 0])
        #expect(cache.status.cachedPages <= 64)
        #expect(cache.status.misses == 64 + 12)
    }

    @Test func aWorkingSetLargerThanTheBoundStaysWithinIt() {
        let cache = DecryptedPageCache(capacity: 32)
        var random = SplitMix64(seed: 3_837)
        for _ in 0..<5_000 {
            let page = UInt64(3 + random.below(200)) * 4
            // Every third page number starts a run of three pages.
            Self.read(cache, page: page, pages: page % 3 == 0 ? 3 : 1)
            #expect(cache.status.cachedPages <= 32)
        }
        cache.removeAll()
        #expect(cache.status.cachedPages == 0)
        #expect(cache.status.retiredPages > 0)
    }
}

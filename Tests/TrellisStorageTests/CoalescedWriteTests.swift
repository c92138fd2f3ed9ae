import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// A commit writes the pages that follow one another in the file as one write
/// (`Pager.writeCoalesced`, docs/STORAGE.md section 4 step 2): fewer system calls per commit, the
/// same bytes in the same places.
@Suite struct CoalescedWriteTests {
    /// The writes a recorded stretch of the file made to pages from 3 on (not the meta slots), in
    /// file order: offset and length.
    private static func pageWrites(_ file: MemoryFile) -> [(offset: UInt64, count: Int)] {
        file.events.compactMap { event -> (offset: UInt64, count: Int)? in
            guard case .write(let offset, let bytes) = event, offset >= UInt64(Layout.firstDataPage) * 4096 else { return nil }
            return (offset, bytes.count)
        }.sorted { $0.offset < $1.offset }
    }

    @Test func pagesSideBySideInTheFileAreWrittenAsOneWriteUpToTheLimit() throws {
        let file = MemoryFile()
        let environment = try StorageEnvironment(file: file)
        var random = SplitMix64(seed: 41)
        var model: SeededTrees.Model = [:]
        try environment.write { try $0.createTree("t") }
        file.isRecording = true
        // A commit of ~2 MiB into a new file: its pages are new, at the end of the file, side by
        // side (with overflow runs among them), more than the largest coalesced write.
        try environment.write { write in
            for index in 0..<6_000 {
                let value = random.bytes(random.chance(2) ? 6_000 : random.below(300))
                let key = Array("key \(index)".utf8)
                try write.put("t", key: key, value: value)
                model[key] = value
            }
        }
        file.isRecording = false
        let writes = Self.pageWrites(file)
        let bytes = writes.reduce(0) { $0 + $1.count }
        #expect(bytes > Pager.largestCoalescedWrite, "the commit wrote \(bytes) bytes of pages")
        // Each write that the next one continues is as long as a write may be.
        for (write, next) in zip(writes, writes.dropFirst()) where write.offset + UInt64(write.count) == next.offset {
            #expect(write.count > Pager.largestCoalescedWrite - 4 * Layout.pageSize,
                    "a \(write.count)-byte write at \(write.offset) is followed by the next page's write")
        }
        #expect(writes.count <= bytes / (Pager.largestCoalescedWrite / 2) + 2, "\(writes.count) writes for \(bytes) bytes")
        // No page was written twice, and the file reads back whole.
        for (write, next) in zip(writes, writes.dropFirst()) { #expect(write.offset + UInt64(write.count) <= next.offset) }
        let reopened = try StorageEnvironment(file: MemoryFile(contents: file.contents))
        #expect(try SeededTrees.contents(reopened, tree: "t") == model)
        _ = try reopened.check()
    }
}

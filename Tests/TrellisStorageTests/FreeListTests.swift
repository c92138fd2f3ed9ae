import Foundation
import Testing
@testable import TrellisStorage

/// The free list kept in the meta slot when it is short (docs/STORAGE.md, 2.2 and 2.9): a small
/// durable commit writes its changed tree pages and the slot, and no free-list page.
@Suite struct FreeListTests {
    private static func key(_ index: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(index).bigEndian) { Array($0) } }

    /// The pages each commit wrote (between syncs), from a recording file.
    private static func pagesPerCommit(_ events: [MemoryFile.Event]) -> [[UInt64]] {
        var commits: [[UInt64]] = []
        var current: [UInt64] = []
        for event in events {
            switch event {
            case .write(let offset, let bytes):
                for page in 0..<(bytes.count / StorageLimits.pageSize) { current.append(offset / UInt64(StorageLimits.pageSize) + UInt64(page)) }
            case .sync:
                commits.append(current)
                current = []
            default:
                break
            }
        }
        return commits
    }

    @Test func aSmallDurableCommitWritesItsTreePagesAndTheMetaSlotOnly() throws {
        // Given a tree of depth 2 in a file that reached its steady state
        let file = MemoryFile()
        let environment = try StorageEnvironment(file: file)
        try environment.write { write in
            try write.createTree("a")
            for index in 0..<600 { try write.put("a", key: Self.key(index * 2), value: [UInt8](repeating: 1, count: 100)) }
        }
        for index in 0..<20 { try environment.write { try $0.put("a", key: Self.key(index * 2 + 1), value: [2]) } }
        #expect(try environment.read { try $0.info("a")?.depth } == 2)

        // When 30 commits each change the value of one key (same size: no leaf splits)
        file.isRecording = true
        for index in 0..<30 {
            try environment.write { try $0.put("a", key: Self.key(index * 40), value: [UInt8](repeating: 3, count: 100)) }
        }
        file.isRecording = false

        // Then each wrote 4 pages: the leaf, the branch, the catalog leaf and its meta slot, and
        // no free-list page (kind 4); the free list lives in the slot.
        let commits = Self.pagesPerCommit(file.events)
        #expect(commits.count == 30)
        let contents = file.contents
        for pages in commits {
            #expect(pages.count == 4, "pages \(pages)")
            #expect(pages.filter { $0 <= 2 }.count == 1)
            for page in pages where page > 2 {
                #expect(contents[Int(page) * StorageLimits.pageSize] != 4, "page \(page) is a free-list page")
            }
        }
        let meta = try environment.currentMeta()
        #expect(meta.freeList == nil)
        #expect(!meta.inlineFree.isEmpty && UInt64(meta.inlineFree.count) == meta.freeListCount)
        _ = try environment.check()
    }

    @Test func aLongFreeListGoesToTheChainAndBackToTheSlotAsItShrinks() throws {
        let file = MemoryFile()
        let environment = try StorageEnvironment(file: file)
        try environment.write { write in
            try write.createTree("a")
            for index in 0..<3000 { try write.put("a", key: Self.key(index), value: [UInt8](repeating: 5, count: 200)) }
        }
        // Deleting most keys frees far more pages than a slot holds: a chain.
        try environment.write { _ = try $0.deleteRange("a", from: Self.key(100), to: nil) }
        let long = try environment.currentMeta()
        #expect(long.freeList != nil)
        #expect(long.inlineFree.isEmpty)
        #expect(long.freeListCount > UInt64(MetaSlot.inlineCapacity))
        #expect(try environment.check().freePages == Int(long.freeListCount))

        // Refilling reuses them until the free list fits the slot again.
        try environment.write { write in
            for index in 100..<2800 { try write.put("a", key: Self.key(index), value: [UInt8](repeating: 6, count: 200)) }
        }
        try environment.write { try $0.put("a", key: Self.key(0), value: [7]) }
        let short = try environment.currentMeta()
        #expect(short.freeList == nil)
        #expect(UInt64(short.inlineFree.count) == short.freeListCount)
        _ = try environment.check()

        // And the file reopens at that commit with the same contents.
        let reopened = try StorageEnvironment(file: MemoryFile(contents: file.contents))
        #expect(try reopened.currentMeta().inlineFree == short.inlineFree)
        #expect(try reopened.read { try $0.info("a")?.count } == 2800)
        _ = try reopened.check()
    }
}

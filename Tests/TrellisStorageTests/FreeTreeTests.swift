import Foundation
import Testing
@testable import TrellisStorage

/// The free list is a tree edited at each commit (docs/STORAGE.md, 2.9): a commit's free-list
/// work is proportional to what it changed, and a snapshot held across many commits makes the
/// file grow by what those commits wrote, not more. Before, every commit rewrote the whole
/// free-list chain and freed the old chain's pages, which the held snapshot pinned too, so the
/// list grew faster than linearly (Trellis's core tests holding an observer's snapshot filled
/// the disk).
@Suite struct FreeTreeTests {
    private static func withEnvironment(_ label: String, syncOnCommit: Bool = true,
                                        _ body: (StorageEnvironment, String) throws -> Void) throws {
        let directory = temporaryDirectory(label)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = StorageEnvironment.Options()
        options.syncOnCommit = syncOnCommit
        let path = directory + "/free.db"
        let environment = try StorageEnvironment(path: path, options: options)
        defer { environment.close() }
        try body(environment, path)
    }

    /// Pages of the current commit's free tree.
    private static func freeTreePages(_ environment: StorageEnvironment) throws -> Int {
        let meta = try environment.currentMeta()
        let snapshot = try Snapshot(meta: meta, pager: environment.pager)
        func count(_ reference: PageReference?) throws -> Int {
            guard let reference else { return 0 }
            let view = try snapshot.treePage(reference)
            if view.isLeaf { return 1 }
            return try (0..<view.count).reduce(1) { $0 + (try count(try view.child(at: $1))) }
        }
        return try environment.pager.withUse { try count(meta.freeList) }
    }

    /// One commit changing one small value in each of a few trees.
    private static func commitOne(_ environment: StorageEnvironment, _ round: Int) throws {
        try environment.write { write in
            for tree in ["a", "b"] {
                try write.createTree(tree)
                try write.put(tree, key: Array("key\(round % 50)".utf8), value: Array(repeating: UInt8(round % 251), count: 40))
            }
        }
    }

    private static func heldSnapshotStaysBounded(syncOnCommit: Bool) throws {
        try withEnvironment("free-held-\(syncOnCommit)", syncOnCommit: syncOnCommit) { environment, _ in
            for round in 0..<200 { try commitOne(environment, round) }
            let held = try environment.beginRead()
            let start = try environment.status().pageCount
            let commits = 3_000
            var previous = start
            for round in 0..<commits {
                try commitOne(environment, round)
                if round % 250 == 249 {
                    // Each commit copies 5 pages (two leaves, the catalog, the free tree's path);
                    // the chain grew by itself and made the 250 commits write ever more.
                    let now = try environment.status().pageCount
                    #expect(now - previous <= 250 * 8, "commits \(round - 249)...\(round) grew the file by \(now - previous) pages")
                    if now - previous > 250 * 8 { return }
                    previous = now
                }
            }
            let grown = try environment.status().pageCount - start
            #expect(grown <= UInt64(commits * 8), "\(commits) commits under a held snapshot grew the file by \(grown) pages")
            // Every freed page is recorded once, in a tree of ~100 records a page.
            let report = try environment.check()
            let treePages = try freeTreePages(environment)
            #expect(treePages <= report.freePages / 100 + 4, "\(treePages) free-tree pages for \(report.freePages) free pages")
            _ = try held.withValue("a", key: Array("key0".utf8)) { #expect($0 != nil) }
            held.end()
            // Released: the pages are reused and the file stops growing.
            let released = try environment.status().pageCount
            for round in 0..<2_000 { try commitOne(environment, round) }
            let after = try environment.status().pageCount
            #expect(after <= released + 16, "after the snapshot ended, 2,000 commits grew the file from \(released) to \(after) pages")
            _ = try environment.check()
        }
    }

    @Test func aSnapshotHeldAcrossThousandsOfDurableCommitsGrowsTheFileByWhatTheyWroteOnly() throws {
        try Self.heldSnapshotStaysBounded(syncOnCommit: true)
    }

    @Test func aSnapshotHeldAcrossThousandsOfRelaxedCommitsGrowsTheFileByWhatTheyWroteOnly() throws {
        try Self.heldSnapshotStaysBounded(syncOnCommit: false)
    }

    /// A commit with nothing pinned reuses what the one before freed: the file stays put and the
    /// free tree stays a page or two.
    @Test func commitsWithoutReadersKeepTheFileAndTheFreeTreeSmall() throws {
        try Self.withEnvironment("free-steady") { environment, _ in
            for round in 0..<200 { try Self.commitOne(environment, round) }
            let settled = try environment.status().pageCount
            for round in 0..<2_000 { try Self.commitOne(environment, round) }
            #expect(try environment.status().pageCount <= settled + 8)
            #expect(try Self.freeTreePages(environment) <= 2)
            _ = try environment.check()
        }
    }

    /// Dropping a big tree frees thousands of pages in one commit (many records); they are all
    /// reused by later commits, and compaction then gives the space back.
    @Test func aCommitFreeingThousandsOfPagesRecordsThemAllAndLaterCommitsReuseThem() throws {
        try Self.withEnvironment("free-drop") { environment, _ in
            try environment.write { write in
                try write.createTree("big", order: .integer)
                for key in 0..<20_000 {
                    try write.put("big", key: withUnsafeBytes(of: UInt64(key).bigEndian) { Array($0) },
                                  value: Array(repeating: UInt8(key % 256), count: 100))
                }
            }
            let full = try environment.status().pageCount
            try environment.write { _ = try $0.dropTree("big") }
            let afterDrop = try environment.check()
            #expect(afterDrop.freePages > 500)
            // Refilling takes the freed pages, not new ones.
            try environment.write { write in
                try write.createTree("again", order: .integer)
                for key in 0..<20_000 {
                    try write.put("again", key: withUnsafeBytes(of: UInt64(key).bigEndian) { Array($0) },
                                  value: Array(repeating: 7, count: 100))
                }
            }
            #expect(try environment.status().pageCount <= full + 16)
            _ = try environment.check()
            try environment.write { _ = try $0.dropTree("again") }
            let report = try environment.compact()
            #expect(report.bytesAfter < report.bytesBefore / 4)
            _ = try environment.check()
        }
    }

    /// Files of format versions 1 and 2 (the free-list chain) are refused with a message that
    /// says what to do; they are left as they were.
    @Test func aFileOfTheChainFreeListFormatIsRefusedWithAClearError() throws {
        let directory = temporaryDirectory("free-old-format")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/old.db"
        try StorageEnvironment(path: path).close()
        var header = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).prefix(Layout.pageSize))
        header.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            base.storeLE(UInt32(1), at: 8)
            base.storeLE(Checksum.xxh64(UnsafeRawBufferPointer(start: base, count: 16)), at: 16)
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.write(contentsOf: header)
        try handle.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect {
            _ = try StorageEnvironment(path: path)
        } throws: { error in
            guard let error = error as? StorageError, case .incompatibleFile = error.code else { return false }
            return "\(error)".contains("format version 1") && "\(error)".contains("writeCopy")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }
}

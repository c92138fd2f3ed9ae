import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// Format versions 9 and 10 (issue 37, W6commit; docs/STORAGE.md 2.10): a commit lists the pages
/// it freed in its meta slot, and the next commit reuses them or records them in the free tree,
/// so a small commit with no reader behind it edits no free-tree page. Files of older versions
/// keep recording every freed page in the free tree.
@Suite struct FreedInSlotTests {
    /// One small commit: a value changed in each of two trees.
    private static func commitOne(_ environment: StorageEnvironment, _ round: Int) throws {
        try environment.write { write in
            for tree in ["a", "b"] {
                try write.createTree(tree)
                try write.put(tree, key: Array("key\(round % 300)".utf8), value: Array(repeating: UInt8(round % 251), count: 60))
            }
        }
    }

    private static func environment(_ file: MemoryFile, syncOnCommit: Bool = true) throws -> StorageEnvironment {
        var options = StorageEnvironment.Options()
        options.syncOnCommit = syncOnCommit
        return try StorageEnvironment(file: file, options: options)
    }

    /// The free pages a slot's commit has, by where they are kept.
    private static func freePages(_ environment: StorageEnvironment) throws -> (records: Int, spares: Int, listed: Int) {
        try environment.read { read in
            let meta = read.snapshot.meta
            let records = try environment.pager.withUse { try FreeList.records(read.snapshot) }
            return (records.reduce(0) { $0 + $1.value.pages.count }, meta.spares.count, meta.freed.count)
        }
    }

    /// Small commits of a new file, durable or relaxed: each lists what it freed in its slot, the
    /// free tree's root never changes, the file stays put, and `check()` counts the listed pages.
    @Test(arguments: [true, false])
    func smallCommitsListWhatTheyFreedAndLeaveTheFreeTreeAlone(syncOnCommit: Bool) throws {
        let file = MemoryFile()
        let environment = try Self.environment(file, syncOnCommit: syncOnCommit)
        defer { environment.close() }
        #expect(environment.listsFreedPagesInSlot && file.contents[8] == 9 && FileHeader.version == 9)
        for round in 0..<300 { try Self.commitOne(environment, round) }
        let settled = try environment.currentMeta()
        for round in 300..<600 {
            try Self.commitOne(environment, round)
            let meta = try environment.currentMeta()
            #expect(meta.freed.count >= 4, "commit \(meta.txnID) listed \(meta.freed.count) pages")
            #expect(meta.freeList == settled.freeList, "commit \(meta.txnID) rewrote the free tree")
            if meta.freeList != settled.freeList || meta.freed.count < 4 { return }
        }
        let meta = try environment.currentMeta()
        #expect(meta.pageCount <= settled.pageCount + 8)
        let report = try environment.check()
        let free = try Self.freePages(environment)
        #expect(report.freePages == free.records + free.spares + free.listed && free.listed == meta.freed.count)
        #expect(report.freePages + report.pagesInUse + Int(Layout.firstDataPage) == Int(report.pageCount))
        // Reopened (recovery walks the commit; the list is checked by the slot's checksum).
        environment.close()
        let reopened = try Self.environment(file, syncOnCommit: syncOnCommit)
        defer { reopened.close() }
        #expect(try reopened.check().freePages == report.freePages)
        #expect(try reopened.read { try $0.get("a", key: Array("key299".utf8)) } == Array(repeating: UInt8(599 % 251), count: 60))
    }

    /// A reader holding a snapshot: the pages the next commit freed (and listed) are reachable
    /// from it, so the commit after records them in the free tree under the listing commit's
    /// number, and no later commit reuses them until the reader ends.
    @Test(arguments: [true, false])
    func aReaderHoldingASnapshotKeepsThePagesTheSlotsListed(syncOnCommit: Bool) throws {
        let file = MemoryFile()
        let environment = try Self.environment(file, syncOnCommit: syncOnCommit)
        defer { environment.close() }
        for round in 0..<300 { try Self.commitOne(environment, round) }
        let held = try environment.beginRead()
        let heldValues = try (0..<300).map { try held.get("a", key: Array("key\($0)".utf8)) }
        try Self.commitOne(environment, 1_000)
        let listing = try environment.currentMeta()
        #expect(listing.freed.count >= 4)
        try Self.commitOne(environment, 1_001)
        // The listed pages are now a record of the free tree, freedBy = the listing commit.
        let records = try environment.read { read in try environment.pager.withUse { try FreeList.records(read.snapshot) } }
        let moved = records.filter { $0.key.freedBy == listing.txnID }.flatMap(\.value.pages)
        #expect(Set(moved) == Set(listing.freed.own + listing.freed.others), "\(records.map(\.key))")
        let start = try environment.status().pageCount
        for round in 0..<600 { try Self.commitOne(environment, 2_000 + round) }
        // Nothing the reader sees changed, and its pages were never reused.
        let after = try (0..<300).map { try held.get("a", key: Array("key\($0)".utf8)) }
        #expect(after == heldValues)
        #expect(try environment.status().pageCount > start, "600 commits under a held snapshot reused its pages")
        _ = try environment.check()
        held.end()
        // Released: the recorded pages are reused and the file stops growing.
        for round in 0..<300 { try Self.commitOne(environment, 3_000 + round) }
        let released = try environment.status().pageCount
        for round in 0..<600 { try Self.commitOne(environment, 4_000 + round) }
        #expect(try environment.status().pageCount <= released + 8)
        _ = try environment.check()
    }

    /// Small commits (some under a held snapshot, relaxed ones with syncs between) cut by a power
    /// failure at every write and sync: each image opens at a legal commit with its contents,
    /// passes `check()` and takes a commit (PowerLossTests' checks).
    @Test(arguments: [(UInt64(91), true), (92, false)])
    func aCrashBetweenSmallCommitsOpensAtALegalCommit(seed: UInt64, durable: Bool) throws {
        var random = SplitMix64(seed: seed)
        let workload = try RecordedWorkload(durable: durable)
        var held: ReadTransaction?
        var listed = 0
        for round in 0..<60 {
            try workload.commit { write in
                for _ in 0..<(1 + random.below(3)) {
                    let tree = "t\(random.below(2))"
                    if workload.model[tree] == nil {
                        try write.createTree(tree)
                        workload.model[tree] = [:]
                    }
                    let key = Array("k\(random.below(120))".utf8)
                    let value = random.bytes(20 + random.below(400))
                    try write.put(tree, key: key, value: value)
                    workload.model[tree]?[key] = value
                }
            }
            if try workload.environment.currentMeta().freed.count > 0 { listed += 1 }
            if round % 17 == 5 { held = try workload.environment.beginRead() }
            if round % 17 == 9 { held?.end() }
            if !durable && random.chance(10) { try workload.environment.sync() }
        }
        held?.end()
        #expect(listed > 30, "\(listed) of 60 commits listed freed pages in their slot")
        let (file, models, base) = workload.finish()
        try PowerLossTests.crashEverywhere(file: file, models: models, base: base, seed: seed, variants: 3,
                                           label: "FreedInSlotTests seed \(seed) durable \(durable)")
    }

    /// A file of version 7 (made by an earlier build) opens and takes commits by its own rule:
    /// its header keeps version 7 and no slot lists a freed page, so every slot is one a build
    /// that knows only version 7 reads (spare count at most 256, the spares checksum over the
    /// spares alone); a new file of this build lists them.
    @Test func aVersionSevenFileIsWrittenByItsOwnRule() throws {
        let made = MemoryFile()
        try Self.environment(made).close()
        var image = made.contents
        image[8] = 7
        let checksum = image.withUnsafeBytes { Checksum.xxh64(UnsafeRawBufferPointer(rebasing: $0[0..<16])) }
        for index in 0..<8 { image[16 + index] = UInt8(truncatingIfNeeded: checksum >> (8 * UInt64(index))) }
        let file = MemoryFile(contents: image)
        do {
            let environment = try Self.environment(file)
            #expect(!environment.listsFreedPagesInSlot)
            for round in 0..<400 {
                try Self.commitOne(environment, round)
                if round % 50 == 0 { _ = try environment.check() }
                let meta = try environment.currentMeta()
                #expect(meta.freed.isEmpty)
                if !meta.freed.isEmpty { return }
            }
            let report = try environment.check()
            #expect(report.freePages > 0)
            environment.close()
        }
        let written = file.contents
        #expect(written[8] == 7, "the header keeps its version")
        for page in Layout.metaPages {
            let start = Int(page) * Layout.pageSize
            let word = written[(start + 88)..<(start + 96)].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            #expect(word <= 256, "slot \(page) has counts \(String(word, radix: 16))")
            let spares = written[(start + 112)..<(start + 112 + 8 * Int(min(word, 256)))]
            let sum = written[(start + 96)..<(start + 104)].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            #expect(spares.withUnsafeBytes { Checksum.xxh64($0) } == sum)
        }
        let reopened = try Self.environment(MemoryFile(contents: written))
        defer { reopened.close() }
        _ = try reopened.check()
        #expect(try reopened.read { try $0.get("b", key: Array("key99".utf8)) } == Array(repeating: UInt8(399 % 251), count: 60))
    }

    /// A commit that frees more pages than a slot lists (240) records them all in the free
    /// tree, and the next commits reuse them from there.
    @Test func aCommitFreeingMoreThanTheSlotHoldsRecordsThemInTheFreeTree() throws {
        let file = MemoryFile()
        let environment = try Self.environment(file)
        defer { environment.close() }
        let keys = (0..<700).map { withUnsafeBytes(of: UInt64($0).bigEndian) { Array($0) } }
        try environment.write { write in
            try write.createTree("big")
            for key in keys { try write.put("big", key: key, value: Array(repeating: 1, count: 1500)) }
        }
        let before = try environment.currentMeta()
        // Every leaf (two values each) copied: ~350 pages freed.
        try environment.write { write in
            for key in keys { try write.put("big", key: key, value: Array(repeating: 2, count: 1500)) }
        }
        let after = try environment.currentMeta()
        #expect(after.freed.isEmpty, "\(after.freed.count) pages listed")
        #expect(after.freeListCount >= before.freeListCount + UInt64(MetaSlot.freedCapacity) + 1)
        _ = try environment.check()
        // A commit freeing a few pages lists them again; refilling reuses the recorded pages.
        try environment.write { try $0.put("big", key: keys[0], value: [3]) }
        #expect(try environment.currentMeta().freed.count > 0)
        let full = try environment.status().pageCount
        try environment.write { write in
            for key in keys { try write.put("big", key: key, value: Array(repeating: 4, count: 1500)) }
        }
        #expect(try environment.status().pageCount <= full + 8)
        _ = try environment.check()
    }

    /// Compaction of a file whose commits listed their freed pages: the listed pages move or are
    /// cut off like any free page, contents stay, and small commits list their pages after it.
    @Test func compactionTakesTheListedPagesLikeRecords() throws {
        let file = MemoryFile()
        let environment = try Self.environment(file, syncOnCommit: false)
        defer { environment.close() }
        let keys = (0..<3_000).map { withUnsafeBytes(of: UInt64($0).bigEndian) { Array($0) } }
        try environment.write { write in
            try write.createTree("big", order: .bytes)
            for key in keys { try write.put("big", key: key, value: Array(repeating: 5, count: 300)) }
        }
        for round in 0..<100 { try Self.commitOne(environment, round) }
        try environment.write { write in
            for key in keys[100...] { try write.delete("big", key: key) }
        }
        for round in 100..<200 { try Self.commitOne(environment, round) }
        #expect(try environment.currentMeta().freed.count > 0)
        let report = try environment.compact()
        #expect(report.bytesAfter < report.bytesBefore / 3, "\(report)")
        let checked = try environment.check()
        #expect(checked.freePages <= 64, "\(checked)")
        #expect(try environment.read { try $0.get("big", key: keys[99]) } == Array(repeating: 5, count: 300))
        for round in 200..<300 { try Self.commitOne(environment, round) }
        #expect(try environment.currentMeta().freed.count > 0)
        _ = try environment.check()
        #expect(try environment.read { try $0.get("a", key: Array("key299".utf8)) } == Array(repeating: UInt8(299 % 251), count: 60))
    }
}
